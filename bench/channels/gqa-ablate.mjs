// Bench: which part of `--channels F` costs a grouped-query-attention decoder its perplexity — the KV
// groups (a KV head with its query heads) or the SwiGLU neurons — on the real SmolLM2-135M export,
// magnitude scores (the module's removeChannels, filtered by group kind), perplexity on held-out text.
//   node bench/channels/gqa-ablate.mjs [--model bench/out/smollm2] [--channels 0.2] [--held GPL-3] [--windows 4] [--seq-len 256]
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, resolveTextModel, textSamples, runSet, makeOrtRunner, fidelity, findChannelGroups, removeChannels, planChannels, OnnxModel } from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const fraction = Number(opt('--channels', 0.2));
const held = opt('--held', '/usr/share/common-licenses/GPL-3');
const windows = Number(opt('--windows', 4)), seqLen = Number(opt('--seq-len', 256));

const files = await resolveTextModel(folder);
const dense = await loadOnnx(files.model);
const bytes = dense.encode();
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const set = textSamples({ text: fs.readFileSync(held, 'utf8'), tokenizer, seqLen, inputs: dense.inputs, outputs: dense.outputs, limit: windows });
const runner = makeOrtRunner(ort, { intraOpNumThreads: 2, logSeverityLevel: 3 });
const ref = await runSet(runner, bytes, set.samples);
const analysis = findChannelGroups(dense);
const qNames = new Set(dense.graph.node.filter((n) => /self_attn\/q_proj\/MatMul$/.test(n.name)).map((n) => n.name));
const isAttention = (g) => g.producers.some((p) => qNames.has(p));
for (const roundTo of [8, 1]) {
  const keep = planChannels(dense, { fraction, roundTo }, analysis);
  const kept = (pick) => analysis.groups.filter((g) => g.prunable && pick(g)).map((g) => `${keep.get(g.id)?.reduce((a, b) => a + b, 0)}/${g.channels}`);
  const att = kept(isAttention), ffn = kept((g) => !isAttention(g));
  console.log(`round-to ${roundTo}: kept per attention group ${[...new Set(att)].join(', ')}; per FFN group ${[...new Set(ffn)].join(', ')}`);
  for (const [name, filter] of [['KV groups only', isAttention], ['FFN neurons only', (g) => !isAttention(g)], ['both', () => true]]) {
    const m = OnnxModel.parse(bytes);
    const r = removeChannels(m, { fraction, roundTo, filter });
    if (!r.groups.removed.length) { console.log(`  ${name}: nothing removed`); continue; }
    const out = await runSet(runner, m.encode(), set.samples);
    const f = fidelity(ref, out, { inputs: set.samples, vocabSize: set.vocabSize }).outputs[0].metrics;
    console.log(`  ${name}: ${r.groups.removed.length} groups cut, params ${r.params.before} -> ${r.params.after}; perplexity ${f.perplexityOriginal.toFixed(2)} -> ${f.perplexityPruned.toFixed(2)} (x${f.perplexityRatio.toFixed(2)}), top-1 ${(100 * f.top1Agreement).toFixed(1)}%`);
  }
}
