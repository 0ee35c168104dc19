// Where does the training core's forward lose precision? Runs the student of a folder written by
// bench/recover/recover-vs-torch.mjs on its first training batch with every intermediate tensor of the
// training graph as an output, and writes them to DIR/precision-ours.f32 (the values one tensor after
// the other) with their names, shapes and offsets in DIR/precision-ours.json, for
// bench/recover/forward-precision.py, which compares them and PyTorch's (float32) with PyTorch in float64.
// Raw float32 rather than JSON numbers: rec's tensors of one batch are past what JSON.stringify can hold.
//   node bench/recover/forward-precision.mjs bench/out/recover-vs-torch/cls-ch [--samples K] && python bench/recover/forward-precision.py bench/out/recover-vs-torch/cls-ch
// --samples K: only the batch's first K samples (default: the whole batch; rec's 8 lines write 1.6 GB).
import fs from 'node:fs';
import path from 'node:path';
import { Trainer } from 'sparsekit-wasm';
import { OnnxModel, parseNpy, trainSetup } from '#onnx-internal';

const dir = process.argv[2];
const recipe = JSON.parse(fs.readFileSync(path.join(dir, 'recipe.json'), 'utf8'));
const x = parseNpy(new Uint8Array(fs.readFileSync(path.join(dir, 'train_x.npy'))));
const setup = trainSetup(OnnxModel.parse(fs.readFileSync(path.join(dir, 'student.onnx'))), { [recipe.output]: recipe.kind }, 'logits');
// Every float tensor a node of the training graph computes: the trainer refuses an integer (shape)
// tensor as an output by name, so those are dropped one by one.
let names = [...new Set(setup.graph.nodes.flatMap((n) => n.outputs))];
const k = process.argv.indexOf('--samples');
const samples = k > 0 ? Number(process.argv[k + 1]) : Infinity;
if (!(samples >= 1) || (k > 0 && !Number.isInteger(samples))) throw new Error(`--samples: a whole number >= 1, got ${process.argv[k + 1]}`);
const idx = recipe.order[0][0].slice(0, k > 0 ? samples : undefined);
const size = (dims) => dims.reduce((p, d) => p * d, 1);
const offs = recipe.shapes.train_x.reduce((a, d) => [...a, a.at(-1) + size(d)], [0]);
const parts = idx.map((k) => x.data.subarray(offs[k], offs[k + 1]));
const values = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
parts.reduce((o, p) => (values.set(p, o), o + p.length), 0);
const out = {};
let trainer, res;
for (;;) {
  trainer = new Trainer({ ...setup.graph, outputs: names }, { lr: 0 });
  try {
    res = trainer.forward([{ values, shape: [idx.length, ...recipe.shapes.train_x[idx[0]]] }]);
    break;
  } catch (e) {
    trainer.free();
    const m = /value (\S+) is not a float tensor/.exec(String(e.message));
    if (!m) throw e;
    names = names.filter((n) => n !== m[1]);
  }
}
let offset = 0;
names.forEach((n, i) => { out[n] = { shape: res[i].shape, offset, length: res[i].values.length }; offset += res[i].values.length; });
const all = new Float32Array(offset);
names.forEach((n, i) => all.set(res[i].values, out[n].offset));
trainer.free();
fs.writeFileSync(path.join(dir, 'precision-ours.f32'), all);
fs.writeFileSync(path.join(dir, 'precision-ours.json'), JSON.stringify({ batch: idx, order: names, tensors: out }));
console.error(`ours: ${names.length} tensors of the first batch (${idx.length} samples) -> ${path.join(dir, 'precision-ours.json')}`);
