// The one typed job: its checks name the option they refuse; the CLI, the module and the playground
// run the same job, so the same settings write byte-identical models (N:M, channels, a searched
// plan); the search refuses at once a floor its held-out samples cannot show; prune --recover runs
// in one process.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const O = await import('sparsekit-wasm/onnx');
const G = await import('./graphs.mjs');

let dir, evalDir;
before(() => {
  dir = G.tmpDir('sk-job-');
  evalDir = path.join(dir, 'eval');
  fs.mkdirSync(evalDir);
  const r = G.rng(21);
  for (let i = 0; i < 6; i++) writeNpy(path.join(evalDir, `e${i}.npy`), Float32Array.from({ length: 4 * 64 }, () => r()), [1, 4, 8, 8]);
});

const cli = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

test('checkJob: each refusal is a JobError naming the option, before anything runs', () => {
  const cases = [
    [{ mode: { kind: 'sparsity', sparsity: 1.5 } }, 'mode.sparsity', 'invalid_sparsity'],
    [{ mode: { kind: 'nm', nm: [3, 2] } }, 'mode.nm', 'invalid_nm_pattern'],
    [{ mode: { kind: 'channels', fraction: 1 } }, 'mode.fraction', 'invalid_sparsity'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5, block: [4, 4] }, method: 'wanda', calibration: { samples: [{}] } }, 'mode.block', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt' }, 'calibration.samples', 'invalid_arguments'],
    [{ mode: { kind: 'search', target: 'sparsity', minFidelity: 0.9 } }, 'eval.samples', 'invalid_arguments'],
    [{ mode: { kind: 'search', target: 'nm', minFidelity: 0.9, nm: [2, 4], levels: [0.5] }, eval: { samples: [{}] } }, 'mode.levels', 'invalid_arguments'],
    [{ mode: { kind: 'search', target: 'sparsity', minFidelity: 0.9, confidence: 95 }, eval: { samples: [{}] } }, 'mode.confidence', 'invalid_arguments'],
    [{ mode: { kind: 'prox', sparsity: 0.5 }, calibration: { samples: [{}] }, recover: true }, 'recover', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, recover: { epochs: 0 }, calibration: { samples: [{}] } }, 'recover.epochs', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, recover: { schedule: 'linear' }, calibration: { samples: [{}] } }, 'recover.schedule', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, recover: { schedule: 'cosine', warmup: 1 }, calibration: { samples: [{}] } }, 'recover.warmup', 'invalid_arguments'],
    [{ mode: { kind: 'prox', sparsity: 0.5 }, calibration: { samples: [{}] }, training: { warmup: -0.1 } }, 'training.warmup', 'invalid_arguments'],
    [{ mode: { kind: 'frob' } }, 'mode.kind', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration: { samples: [{}], refit: 1.5 } }, 'calibration.refit', 'invalid_arguments'],
    [{ mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'wanda', calibration: { samples: [{}], statsLimit: 0 } }, 'calibration.statsLimit', 'invalid_arguments'],
  ];
  for (const [job, option, code] of cases) {
    assert.throws(() => O.checkJob(job), (e) => e instanceof O.JobError && e.option === option && e.code === code && e.message.startsWith(option), JSON.stringify(job));
  }
  assert.deepEqual(O.checkJob({ mode: { kind: 'nm', nm: [2, 4] } }), { method: 'magnitude' });
  // training samples are bounded by the bytes of their inputs, not by their count: 8 192 sentences
  // of 32 token ids pass, 300 MiB of pixels do not
  const ids = (n) => Array.from({ length: n }, () => ({ feeds: { input_ids: { type: 'int64', data: new BigInt64Array(32), dims: [1, 32] } }, source: 'text' }));
  assert.deepEqual(O.checkJob({ mode: { kind: 'sparsity', sparsity: 0.5 }, calibration: { samples: ids(8192) }, recover: true }), { method: 'magnitude' });
  const pages = Array.from({ length: 16 }, () => ({ feeds: { x: { type: 'float32', data: new Float32Array(5 * 2 ** 20), dims: [1, 5, 1024, 1024] } }, source: 'page' }));
  assert.throws(() => O.checkJob({ mode: { kind: 'sparsity', sparsity: 0.5 }, calibration: { samples: pages }, recover: true }), (e) => e instanceof O.JobError && e.option === 'calibration.samples' && /320\.0 MiB of inputs \(16 samples\).*at most 256\.0 MiB/.test(e.message));
  assert.deepEqual(O.checkJob({ mode: { kind: 'sparsity', sparsity: 0.5 }, calibration: { samples: pages } }), { method: 'magnitude' }, 'held only for training');
  assert.deepEqual(O.parseNm('2:4'), [2, 4]);
  assert.throws(() => O.parseNm('4:2'), O.JobError);
});

