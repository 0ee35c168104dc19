// Bench only: per-op profile of training steps in wasm, in Node: a single-threaded build with the
// cfg sparsekit_train_profile (RawTrainer.profile()), e.g. built as scripts/build.sh builds st plus
// `--cfg sparsekit_train_profile` in RUSTFLAGS, into its own package directory (the normal package has no profile).
// Build: CARGO_UNSTABLE_BUILD_STD=std,panic_abort RUSTFLAGS="$ST_FLAGS --cfg sparsekit_train_profile" cargo build --lib --release \
//   --target wasm32-unknown-unknown, then wasm-bindgen + wasm-opt -O3 as in
//   scripts/build.sh into PKG_DIR/wasm/st, the rest of PKG_DIR a copy of pkg/.
// Usage: node bench/train/train-profile-wasm.mjs PKG_DIR [steps] [det,rec,smollm2-block]
import fs from 'node:fs';
const P = process.argv[2], steps = +(process.argv[3] ?? 2), models = (process.argv[4] ?? 'det,rec').split(',');
const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const { OnnxModel, trainGraph } = await import(ROOT + '/pkg/src/onnx/internal.js');
const sk = await import(P + '/src/node.js');
const { TRAIN_CASES, caseValues: rand } = await import(ROOT + '/kit/train-cases.mjs');
const { opProfileDelta } = await import(ROOT + '/bench/lib/op-profile.mjs');
for (const m of models) {
  const { file, shape } = TRAIN_CASES[m];
  const n = shape.reduce((a, b) => a * b, 1);
  const tr = new sk.Trainer(trainGraph(OnnxModel.parse(fs.readFileSync(file))), { lr: 1e-4, masked: false });
  const x = [{ values: rand(n, 3), shape }];
  const target = tr.forward([{ values: rand(n, 5), shape }]).map((o) => o.values);
  tr.step(x, target);
  const p0 = JSON.parse(tr._raw.profile());
  const t0 = performance.now();
  for (let s = 0; s < steps; s++) tr.step(x, target);
  const ms = (performance.now() - t0) / steps;
  const p1 = JSON.parse(tr._raw.profile());
  const { total: tot, rows } = opProfileDelta(p0, p1, 1 / steps);
  console.log(`${m}: ${ms.toFixed(0)} ms per step, ops ${tot.toFixed(0)} ms`);
  for (const [op, f, b] of rows) console.log(`  ${op.padStart(20)}: fwd ${f.toFixed(0).padStart(5)} ms  bwd ${b.toFixed(0).padStart(5)} ms  (${((f + b) / tot * 100).toFixed(1)}%)`);
}
