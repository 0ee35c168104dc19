// Bench: calibrated channel removal of a grouped-query-attention decoder (issue 37 item 3) as one
// PruneJob through runJob (the path the CLI takes), with the options the CLI does not expose (the
// channel score): SmolLM2-135M `channels` at --fraction, judged by perplexity on held-out text that
// calibration never saw, with what was removed per layer (KV groups and query heads, SwiGLU neurons).
// One JSON line per run is appended to --log; the pruned model is written to --out for
// bench/text/lm-latency.mjs (speed, interleaved with the dense model).
//   node bench/channels/gqa-prune.mjs [--model bench/out/smollm2] [--fraction 0.2] [--method sparsegpt]
//        [--scope layer|global] [--score activations|fluctuation|weights] [--round-to 8] [--heads groups|query] [--recipe R.json]
//        [--calib FILE] [--calib-count 32] [--eval FILE] [--eval-count 16] [--seq-len 256] [--damp P]
//        [--threads 2] [--out bench/out/gqa2/model.onnx] [--log bench/out/gqa-prune.jsonl] [--refit K] [--centre false]
// --recipe: a channels recipe instead of --fraction (e.g. attention heads only: {"layers": {"/q_proj/": {"channels": 0.67}}},
// with "heads": "query" for query heads within their KV groups).
// --refit, --centre: the job's calibration.refit and calibration.centre (defaults: the package's; the row
// records what ran, from the report's options).
// --calib default: the machine's license texts other than the GPL family, as bench/text/lm-table.mjs
// (Apache-2.0, Artistic, LGPL-2.1, MPL-1.1, MPL-2.0, GFDL-1.3, CC0-1.0); --eval default: the GNU GPL v3.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, saveOnnx, resolveTextModel, textSamples, makeOrtRunner, runJob, OnnxModel } from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const LIC = '/usr/share/common-licenses';
const folder = opt('--model', 'bench/out/smollm2');
const fraction = Number(opt('--fraction', 0.2)), method = opt('--method', 'sparsegpt'), scope = opt('--scope', 'layer');
const heads = opt('--heads'), score = opt('--score'), roundTo = opt('--round-to') === undefined ? undefined : Number(opt('--round-to'));
const seqLen = Number(opt('--seq-len', 256)), calibCount = Number(opt('--calib-count', 32)), evalCount = Number(opt('--eval-count', 16));
const damp = opt('--damp') === undefined ? undefined : Number(opt('--damp'));
const threads = Number(opt('--threads', 2));
const refit = opt('--refit') === undefined ? {} : { refit: Number(opt('--refit')) };
const centre = opt('--centre') === undefined ? {} : { centre: opt('--centre') !== 'false' };
const out = opt('--out', 'bench/out/gqa2/model.onnx'), log = opt('--log', 'bench/out/gqa-prune.jsonl');
const calibText = opt('--calib') ? fs.readFileSync(opt('--calib'), 'utf8')
  : ['Apache-2.0', 'Artistic', 'LGPL-2.1', 'MPL-1.1', 'MPL-2.0', 'GFDL-1.3', 'CC0-1.0'].map((f) => fs.readFileSync(path.join(LIC, f), 'utf8')).join('\n\n');
const evalText = fs.readFileSync(opt('--eval', path.join(LIC, 'GPL-3')), 'utf8');

const files = await resolveTextModel(folder);
const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
const qPerKv = config.num_attention_heads / config.num_key_value_heads;
const model = await loadOnnx(files.model);
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const set = (text, limit) => textSamples({ text, tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit });
const calib = set(calibText, calibCount), held = set(evalText, evalCount);
if (calib.samples.length < calibCount) throw new Error(`the calibration text gives ${calib.samples.length} windows of ${seqLen} tokens, not ${calibCount}`);
console.log(`${path.basename(folder)}: ${calib.samples.length} calibration windows, ${held.samples.length} held-out windows of ${seqLen} tokens; load ${os.loadavg()[0].toFixed(1)}`);