/** The CLI's output, and the module's for the same job, as bytes. */
async function both(args, job, samples = {}) {
  const input = path.join(dir, 'residual.onnx');
  fs.writeFileSync(input, G.residual());
  const out = path.join(dir, `cli-${args.join('_').replace(/[^\w.]/g, '')}.onnx`);
  const r = cli('prune', input, '-o', out, ...args, '-q');
  assert.equal(r.status, 0, r.stderr);
  const model = await O.loadOnnx(input);
  const full = { ...job };
  if (samples.eval) full.eval = { samples: await O.readCalibrationDir(samples.eval, model) };
  const res = await O.runJob(model, full, { ort, sessionOptions: { logSeverityLevel: 3 } });
  const mine = path.join(dir, `module-${path.basename(out)}`);
  await O.saveOnnx(res.model, mine);
  return { cli: fs.readFileSync(out), module: fs.readFileSync(mine), report: res.report };
}

test('the CLI and the module write the same bytes for the same job: N:M, channels, a searched plan', async () => {
  let b = await both(['--nm', '2:4'], { mode: { kind: 'nm', nm: [2, 4] } });
  assert.ok(b.cli.equals(b.module), 'nm 2:4');
  b = await both(['--channels', '0.5', '--round-to', '1'], { mode: { kind: 'channels', fraction: 0.5, roundTo: 1 } });
  assert.ok(b.cli.equals(b.module), 'channels 0.5');
  b = await both(['--sparsity', 'auto', '--levels', '0.25,0.5', '--min-fidelity', '0.9', '--eval', evalDir],
    { mode: { kind: 'search', target: 'sparsity', levels: [0.25, 0.5], minFidelity: 0.9 } }, { eval: evalDir });
  assert.ok(b.cli.equals(b.module), 'searched plan');
  assert.ok(b.report.fidelity.score >= 0.9 && b.report.fidelity.samples === 6, 'judged on every held-out sample');
});

test('the search refuses at once a floor its held-out decisions cannot show at the confidence asked', async () => {
  // A classifier whose 6 held-out samples give 6 decisions: at confidence 0.95 the Wilson bound of
  // 6/6 is 6 / (6 + 1.645²) ≈ 0.689, below a 0.9 floor, whatever the plan.
  const input = path.join(dir, 'cls.onnx');
  fs.writeFileSync(input, G.makeModel({
    inputs: [['x', [1, 4, 8, 8]]], outputs: [['y', [1, 5]]],
    nodes: [['GlobalAveragePool', ['x'], ['p']], ['Flatten', ['p'], ['f']], ['Gemm', ['f', 'W', 'b'], ['z'], { transB: 1 }], ['Softmax', ['z'], ['y'], { axis: 1 }]],
    inits: { W: { dims: [5, 4] }, b: { dims: [5] } },
  }));
  const model = await O.loadOnnx(input);
  const samples = await O.readCalibrationDir(evalDir, model);
  const t0 = Date.now();
  await assert.rejects(O.runJob(model, { mode: { kind: 'search', target: 'sparsity', minFidelity: 0.9, confidence: 0.95 }, eval: { samples, kinds: { y: 'classification' } } }, { ort }),
    (e) => e instanceof O.FloorError && /rests on 6 decisions/.test(e.message) && e.steps.length === 0);
  assert.ok(Date.now() - t0 < 20000);
  const r = cli('prune', input, '-o', path.join(dir, 'never.onnx'), '--sparsity', 'auto', '--min-fidelity', '0.9', '--confidence', '0.95', '--eval', evalDir, '--metric', 'y=classification');
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /cannot be held at confidence 0\.95/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.ok(!fs.existsSync(path.join(dir, 'never.onnx')));
});

