// Bench: the anchors' table on a real decoder (issue 37): magnitude / Wanda / SparseGPT at 50%,
// 4:8 and 2:4 on SmolLM2-135M, each one PruneJob through runJob (the path the CLI takes), judged
// by perplexity on held-out text that calibration never saw. The head stays dense (the job's
// default for language models, as SparseGPT and Wanda leave it). One JSON line per run is appended
// to --out as it finishes, so a long table survives an interruption (--skip-done resumes).
//   node bench/text/lm-table.mjs [--model bench/out/smollm2] [--calib FILE] [--eval FILE]
//        [--seq-len 256] [--calib-count 32] [--eval-count 16] [--runs magnitude:0.5,wanda:2:4,wanda:0.5:owl,…]
//        [--damp P] [--refit K] [--threads 2] [--out bench/out/lm-table.jsonl] [--skip-done] [--table]
// --damp: SparseGPT's dampening (calibration.percDamp; default: the job's)
// --refit K: SparseGPT's refit steps (calibration.refit; default: the job's; 0: SparseGPT as published)
// --calib default: the machine's license texts other than the GPL family (Apache-2.0, Artistic,
// LGPL-2.1, MPL-1.1, MPL-2.0, GFDL-1.3, CC0-1.0) concatenated; --eval default: the GNU GPL v3; both
// cut by bench/lib/licence-windows.mjs, which bench/calib/lm-windows.mjs --table writes for Python.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, resolveTextModel, makeOrtRunner, runJob, OnnxModel } from '#onnx-internal';
import { licenceWindows } from '../lib/licence-windows.mjs';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const seqLen = Number(opt('--seq-len', 256)), calibCount = Number(opt('--calib-count', 32)), evalCount = Number(opt('--eval-count', 16));
const threads = Number(opt('--threads', 2));
const damp = opt('--damp') === undefined ? undefined : Number(opt('--damp'));
const refit = opt('--refit') === undefined ? undefined : Number(opt('--refit'));
const out = opt('--out', 'bench/out/lm-table.jsonl');
const runs = opt('--runs', 'magnitude:0.5,wanda:0.5,sparsegpt:0.5,magnitude:4:8,wanda:4:8,sparsegpt:4:8,magnitude:2:4,wanda:2:4,sparsegpt:2:4,wanda:0.5:owl,sparsegpt:0.5:owl').split(',');

// --table: no runs; the markdown table of the runs in --out so far.
if (args.includes('--table')) {
  const rows = fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const pattern = (r) => (r.allocation ? `${100 * Number(r.pattern.split(':')[0])}%, OWL (layers ${r.allocation.min.toFixed(2)}–${r.allocation.max.toFixed(2)})` : r.pattern.includes(':') ? r.pattern : `${100 * Number(r.pattern)}%`);
  console.log('| method | pattern | perplexity (dense ' + rows[0].perplexityDense.toFixed(2) + ') | ratio | next-token top-1 agreement | mean KL | CPU s | wall s (load) |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.method} | ${pattern(r)} | ${r.perplexity.toFixed(2)} | ×${r.ratio.toFixed(3)} | ${(100 * r.top1).toFixed(1)}% | ${r.kl.toFixed(3)} | ${r.cpuS.toFixed(0)} | ${r.wallS.toFixed(0)} (${r.loadavg.toFixed(1)}) |`);
  process.exit(0);
}
const files = await resolveTextModel(folder);
const bytes = (await loadOnnx(files.model)).encode();
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const base = OnnxModel.parse(bytes);
const { calib, held } = licenceWindows({ model: base, tokenizer, seqLen, calibCount, evalCount, calib: opt('--calib'), eval: opt('--eval') });
console.log(`${path.basename(folder)}: ${calib.samples.length} calibration windows, ${held.samples.length} held-out windows of ${seqLen} tokens; ${os.cpus().length} cores, onnxruntime ${threads} thread(s)`);
const done = new Set(args.includes('--skip-done') && fs.existsSync(out) ? fs.readFileSync(out, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).run) : []);
const runner = makeOrtRunner(ort, { intraOpNumThreads: threads, interOpNumThreads: 1, logSeverityLevel: 3 });

for (const run of runs) {
  if (done.has(run)) continue;
  const [method, ...rest] = run.split(':');
  // method:S (uniform), method:S:owl (OWL's per-layer ratios), method:N:M
  const mode = rest[1] === 'owl' ? { kind: 'sparsity', sparsity: Number(rest[0]), allocation: 'owl' }
    : rest.length === 2 ? { kind: 'nm', nm: rest.map(Number) } : { kind: 'sparsity', sparsity: Number(rest[0]) };
  const model = OnnxModel.parse(bytes);
  const t0 = performance.now(), cpu0 = process.cpuUsage();
  const { report } = await runJob(model, {
    mode, method, ...(method === 'magnitude' ? {} : { calibration: { samples: calib.samples, ...(damp === undefined ? {} : { percDamp: damp }), ...(refit === undefined ? {} : { refit }) } }),
    eval: { samples: held.samples, kinds: { [base.outputs[0].name]: 'language-model' } },
  }, { ort: runner });
  const cpu = process.cpuUsage(cpu0);
  const m = report.fidelity.outputs[0].metrics;
  const row = {
    run, method, pattern: rest.join(':'), seqLen, percDamp: damp ?? null, refit: refit ?? null, calibration: method === 'magnitude' ? 0 : calib.samples.length, heldOut: held.samples.length,
    perplexityDense: m.perplexityOriginal, perplexity: m.perplexityPruned, ratio: m.perplexityRatio, top1: m.top1Agreement, kl: m.meanKL,
    sparsity: report.prune.sparsity, allocation: report.allocation ? { min: Math.min(...report.allocation.map((a) => a.sparsity)), max: Math.max(...report.allocation.map((a) => a.sparsity)) } : null, keptDense: report.keptDense?.map((k) => k.name) ?? [],
    wallS: (performance.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6, pruneTime: report.prune.time ?? null, loadavg: os.loadavg()[0],
  };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.appendFileSync(out, JSON.stringify(row) + '\n');
  console.log(`${run}: perplexity ${row.perplexityDense.toFixed(2)} -> ${row.perplexity.toFixed(2)} (x${row.ratio.toFixed(3)}), top-1 ${(100 * row.top1).toFixed(1)}%, ${row.wallS.toFixed(0)} s wall, ${row.cpuS.toFixed(0)} s CPU, load ${row.loadavg.toFixed(1)}`);
}
