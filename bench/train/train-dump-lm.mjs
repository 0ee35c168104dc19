// Bench only: writes a language model's training graph as recover builds it (trainSetup: the
// student's graph, its frozen constants, a Softmax over the vocabulary appended to the logits) as
// JSON + binary initializers for bench/rust/src/bin/train_memory.rs (what a step allocates, by phase
// and node kind). Usage: node bench/train/train-dump-lm.mjs MODEL.onnx OUT_BASE
// (writes OUT_BASE.json and OUT_BASE.bin; the weights' values do not change what a step allocates).
import fs from 'node:fs';
const { OnnxModel, trainSetup } = await import('#onnx-internal');
const [file, out] = process.argv.slice(2);
if (!file || !out) throw new Error('usage: node bench/train/train-dump-lm.mjs MODEL.onnx OUT_BASE');
const model = OnnxModel.parse(fs.readFileSync(file));
const kinds = Object.fromEntries(model.graph.output.map((o) => [o.name, 'language-model']));
const { graph: g, trained } = trainSetup(model, kinds);
const fd = fs.openSync(`${out}.bin`, 'w');
let off = 0;
const inits = [];
for (const t of g.initializers) {
  const isF = t.values instanceof Float32Array;
  const b = isF ? Buffer.from(t.values.buffer, t.values.byteOffset, t.values.byteLength) : Buffer.from(BigInt64Array.from(Array.from(t.values, (v) => BigInt(v))).buffer);
  inits.push({ name: t.name, dims: t.dims, float: isF, offset: off, len: t.values.length });
  fs.writeSync(fd, b); off += b.length;
}
fs.closeSync(fd);
const spec = { nodes: g.nodes.map((n) => ({ ...n, name: n.name ?? '', attrs: n.attrs ?? {} })), inputs: g.inputs, outputs: g.outputs, frozen: g.frozen };
fs.writeFileSync(`${out}.json`, JSON.stringify({ spec, inits, losses: trained.map((t) => ({ kind: t.loss, axis: t.axis })) }));
console.log(`${g.nodes.length} nodes, inputs ${g.inputs.join(', ')}, outputs ${g.outputs.join(', ')}, ${inits.length} initializers (${(off / 2 ** 20).toFixed(0)} MiB), ${g.frozen.length} frozen`);
