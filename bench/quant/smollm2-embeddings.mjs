// Bench (issue 39): how much of SmolLM2's 4-bit perplexity is the embedding table's. GPTQ's pass never
// sees the table's quantization (the Gather table is not a calibrated layer and is quantized after
// the pass), so the MatMulNBits codes of bench/quant/smollm2.mjs's gptq-int4 file are exactly what a
// GPTQ run with another table form computes: this script writes them again, from that file's own
// initializers (codes and scales, untouched), over the float model with the table left float32 (as
// onnxruntime's 4-bit quantizer leaves it) or int8 per row, and measures as smollm2.mjs does.
//   node bench/quant/smollm2-embeddings.mjs [--model bench/out/smollm2] [--out bench/out/smollm2-quant]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import ort from 'onnxruntime-node';
import * as O from '#onnx-internal';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const folder = opt('--model', 'bench/out/smollm2');
const outDir = opt('--out', 'bench/out/smollm2-quant');
const tokenizer = JSON.parse(fs.readFileSync(path.join(folder, 'tokenizer.json'), 'utf8'));
const gq = O.OnnxModel.parse(fs.readFileSync(path.join(outDir, 'gptq-int4.onnx')));
const inits = new Map(gq.graph.initializer.map((t) => [t.name, t]));
const given = new Map();
for (const n of gq.graph.node) {
  if (n.op_type !== 'MatMulNBits') continue;
  const attr = (k) => Number(n.attribute.find((a) => a.name === k).i);
  const [k, nn, g] = [attr('K'), attr('N'), attr('block_size')];
  const codes = Int8Array.from(O.unpackNBits(gq.tensorBytes(inits.get(n.input[1])), nn, k, g));
  const scales = gq.readFloat(inits.get(n.input[2]));
  given.set(n.input[1].replace(/_Q4$/, ''), { qv: { rows: nn, cols: k, codes, scales, groupsPerRow: Math.ceil(k / g), width: g }, method: 'gptq', relError: null });
}
const results = JSON.parse(fs.readFileSync(path.join(outDir, 'results.json'), 'utf8'));
for (const embeddings of ['float', 'int8']) {
  const name = `gptq-int4-emb-${embeddings}`;
  const m = await O.loadOnnx(path.join(folder, 'onnx/model.onnx'));
  // The model must hold the values the codes stand for (quantizeModel checks the zeros against them).
  for (const [w, c] of given) {
    const weight = m.weight(w);
    const v = O.dequantizeView(c.qv); // view layout [N, K]; stored (K, N)
    const stored = new Float32Array(v.length);
    for (let r = 0; r < c.qv.rows; r++) for (let j = 0; j < c.qv.cols; j++) stored[j * c.qv.rows + r] = v[r * c.qv.cols + j];
    m.writeFloat(weight, stored);
  }
  const rep = O.quantizeModel(m, { scheme: 'int4', group: 32, embeddings, given });
  const bytes = m.encode();
  fs.writeFileSync(path.join(outDir, `${name}.onnx`), bytes);
  const held = O.textSamples({ text: fs.readFileSync('/usr/share/common-licenses/GPL-3', 'utf8'), tokenizer, seqLen: 256, inputs: m.inputs, outputs: m.outputs, limit: 8 });
  const out = await O.runSet(O.makeOrtRunner(ort, { intraOpNumThreads: 2, logSeverityLevel: 3 }), bytes, held.samples);
  const f = O.fidelity(out, out, { inputs: held.samples, vocabSize: held.vocabSize }).outputs[0].metrics;
  const r = { name, label: `ours int4 g32, GPTQ (the same codes), embedding ${embeddings === 'float' ? 'float32' : 'int8 per row'}`, bytes: bytes.length, perplexity: f.perplexityOriginal, tokens: f.predictedTokens, gptqLayers: rep.layers.filter((l) => l.method === 'gptq').length };
  console.log(JSON.stringify(r));
  r.brotli = zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length;
  console.log(JSON.stringify(r));
  results[name] = r;
  fs.writeFileSync(path.join(outDir, 'results-embeddings.json'), JSON.stringify(Object.fromEntries(Object.entries(results).filter(([k]) => k.startsWith('gptq-int4-emb'))), null, 1));
}
