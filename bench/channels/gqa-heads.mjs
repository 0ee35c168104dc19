// Bench: attention heads of a grouped-query-attention decoder as channel groups (issue 37 item 3), on
// the real SmolLM2-135M export (bench/models/smollm2.py full) and on the plain-op layout (kit/decoder-
// graphs.mjs, interleaved RoPE, KV cache, built with SmolLM2's 9 query heads over 3 KV heads):
//   1. the share of query heads in removable groups, on both layouts;
//   2. `sparsekit-wasm prune --channels F` (the CLI, default settings: magnitude scores) on the real model;
//   3. perplexity of dense and pruned on held-out text (windows of --seq-len tokens; the CLI's own
//      report judges on --eval-count windows of the same text);
//   4. speed in onnxruntime-node, one thread, dense and pruned runs interleaved (two warm-up runs each), one window per run.
//   node bench/channels/gqa-heads.mjs [--model bench/out/smollm2] [--channels 0.2] [--held GPL-3]
//        [--windows 8] [--seq-len 256] [--runs 7] [--out bench/out/smollm2-channels.onnx]
//        [--method wanda|sparsegpt --calib Apache-2.0 --calib-count 8] [--round-to N] [--scope layer|global]
//        [--report R.json] [--skip-prune]
//   --channels layers:K: whole blocks instead (ShortGPT), chosen on --calib (default Apache-2.0).
// (--method / --calib / --round-to go to the CLI as they are; calibration text is another file than
// the held-out text.)
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import ort from 'onnxruntime-node';
import { loadOnnx, resolveTextModel, textSamples, runSet, makeOrtRunner, fidelity, findChannelGroups, OnnxModel } from '#onnx-internal';
import { gqaDecoder } from '../../kit/decoder-graphs.mjs';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const channels = opt('--channels', '0.2');
const held = opt('--held', '/usr/share/common-licenses/GPL-3');
const windows = Number(opt('--windows', 8)), seqLen = Number(opt('--seq-len', 256)), runs = Number(opt('--runs', 7));
const outFile = opt('--out', 'bench/out/smollm2-channels.onnx');
const method = opt('--method'), calibText = opt('--calib'), calibCount = opt('--calib-count', '8'), roundTo = opt('--round-to');
const scope = opt('--scope'), reportFile = opt('--report');
const cli = path.resolve('pkg/bin/sparsekit-wasm.js');

const files = await resolveTextModel(folder);
const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
const { num_attention_heads: H, num_key_value_heads: KV, num_hidden_layers: L } = config;

/** Query heads in removable groups: a group holding a q projection has units of H / KV query heads. */
function headShare(model, isQuery, layers, heads) {
  const { groups } = findChannelGroups(model);
  let removable = 0;
  for (const g of groups) if (g.prunable && g.producers.some(isQuery)) removable += g.channels * (heads / KV);
  return { removable, total: layers * heads };
}

const dense = await loadOnnx(files.model);
const qNames = new Set(dense.graph.node.filter((n) => /self_attn\/q_proj\/MatMul$/.test(n.name)).map((n) => n.name));
const torchShare = headShare(dense, (p) => qNames.has(p), L, H);
console.log(`torch export: ${torchShare.removable} of ${torchShare.total} query heads in removable groups (${(100 * torchShare.removable / torchShare.total).toFixed(1)}%)`);
const plain = OnnxModel.parse(gqaDecoder({ heads: H, kvHeads: KV, headDim: 8, dim: 64, ffn: 96, tokens: 6, past: 4 }));
const plainShare = headShare(plain, (p) => p === 'matmul_0', 1, H);
console.log(`plain-op block (interleaved RoPE, KV cache): ${plainShare.removable} of ${plainShare.total} query heads in removable groups`);

// The CLI, as a user runs it (it takes text as .txt / .jsonl: a license file gets a .txt copy).
const asTxt = (f) => {
  if (/\.(txt|jsonl)$/.test(f)) return f;
  const copy = path.join(path.dirname(outFile), `${path.basename(f)}.txt`);
  fs.copyFileSync(f, copy);
  return copy;
};
const heldTxt = asTxt(held);
const calibrated = method || channels.startsWith('layers:');
const extra = [...(method ? ['--method', method] : []), ...(calibrated ? ['--calib', asTxt(calibText ?? '/usr/share/common-licenses/Apache-2.0'), '--calib-count', calibCount] : []),
  ...(roundTo ? ['--round-to', roundTo] : []), ...(scope ? ['--scope', scope] : []), ...(reportFile ? ['--report', reportFile] : [])];
const t0 = performance.now();
// --skip-prune: time and judge a model an earlier run wrote to --out.
const r = args.includes('--skip-prune') ? { status: 0, stdout: '(prune skipped: --out from an earlier run)' } : spawnSync(process.execPath, [cli, 'prune', files.model, '-o', outFile, '--channels', channels, '--tokenizer', files.tokenizer,
  '--eval', heldTxt, '--eval-count', '2', '--seq-len', String(seqLen), ...extra], { encoding: 'utf8', maxBuffer: 1 << 26 });
if (r.status !== 0) { console.error(r.stdout, r.stderr); process.exit(1); }
console.log(`prune --channels ${channels} ${extra.join(' ')}: ${((performance.now() - t0) / 1000).toFixed(0)} s, ${(fs.statSync(files.model).size / 2 ** 20).toFixed(0)} -> ${(fs.statSync(outFile).size / 2 ** 20).toFixed(0)} MiB`);
console.log(r.stdout.split('\n').filter((l) => /fidelity|perplexity|groups|removed|params/i.test(l)).slice(0, 12).join('\n'));

// Perplexity on held-out windows.
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const set = textSamples({ text: fs.readFileSync(held, 'utf8'), tokenizer, seqLen, inputs: dense.inputs, outputs: dense.outputs, limit: windows });
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });
const outDense = await runSet(runner, dense, set.samples);
const outPruned = await runSet(runner, await loadOnnx(outFile), set.samples);
const m = fidelity(outDense, outPruned, { inputs: set.samples, vocabSize: set.vocabSize }).outputs[0].metrics;
console.log(`perplexity on ${set.samples.length} x ${seqLen} tokens of ${path.basename(held)}: dense ${m.perplexityOriginal.toFixed(2)}, pruned ${m.perplexityPruned.toFixed(2)} (x${m.perplexityRatio.toFixed(2)}), top-1 agreement ${(100 * m.top1Agreement).toFixed(1)}%`);

// Speed: one thread, interleaved.
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 };
const sessions = [await ort.InferenceSession.create(files.model, opts), await ort.InferenceSession.create(outFile, opts)];
const feeds = Object.fromEntries(Object.entries(set.samples[0].feeds).map(([k, t]) => [k, new ort.Tensor(t.type, t.data, t.dims)]));
for (const s of sessions) { await s.run(feeds); await s.run(feeds); }
const times = [[], []];
for (let k = 0; k < runs; k++) {
  for (const i of k % 2 ? [1, 0] : [0, 1]) {
    const t = performance.now();
    await sessions[i].run(feeds);
    times[i].push(performance.now() - t);
  }
}
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const [td, tp] = times.map(median);
console.log(`onnxruntime-node, 1 thread, 1 x ${seqLen} tokens, ${runs} interleaved runs: dense ${td.toFixed(0)} ms, pruned ${tp.toFixed(0)} ms (median), x${(td / tp).toFixed(2)}`);