test('the CLI: no subprocess, one options table of at most 35 flags, help generated from it', async () => {
  const bin = path.join(path.dirname(CLI));
  const files = fs.readdirSync(bin, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => fs.readFileSync(path.join(bin, f), 'utf8'));
  assert.ok(files.every((s) => !/child_process|spawn\(|spawnSync|execFile/.test(s)), 'no subprocess in the CLI');
  const { OPTIONS } = await import(path.join(bin, 'cli/options.js'));
  const flags = new Set(OPTIONS.map((o) => o.flag));
  assert.equal(flags.size, OPTIONS.length, 'each flag once');
  assert.ok(flags.size <= 35, `${flags.size} flags`);
  for (const cmd of ['prune', 'inspect', 'sensitivity', 'recover']) {
    const h = cli(cmd, '--help');
    assert.equal(h.status, 0, h.stderr);
    for (const o of OPTIONS.filter((x) => x.commands.includes(cmd))) assert.ok(h.stdout.includes(`--${o.flag}`), `${cmd} --help lists --${o.flag}`);
  }
});

test('sparsekit-wasm/onnx exports at most 60 runtime names', async () => {
  const names = Object.keys(O);
  assert.ok(names.length <= 60, `${names.length}: ${names.join(' ')}`);
  for (const n of ['runJob', 'loadOnnx', 'saveOnnx', 'evaluate', 'compress', 'recover', 'OnnxError', 'JobError']) assert.ok(names.includes(n), n);
});

test('quantization in the same job: int8 / int4 after pruning, zeros kept; a q8 input is pruned and written again in its scheme', async () => {
  const input = path.join(dir, 'mlp.onnx');
  fs.writeFileSync(input, G.mlp());
  const model = await O.loadOnnx(input);
  const res = await O.runJob(model, { mode: { kind: 'nm', nm: [2, 4] }, quantize: { scheme: 'int8' } });
  assert.ok(res.report.quantize.layers.some((l) => l.form !== 'float'), 'int8 written');
  assert.equal(res.report.quantize.source, 'asked');
  assert.ok(res.report.quantize.layers.every((l) => l.form === 'float' || l.zeros > 0), 'the 2:4 zeros survive');
  const back = O.OnnxModel.parse(res.model.encode());
  assert.ok(O.detectQuantized(back).sites.length > 0);
  // the quantized file as input: pruned and written again (never "0 prunable weights", exit 0)
  const q8 = path.join(dir, 'mlp-q8.onnx');
  await O.saveOnnx(back, q8);
  const out = path.join(dir, 'mlp-q8-pruned.onnx');
  const r = cli('prune', q8, '-o', out, '--sparsity', '0.5', '--report', `${out}.json`, '-q');
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  assert.equal(rep.quantize.source, 'input');
  assert.ok(O.detectQuantized(await O.loadOnnx(out)).sites.length > 0, 'still quantized');
  const bad = cli('prune', input, '-o', path.join(dir, 'g.onnx'), '--sparsity', '0.5', '--group', '32');
  assert.equal(bad.status, 2);
  const bad2 = cli('prune', input, '-o', path.join(dir, 'g.onnx'), '--sparsity', '0.5', '--quantize', 'int8', '--group', '32');
  assert.equal(bad2.status, 2);
  assert.match(bad2.stderr, /--group applies to int4/);
});

test('text in from the CLI: --calib / --eval text files with --tokenizer and --seq-len; the language-model kind judges it', () => {
  const lines = JSON.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/text/lines.json'), 'utf8'));
  const calib = path.join(dir, 'calib.txt'), held = path.join(dir, 'held.txt');
  fs.writeFileSync(calib, lines.slice(0, 200).join('\n'));
  fs.writeFileSync(held, lines.slice(500, 700).join('\n'));
  const model = path.join(CLI, '../../../tests/data/models/smollm2-tiny.onnx');
  const tok = path.join(CLI, '../../../tests/data/tokenizers/smollm2-135m.json');
  const out = path.join(dir, 'lm.onnx');
  const r = cli('prune', model, '-o', out, '--sparsity', '0.5', '--method', 'wanda', '--calib', calib, '--eval', held, '--tokenizer', tok, '--seq-len', '32', '--calib-count', '4', '--eval-count', '4', '--report', `${out}.json`, '-q');
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  assert.equal(rep.fidelity.samples, 4);
  assert.ok(rep.fidelity.outputs.some((o) => o.kind === 'language-model' && o.metrics.perplexityRatio > 0), JSON.stringify(rep.fidelity.outputs.map((o) => [o.kind, Object.keys(o.metrics)])));
  // the same text as calibration and held-out: refused sample by sample, before any run
  const same = cli('prune', model, '-o', path.join(dir, 'x.onnx'), '--sparsity', '0.5', '--method', 'wanda', '--calib', calib, '--eval', calib, '--tokenizer', tok, '--seq-len', '32', '--calib-count', '4', '--eval-count', '4');
  assert.equal(same.status, 2, same.stderr);
  assert.match(same.stderr, /is a copy of calibration sample/);
  // a tokenizer file that is not JSON: a usage error naming it, no file written
  const broken = path.join(dir, 'broken-tokenizer.json');
  fs.writeFileSync(broken, '{"model": ');
  const bad = cli('prune', model, '-o', path.join(dir, 'y.onnx'), '--sparsity', '0.5', '--method', 'wanda', '--calib', calib, '--tokenizer', broken, '--seq-len', '32');
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /broken-tokenizer\.json: not JSON/);
  assert.ok(!fs.existsSync(path.join(dir, 'y.onnx')));
});

