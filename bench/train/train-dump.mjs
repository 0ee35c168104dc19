// Bench only: writes the training-step cases' graphs (kit/train-cases.mjs; a case whose file is not built is
// skipped) as JSON + binary initializers (/tmp/t25/{det,rec,smollm2-block}.{json,bin}) for
// bench/rust/src/bin/train_profile.rs, the native per-op profile of a training step, and for the browser
// worker of bench/train/train-step.mjs --browser. Usage: node bench/train/train-dump.mjs [outdir]
import fs from 'node:fs';
import { TRAIN_CASES } from '../../kit/train-cases.mjs';
const { OnnxModel, trainGraph } = await import('#onnx-internal');
const OUT = process.argv[2] ?? '/tmp/t25';
for (const [name, { file }] of Object.entries(TRAIN_CASES)) {
  if (!fs.existsSync(file)) continue;
  const g = trainGraph(OnnxModel.parse(fs.readFileSync(file)));
  const bufs = []; let off = 0; const inits = [];
  for (const t of g.initializers) {
    const isF = t.values instanceof Float32Array;
    const b = isF ? Buffer.from(t.values.buffer, t.values.byteOffset, t.values.byteLength) : Buffer.from(BigInt64Array.from(Array.from(t.values, (v) => BigInt(v))).buffer);
    inits.push({ name: t.name, dims: t.dims, float: isF, offset: off, len: t.values.length });
    bufs.push(b); off += b.length;
  }
  const spec = { nodes: g.nodes.map((n) => ({ ...n, name: n.name ?? '', attrs: n.attrs ?? {} })), inputs: g.inputs, outputs: g.outputs, frozen: [] };
  fs.writeFileSync(`${OUT}/${name}.json`, JSON.stringify({ spec, inits }));
  fs.writeFileSync(`${OUT}/${name}.bin`, Buffer.concat(bufs));
}
