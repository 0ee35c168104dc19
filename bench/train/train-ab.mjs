// Bench only: an interleaved A/B of two builds of the package on the training step, in one Node
// process (no PyTorch): each round times one step of build A, then one of build B, on the same
// graph, batch and target as bench/train/train-step.mjs, so load swings hit both alike; the figure is
// the ratio of the medians and the median of the per-round ratios. It also checks that both builds' outputs after the timed steps are
// equal bit for bit (a change that keeps every element's order of operations must pass).
// Usage: node bench/train/train-ab.mjs PKG_A PKG_B [--rounds 8] [--models det,rec,smollm2-block]
// (PKG_* = package directories laid out as pkg/, e.g. a copy of pkg/ taken before a rebuild)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TRAIN_CASES, caseValues as rand } from '../../kit/train-cases.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (k, d) => { const i = process.argv.indexOf(`--${k}`); return i > 0 ? process.argv[i + 1] : d; };
const [A, B] = process.argv.slice(2, 4).map((p) => path.resolve(p));
const ROUNDS = +arg('rounds', 8);
const which = arg('models', 'det,rec').split(',');
const { OnnxModel, trainGraph } = await import(ROOT + '/pkg/src/onnx/internal.js');
const builds = [await import(A + '/src/node.js'), await import(B + '/src/node.js')];

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

for (const name of which) {
  const c = TRAIN_CASES[name];
  const n = c.shape.reduce((a, b) => a * b, 1);
  const bytes = fs.readFileSync(c.file);
  const x = [{ values: rand(n, 3), shape: c.shape }];
  const trs = builds.map((sk) => new sk.Trainer(trainGraph(OnnxModel.parse(bytes)), { lr: 1e-4, masked: false }));
  const target = trs[0].forward([{ values: rand(n, 5), shape: c.shape }]).map((o) => o.values);
  const ms = [[], []];
  const loadBefore = load();
  trs.forEach((tr) => tr.step(x, target)); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? [1, 0] : [0, 1]) {
      const t = performance.now();
      trs[k].step(x, target);
      ms[k].push(performance.now() - t);
    }
  }
  const outs = trs.map((tr) => tr.forward(x).map((o) => new Uint32Array(o.values.buffer, o.values.byteOffset, o.values.length)));
  const same = outs[0].every((o, i) => o.length === outs[1][i].length && o.every((v, j) => v === outs[1][i][j]));
  console.log(JSON.stringify({
    model: name, a_ms: +median(ms[0]).toFixed(1), b_ms: +median(ms[1]).toFixed(1),
    b_over_a: +(median(ms[1]) / median(ms[0])).toFixed(3),
    // per-round ratios (each round's two steps ran back to back): steadier under swinging load
    b_over_a_paired: +median(ms[1].map((v, i) => v / ms[0][i])).toFixed(3), outputs_bit_equal: same,
    a_all: ms[0].map((v) => +v.toFixed(0)), b_all: ms[1].map((v) => +v.toFixed(0)),
    load_before: loadBefore, load_after: load(),
  }));
  trs.forEach((tr) => tr.free());
}