test('training samples from the CLI: bounded by their bytes (600 text lines train with --lr cosine:LR, grouped by length by default, Wanda\'s statistics on the first 512; generated images past 256 MiB refused before they are made)', () => {
  const lines = JSON.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/text/lines.json'), 'utf8'));
  const text = path.join(dir, 'train600.txt');
  fs.writeFileSync(text, lines.slice(0, 600).join('\n'));
  const folder = path.join(CLI, '../../../tests/data/models/tjs-bert');
  const out = path.join(dir, 'bert600');
  const r = cli('prune', folder, '-o', `${out}/`, '--sparsity', '0.5', '--method', 'wanda', '--recover', '--calib', text, '--calib-count', '600', '--epochs', '1', '--batch', '64',
    '--lr', 'cosine:6e-4', '--report', `${out}.json`, '-q');
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  // Wanda's statistics on the first 512 (the job trains too: calibration.statsLimit's default), training on all 600
  assert.equal(rep.prune.calibration, O.JOB_DEFAULTS.trainingStatsLimit);
  const d = rep.recover.distill;
  assert.equal(d.steps, 10, '600 samples in batches of 64');
  assert.equal(d.schedule.kind, 'cosine');
  assert.equal(d.schedule.lr, 6e-4);
  assert.ok(d.schedule.lastLr < 6e-4 / 2, `decayed: ${d.schedule.lastLr}`);
  assert.equal(d.trimmed?.grouped, true, JSON.stringify(d.trimmed));
  const sched = cli('recover', `${out}/onnx/model.onnx`, '--teacher', folder, '-o', path.join(dir, 'r.onnx'), '--calib', text, '--lr', 'linear:1e-3');
  assert.equal(sched.status, 2, sched.stderr);
  assert.match(sched.stderr, /--lr takes LR, constant:LR or cosine:LR \(got "linear:1e-3"\)/);
  assert.ok(!fs.existsSync(path.join(dir, 'r.onnx')));
  const img = path.join(CLI, '../../../tests/data/models/yolov8-style.onnx');
  const t0 = Date.now();
  const big = cli('prune', img, '-o', path.join(dir, 'y6000.onnx'), '--sparsity', '0.5', '--recover', '--calib', 'synthetic', '--calib-count', '6000');
  assert.equal(big.status, 2, big.stderr);
  assert.match(big.stderr, /--calib-count 6000 for training: 6000 generated samples would hold 281\.3 MiB of inputs; at most 256 MiB are allowed \(5461 of these\)/);
  assert.ok(Date.now() - t0 < 10_000 && !fs.existsSync(path.join(dir, 'y6000.onnx')));
});

/** The committed tiny SmolLM2-shaped decoder and `limit` windows of 32 tokens of real text for it. */
function tinyLm(limit) {
  const bytes = new Uint8Array(fs.readFileSync(path.join(CLI, '../../../tests/data/models/smollm2-tiny.onnx')));
  const tokenizer = JSON.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/tokenizers/smollm2-135m.json'), 'utf8'));
  const lines = JSON.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/text/lines.json'), 'utf8'));
  const m0 = O.OnnxModel.parse(bytes);
  const { samples } = O.textSamples({ text: lines.slice(0, 400).join('\n'), tokenizer, seqLen: 32, inputs: m0.inputs, outputs: m0.outputs, limit });
  return { bytes, samples };
}