const runner = makeOrtRunner(ort, { intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3 });
const mode = opt('--recipe') ? { kind: 'recipe', recipe: JSON.parse(fs.readFileSync(opt('--recipe'), 'utf8')) }
  : { kind: 'channels', fraction, scope, ...(roundTo === undefined ? {} : { roundTo }), ...(score ? { score } : {}), ...(heads ? { heads } : {}) };
const t0 = performance.now(), cpu0 = process.cpuUsage();
let last = 0;
const { model: pruned, report } = await runJob(model, {
  mode, method, calibration: { samples: calib.samples, ...(damp === undefined ? {} : { percDamp: damp }), ...refit, ...centre },
  eval: { samples: held.samples, kinds: { [model.outputs[0].name]: 'language-model' } },
}, {
  ort: runner,
  onProgress: (p) => { const t = performance.now(); if (t - last > 60e3) { last = t; console.log(`  ${((t - t0) / 1000).toFixed(0)} s: ${p.phase} ${p.done ?? ''}/${p.total ?? ''} ${p.layer ?? ''}`); } },
});
const cpu = process.cpuUsage(cpu0), wallS = (performance.now() - t0) / 1000;
fs.mkdirSync(path.dirname(out), { recursive: true });
await saveOnnx(pruned, out);

// What went, per decoder layer: KV groups (each with its query heads) and SwiGLU neurons.
const perLayer = new Map();
for (const g of report.prune.groups.removed) {
  const layer = Number(/layers\.(\d+)\//.exec(g.producers.join(' '))?.[1] ?? -1);
  const kind = g.producers.some((p) => /q_proj|k_proj|v_proj/.test(p)) ? 'heads' : g.producers.some((p) => /gate_proj|up_proj/.test(p)) ? 'neurons' : 'other';
  const e = perLayer.get(layer) ?? perLayer.set(layer, {}).get(layer);
  // heads 'query': the group's units are query heads (K/V heads kept); else KV groups with their query heads.
  const query = g.producers.every((p) => /q_proj/.test(p));
  e[kind] = kind !== 'heads' ? `${g.channelsAfter}/${g.channelsBefore}`
    : query ? `${g.channelsAfter}/${g.channelsBefore} q heads (all KV kept)` : `${g.channelsAfter}/${g.channelsBefore} KV (${g.channelsAfter * qPerKv} q heads)`;
}
const layers = [...perLayer.entries()].sort((a, b) => a[0] - b[0]).map(([l, e]) => ({ layer: l, ...e }));
const m = report.fidelity.outputs[0].metrics;
const row = {
  mode, method, calibration: calib.samples.length, heldOut: held.samples.length, seqLen, percDamp: damp ?? null,
  refit: report.prune.options?.refit ?? null, centre: report.prune.options?.centre ?? null,
  perplexityDense: m.perplexityOriginal, perplexity: m.perplexityPruned, ratio: m.perplexityRatio, top1: m.top1Agreement, kl: m.meanKL,
  params: report.prune.params, fileMiB: fs.statSync(out).size / 2 ** 20, denseMiB: fs.statSync(files.model).size / 2 ** 20,
  wallS, cpuS: (cpu.user + cpu.system) / 1e6, loadavg: os.loadavg()[0], out, layers,
};
fs.mkdirSync(path.dirname(log), { recursive: true });
fs.appendFileSync(log, JSON.stringify(row) + '\n');
for (const l of layers) console.log(`  layer ${l.layer}: heads ${l.heads ?? 'all'}, neurons ${l.neurons ?? 'all'}`);
console.log(`${JSON.stringify(mode)} ${method}: perplexity ${row.perplexityDense.toFixed(2)} -> ${row.perplexity.toFixed(2)} (x${row.ratio.toFixed(3)}), top-1 ${(100 * row.top1).toFixed(1)}%, KL ${row.kl.toFixed(3)}, ${row.denseMiB.toFixed(0)} -> ${row.fileMiB.toFixed(0)} MiB, ${wallS.toFixed(0)} s wall, ${row.cpuS.toFixed(0)} s CPU, load ${row.loadavg.toFixed(1)}`);
