// Where do recover()'s distillation and PyTorch's part (bench/recover/recover-vs-torch.mjs)? Replays the first
// epoch of a folder written by recover-vs-torch.mjs with the training core, step by step, and writes
// each step's loss, the first step's gradient and the parameters after step 1 and after the last step, for
// bench/recover/recover-torch.py --diverge to compare with its own.
//   node bench/recover/recover-diverge.mjs bench/out/recover-vs-torch/cls-ch [--steps 32]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Trainer } from 'sparsekit-wasm';
import { OnnxModel, parseNpy, trainSetup } from '#onnx-internal';
import { lossesOf } from '../../pkg/src/onnx/recover/train-setup.js';

const { values: opt, positionals: [dir] } = parseArgs({ allowPositionals: true, options: { steps: { type: 'string', default: '32' } } });
const recipe = JSON.parse(fs.readFileSync(path.join(dir, 'recipe.json'), 'utf8'));
const load = (f) => parseNpy(new Uint8Array(fs.readFileSync(path.join(dir, f))));
const x = load('train_x.npy'), t = load('train_t.npy');
const setup = trainSetup(OnnxModel.parse(fs.readFileSync(path.join(dir, 'student.onnx'))), { [recipe.output]: recipe.kind }, 'logits');
const trainer = new Trainer(setup.graph, { lr: recipe.lr, masked: true });
trainer.setLosses(lossesOf(setup));
// The .npy files are 1-D, the samples one after the other, each of its shape in recipe.shapes.
const size = (dims) => dims.reduce((p, d) => p * d, 1);
const offsets = (name) => recipe.shapes[name].reduce((a, d) => [...a, a.at(-1) + size(d)], [0]);
const at = { train_x: offsets('train_x'), train_t: offsets('train_t') };
const rows = (a, name, idx) => { const parts = idx.map((k) => a.data.subarray(at[name][k], at[name][k + 1])); const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0)); let o = 0; for (const p of parts) { out.set(p, o); o += p.length; } return out; };
const dump = () => Object.fromEntries(trainer.paramNames.map((n) => [n, Array.from(trainer.param(n))]));
const losses = [];
let first, grad;
const start = dump();
const batches = recipe.order[0].slice(0, Number(opt.steps));
const inputOf = (idx) => [{ values: rows(x, 'train_x', idx), shape: [idx.length, ...recipe.shapes.train_x[idx[0]]] }];
// The start's outputs on the first batch (for the forward's error against float64)
const forward = Array.from(trainer.forward(inputOf(batches[0]))[0].values);
for (const idx of batches) {
  losses.push(trainer.step(inputOf(idx), [rows(t, 'train_t', idx)]));
  if (first) continue;
  first = dump();
  // The first step's gradient, from Adam's state: v = (1 - β2) g² with β2 = 0.999 in float32 (so
  // 1 - β2 = 0.00099998713, not 0.001), and the step moved w by -lr·sign(g) (about)
  const c2 = Math.fround(1 - Math.fround(0.999));
  grad = Object.fromEntries(trainer.paramNames.map((n) => {
    const v = trainer.secondMoments(n);
    return [n, Array.from(v, (vi, i) => Math.sign(start[n][i] - first[n][i]) * Math.sqrt(vi / c2))];
  }));
}
fs.writeFileSync(path.join(dir, 'diverge-ours.json'), JSON.stringify({ losses, forward, grad, first, last: dump() }));
trainer.free();
console.error(`ours: ${losses.length} steps, losses ${losses.slice(0, 4).map((l) => l.toFixed(6)).join(' ')} … ${losses.at(-1).toFixed(6)}`);