test("SparseGPT's damping defaults to the reference's 0.01 on a language model, 0.1 elsewhere; a given percDamp wins", async () => {
  const { bytes, samples } = tinyLm(24);
  const run = async (percDamp) => {
    const m = O.OnnxModel.parse(bytes);
    await O.runJob(m, { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration: { samples, ...(percDamp === undefined ? {} : { percDamp }) } }, { ort, sessionOptions: { logSeverityLevel: 3 } });
    return Buffer.from(m.encode());
  };
  const [dflt, lm, cnn] = [await run(undefined), await run(0.01), await run(0.1)];
  assert.ok(dflt.equals(lm), 'the default on a language model is 0.01');
  assert.ok(!dflt.equals(cnn), '0.1 gives another model');
  // a model without a token table keeps 0.1
  const mlp = async (percDamp) => {
    const m = O.OnnxModel.parse(G.mlp());
    const calibration = O.makeInputSet(m, { count: 64 });
    await O.runJob(m, { mode: { kind: 'sparsity', sparsity: 0.5 }, method: 'sparsegpt', calibration: { samples: calibration, ...(percDamp === undefined ? {} : { percDamp }) } }, { ort, sessionOptions: { logSeverityLevel: 3 } });
    return Buffer.from(m.encode());
  };
  assert.ok((await mlp(undefined)).equals(await mlp(0.1)), 'elsewhere the default is 0.1');
});

test("a language model's head stays dense unless the job names it (as SparseGPT and Wanda leave it); a transformers.js folder is a model", () => {
  const file = path.join(CLI, '../../../tests/data/models/smollm2-tiny.onnx');
  const load = () => O.OnnxModel.parse(new Uint8Array(fs.readFileSync(file)));
  const head = (m) => m.prunable().find((w) => w.view.rows === 49152);
  const zerosOf = (m, w) => m.readFloat(w).filter((x) => x === 0).length;
  return (async () => {
    const m = load();
    const h = head(m);
    assert.ok(h, 'the tiny decoder has a 49 152-output head');
    const { report } = await O.runJob(m, { mode: { kind: 'sparsity', sparsity: 0.5 } });
    assert.deepEqual(report.keptDense.map((k) => k.name), [h.name]);
    assert.match(report.keptDense[0].why, /language-model head/);
    assert.equal(zerosOf(m, h), 0, 'the head is untouched');
    const others = m.prunable().filter((w) => w !== h);
    assert.ok(others.every((w) => zerosOf(m, w) >= Math.floor(w.numel / 2)), 'every other layer is at 50%');
    // named by the job: [] prunes every layer, the head too; a name that is no weight is refused
    const all = load();
    await O.runJob(all, { mode: { kind: 'nm', nm: [2, 4] }, keepDense: [] });
    assert.equal(zerosOf(all, head(all)), head(all).numel / 2);
    await assert.rejects(O.runJob(load(), { mode: { kind: 'sparsity', sparsity: 0.5 }, keepDense: ['nope'] }), (e) => e instanceof O.JobError && e.option === 'keepDense');
    await assert.rejects(O.runJob(load(), { mode: { kind: 'channels', fraction: 0.5 }, keepDense: [] }), (e) => e instanceof O.JobError && e.option === 'keepDense');

    // the folder a transformers.js app downloads (config.json, tokenizer.json, onnx/model.onnx): its tokenizer is found
    const folder = path.join(dir, 'tiny-folder');
    fs.mkdirSync(path.join(folder, 'onnx'), { recursive: true });
    fs.copyFileSync(file, path.join(folder, 'onnx', 'model.onnx'));
    fs.copyFileSync(path.join(CLI, '../../../tests/data/tokenizers/smollm2-135m.json'), path.join(folder, 'tokenizer.json'));
    fs.writeFileSync(path.join(folder, 'config.json'), '{"model_type":"llama"}');
    const lines = JSON.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/text/lines.json'), 'utf8'));
    const calib = path.join(dir, 'folder-calib.txt'), held = path.join(dir, 'folder-held.txt');
    fs.writeFileSync(calib, lines.slice(0, 100).join('\n'));
    fs.writeFileSync(held, lines.slice(600, 700).join('\n'));
    const out = path.join(dir, 'folder-out.onnx');
    const r = cli('prune', folder, '-o', out, '--sparsity', '0.5', '--method', 'wanda', '--calib', calib, '--eval', held, '--seq-len', '32', '--calib-count', '2', '--eval-count', '2', '--report', `${out}.json`, '-q');
    assert.equal(r.status, 0, r.stderr);
    const rep = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
    assert.equal(rep.keptDense.length, 1);
    assert.ok(rep.fidelity.outputs.some((o) => o.kind === 'language-model'));
  })();
});

