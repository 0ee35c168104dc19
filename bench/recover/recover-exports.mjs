// recover() on today's exports (issue 38): each model pruned by magnitude (pruneSparsity), then
// distilled towards its original with the training core on generated inputs (ids within the
// embedding tables, masks 0/1: makeInputSet), the held-out fidelity (disjoint seeds) before and after.
//   node bench/recover/recover-exports.mjs [--models byte-attention,bert-torch] [--sparsity 0.5] [--train 64]
//        [--held-out 32] [--epochs 8] [--minutes 10] [--lr 3e-3] [--batch 8] [--method magnitude|sparsegpt]
//        [--kind generic|classification]
// --method sparsegpt: calibratePrune on the first 16 training samples;
// --kind classification: the outputs judged (and the kept weights chosen) by top-1 agreement.
// --test N: N more held-out samples, after the --held-out ones (which pick the kept epoch), never
// seen by the recovery: the before / after scores on them are the unbiased figures.
// Prints one markdown row per model. Run after scripts/build.sh.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, makeInputSet, pruneSparsity, calibratePrune, recover, evaluate } from 'sparsekit-wasm/onnx';

const DATA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/data/models');
const { values: opt } = parseArgs({
  options: {
    models: { type: 'string', default: 'byte-attention,bert-torch' }, sparsity: { type: 'string', default: '0.5' },
    train: { type: 'string', default: '64' }, 'held-out': { type: 'string', default: '32' }, epochs: { type: 'string', default: '8' },
    minutes: { type: 'string', default: '10' }, method: { type: 'string', default: 'magnitude' }, test: { type: 'string', default: '0' }, kind: { type: 'string', default: 'generic' }, lr: { type: 'string', default: '3e-3' }, batch: { type: 'string', default: '8' },
  },
});
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, logSeverityLevel: 3 });

console.log('| model | sparsity | train / held-out samples | fidelity before | after | epochs (best) | seconds | zeros kept |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const name of opt.models.split(',')) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(DATA, `${name}.onnx`)));
  const teacher = OnnxModel.parse(bytes), pruned = OnnxModel.parse(bytes);
  if (opt.method === 'sparsegpt') {
    await calibratePrune(pruned, { ort: runner, calibration: makeInputSet(teacher, { count: 16 }), criterion: 'sparsegpt', sparsity: Number(opt.sparsity) });
  } else pruneSparsity(pruned, { sparsity: Number(opt.sparsity) });
  const zeros = pruned.prunable().map((w) => [w, Array.from(pruned.readFloat(w)).flatMap((v, i) => (v === 0 ? [i] : []))]);
  const kinds = Object.fromEntries(teacher.outputs.map((o) => [o.name, opt.kind]));
  const held = makeInputSet(teacher, { count: Number(opt['held-out']) + Number(opt.test), set: 'heldOut' });
  const test = held.slice(Number(opt['held-out']));
  const testBefore = test.length ? (await evaluate(teacher, pruned.encode(), test, { ort: runner, kinds })).score : NaN;
  const t0 = performance.now(), c0 = process.cpuUsage();
  const rep = await recover(pruned, teacher, makeInputSet(teacher, { count: Number(opt.train) }), {
    ort: runner, evalSamples: held.slice(0, Number(opt['held-out'])), kinds, steps: ['distill'],
    epochs: Number(opt.epochs), minutes: Number(opt.minutes), lr: Number(opt.lr), batchSize: Number(opt.batch),
  });
  const secs = (performance.now() - t0) / 1000, cpu = process.cpuUsage(c0);
  console.error(`${name}: wall ${secs.toFixed(0)} s, CPU ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s, load ${(await import('node:os')).loadavg()[0].toFixed(1)}; best held-out ${Math.max(...(rep.distill?.history ?? []).map((h) => h.fidelity)).toFixed(4)}`);
  const testAfter = test.length ? (await evaluate(teacher, pruned.encode(), test, { ort: runner, kinds })).score : NaN;
  if (test.length) console.error(`${name}: ${test.length} unseen samples: ${testBefore.toFixed(4)} -> ${testAfter.toFixed(4)}`);
  const kept = zeros.every(([w, z]) => { const v = pruned.readFloat(w); return z.every((i) => v[i] === 0); });
  console.log(`| ${name} | ${opt.sparsity} | ${opt.train} / ${opt['held-out']} | ${rep.before.score.toFixed(4)} | ${rep.after.score.toFixed(4)} | ${rep.distill?.epochs ?? 0} (${rep.distill?.bestEpoch ?? 0}) | ${secs.toFixed(0)} | ${kept ? 'yes' : 'NO'} |`);
}
