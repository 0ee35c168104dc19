// Bench: a decoder language model's perplexity on real held-out text, through the module's own path
// (text -> windows with the model's tokenizer -> onnxruntime-node -> the language-model fidelity
// kind), dense and after one-shot magnitude pruning; the windows' ids are written for the Python
// cross-check (bench/text/lm_perplexity.py computes the dense perplexity with torch on the same ids).
//   node bench/text/lm-perplexity.mjs [--model bench/out/smollm2] [--text FILE] [--seq-len 256]
//        [--windows 8] [--sparsity 0.5] [--ids bench/out/smollm2-windows.json]
// --model: a transformers.js folder (bench/models/smollm2.py full writes one) or an .onnx with a
// tokenizer.json beside it. --text: default the GNU GPL v3 text (/usr/share/common-licenses/GPL-3).
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { loadOnnx, resolveTextModel, textSamples, runSet, makeOrtRunner, fidelity, pruneSparsity, OnnxModel } from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const textFile = opt('--text', '/usr/share/common-licenses/GPL-3');
const seqLen = Number(opt('--seq-len', 256)), windows = Number(opt('--windows', 8)), sparsity = Number(opt('--sparsity', 0.5));
const idsOut = opt('--ids', 'bench/out/smollm2-windows.json');

const files = await resolveTextModel(folder);
if (!files.tokenizer) throw new Error(`${folder}: no tokenizer.json`);
const model = await loadOnnx(files.model);
const tokenizer = JSON.parse(fs.readFileSync(files.tokenizer, 'utf8'));
const t0 = performance.now();
const set = textSamples({ text: fs.readFileSync(textFile, 'utf8'), tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit: windows });
const tokMs = performance.now() - t0;
console.log(`${path.basename(textFile)}: ${set.kind} (${set.why}); ${set.samples.length} windows of ${seqLen} tokens (tokenized in ${tokMs.toFixed(0)} ms)`);
fs.mkdirSync(path.dirname(idsOut), { recursive: true });
fs.writeFileSync(idsOut, JSON.stringify(set.samples.map((s) => Array.from(s.feeds.input_ids.data, Number))));

const runner = makeOrtRunner(ort, { intraOpNumThreads: 2, logSeverityLevel: 3 });
const t1 = performance.now();
const dense = await runSet(runner, model, set.samples);
console.log(`dense run: ${((performance.now() - t1) / 1000).toFixed(1)} s`);
const self = fidelity(dense, dense, { inputs: set.samples, vocabSize: set.vocabSize }).outputs[0];
console.log(`dense: perplexity ${self.metrics.perplexityOriginal.toFixed(3)} over ${self.metrics.predictedTokens} next tokens (kind ${self.kind})`);
if (sparsity > 0) {
  const pruned = OnnxModel.parse(model.encode());
  const rep = pruneSparsity(pruned, { sparsity });
  const out = await runSet(runner, pruned.encode(), set.samples);
  const f = fidelity(dense, out, { inputs: set.samples, vocabSize: set.vocabSize }).outputs[0];
  const m = f.metrics;
  console.log(`magnitude ${sparsity} (per layer, ${rep.layers.length} weights): perplexity ${m.perplexityPruned.toFixed(3)} (x${m.perplexityRatio.toFixed(3)}), next-token top-1 agreement ${(100 * m.top1Agreement).toFixed(1)}%, KL ${m.meanKL.toFixed(4)}`);
}