test("a calibrated channel removal ranks by fluctuation on a language model, heads by measured influence elsewhere, by activations without heads; a given score wins", async () => {
  const { bytes, samples } = tinyLm(12);
  const env = { ort, sessionOptions: { logSeverityLevel: 3 } };
  const run = async (model, calibration, score) => {
    const { report } = await O.runJob(model, { mode: { kind: 'channels', fraction: 0.25, roundTo: 1, ...(score ? { score } : {}) }, method: 'wanda', calibration: { samples: calibration } }, env);
    return { score: report.prune.options.score, bytes: Buffer.from(model.encode()) };
  };
  const lm = await run(O.OnnxModel.parse(bytes), samples);
  assert.equal(lm.score, 'fluctuation');
  assert.ok(lm.bytes.equals((await run(O.OnnxModel.parse(bytes), samples, 'fluctuation')).bytes), 'the default is the fluctuation score');
  const given = await run(O.OnnxModel.parse(bytes), samples, 'activations');
  assert.equal(given.score, 'activations');
  assert.ok(!given.bytes.equals(lm.bytes), 'the activation scores remove other channels here');
  const mlp = O.OnnxModel.parse(G.mlp());
  assert.equal((await run(mlp, O.makeInputSet(mlp, { count: 32 }))).score, 'activations');
  // an encoder (BERT-style, torch export), not a language model: its heads are measured
  const bert = O.OnnxModel.parse(fs.readFileSync(path.join(CLI, '../../../tests/data/models/bert-torch.onnx')));
  assert.equal((await run(bert, O.makeInputSet(bert, { count: 8 }))).score, 'influence');
});

test("YOLOv8's DFL projection (a fixed 0..15) is left dense by default; keepDense: [] prunes it too", async () => {
  // tests/gen/export_yolov8.py: ultralytics' DetectionModel, whose DFL 1x1 conv holds arange(16).
  const bytes = fs.readFileSync(new URL('../data/models/yolov8n-ultralytics.onnx', import.meta.url));
  const zerosOf = (m, w) => m.readFloat(w).filter((x) => x === 0).length;
  const m = O.OnnxModel.parse(bytes);
  const { report } = await O.runJob(m, { mode: { kind: 'nm', nm: [2, 4] } });
  assert.deepEqual(report.keptDense.map((k) => k.name), ['model.22.dfl.conv.weight']);
  assert.match(report.keptDense[0].why, /fixed projection 0\.\.15/);
  const dfl = m.weight('model.22.dfl.conv.weight');
  assert.deepEqual(Array.from(m.readFloat(dfl)), Array.from({ length: 16 }, (_, i) => i), 'the projection is untouched');
  // (the first conv's 3 input channels hold no group of 4: N:M leaves it as it is)
  const others = m.prunable().filter((w) => w !== dfl && w.name !== 'model.0.conv.weight');
  assert.ok(others.length > 60 && others.every((w) => zerosOf(m, w) >= w.numel / 2), 'every other layer is at 2:4');
  const all = O.OnnxModel.parse(bytes);
  await O.runJob(all, { mode: { kind: 'nm', nm: [2, 4] }, keepDense: [] });
  assert.equal(zerosOf(all, all.weight('model.22.dfl.conv.weight')), 8);
  // a weight that only looks like one (not 0..C-1) is pruned as any other
  const other = O.OnnxModel.parse(bytes);
  other.writeFloat(other.weight('model.22.dfl.conv.weight'), Array.from({ length: 16 }, (_, i) => i + 1));
  assert.deepEqual((await O.runJob(other, { mode: { kind: 'nm', nm: [2, 4] } })).report.keptDense, []);
});
