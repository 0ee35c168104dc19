// The drop-in output for transformers.js (issue 39, item 5): a transformers.js model folder pruned
// (and quantized) into a folder of the same layout that `pipeline()` of @huggingface/transformers
// loads offline, unchanged; its embeddings are those of the written model run through the module,
// and close to the original folder's. The input folder is tests/data/models/tjs-bert (a small BERT
// with a real WordPiece tokenizer, tests/gen/tjs_bert_folder.py), with its q8 variant.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { pipeline, env } from '@huggingface/transformers';
import { build, CLI, ROOT } from './build.mjs';

build();
const O = await import('sparsekit-wasm/onnx');
const I = await import('#onnx-internal');
const G = await import('./graphs.mjs');

const SRC = path.join(ROOT, 'tests/data/models/tjs-bert');
// Lines of a licence text (not the tokenizer's vocabulary source): real words, punctuation, casing.
const LINES = [
  'Permission is hereby granted, free of charge, to any person obtaining a copy of this software.',
  'The above copyright notice and this permission notice shall be included in all copies.',
  'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED.',
  'In no event shall the authors be liable for any claim, damages or other liability.',
  'You may not use this file except in compliance with the License.',
  'Redistributions of source code must retain the above copyright notice.',
];

let dir;
before(() => {
  dir = G.tmpDir('sk-dropin-');
  env.allowRemoteModels = false;
  env.localModelPath = dir;
  fs.cpSync(SRC, path.join(dir, 'orig'), { recursive: true });
});

const cli = (...args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
const load = (name, dtype) => pipeline('feature-extraction', name, { local_files_only: true, ...(dtype ? { dtype } : {}) });
const cos = (a, b) => {
  let ab = 0, aa = 0, bb = 0;
  for (let i = 0; i < a.length; i++) { ab += a[i] * b[i]; aa += a[i] * a[i]; bb += b[i] * b[i]; }
  return ab / Math.sqrt(aa * bb);
};
/** Mean-pooled, normalised sentence embeddings, one Float32Array per line. */
async function embed(p) {
  const t = await p(LINES, { pooling: 'mean', normalize: true });
  const d = t.dims[1];
  return LINES.map((_, i) => t.data.slice(i * d, (i + 1) * d));
}

/**
 * The written model run by onnxruntime-node through the module (its tokenizer, its samples, its
 * runner) against pipeline()'s last hidden state, token by token: the same ids, the same values.
 */
async function checkAgainstModule(p, folder) {
  const files = await O.resolveTextModel(folder);
  const model = await O.loadOnnx(files.model);
  const set = await O.readTextSamples(writeLines(), { tokenizer: files.tokenizer, seqLen: 128, inputs: model.inputs, outputs: model.outputs, kind: 'encoder' });
  // each line at its own length, as pipeline() runs one line: a q8 model quantizes its activations
  // with a range over the whole tensor, padding included, so a padded run is not the same arithmetic
  const unpadded = set.samples.map(({ feeds }) => {
    const n = feeds.attention_mask.data.reduce((a, b) => a + Number(b), 0);
    return { feeds: Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, { ...t, data: t.data.slice(0, n), dims: [1, n] }])) };
  });
  // with external data, onnxruntime reads the written folder's files (the bytes alone cannot hold them)
  const outs = model.externalTensors().length ? await runFile(files.model, unpadded) : await I.runSet(O.makeOrtRunner(ort), model.encode(), unpadded);
  let worst = 0;
  for (let i = 0; i < LINES.length; i++) {
    const ours = outs[i].last_hidden_state;
    const theirs = await p(LINES[i], { pooling: 'none' });
    const [, s, d] = theirs.dims;
    assert.deepEqual(Array.from(unpadded[i].feeds.input_ids.data, Number), Array.from((await p.tokenizer(LINES[i])).input_ids.data, Number), `line ${i}: the same ids`);
    assert.equal(outs[i].last_hidden_state.dims[1], s);
    for (let k = 0; k < s * d; k++) worst = Math.max(worst, Math.abs(ours[k] - theirs.data[k]));
  }
  assert.ok(worst <= 1e-5, `pipeline() and the module's run differ by ${worst}`);
  return worst;
}

async function runFile(file, samples) {
  const session = await ort.InferenceSession.create(file);
  const outs = [];
  for (const { feeds } of samples) {
    const o = await session.run(Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, new ort.Tensor(t.type, t.data, t.dims)])));
    outs.push({ last_hidden_state: Object.assign(o.last_hidden_state.data, { dims: o.last_hidden_state.dims }) });
  }
  return outs;
}

function writeLines() {
  const f = path.join(dir, 'lines.txt');
  fs.writeFileSync(f, LINES.join('\n') + '\n');
  return f;
}

/** The other files of a written folder are the input's (config.json: plus transformers.js_config). */
function checkCopied(out, dtype) {
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']) {
    assert.deepEqual(fs.readFileSync(path.join(out, f)), fs.readFileSync(path.join(SRC, f)), f);
  }
  const cfg = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'));
  const orig = JSON.parse(fs.readFileSync(path.join(SRC, 'config.json'), 'utf8'));
  const { 'transformers.js_config': tjs, ...rest } = cfg;
  assert.deepEqual(rest, orig);
  assert.equal(tjs.dtype, dtype);
  assert.deepEqual(fs.readdirSync(path.join(out, 'onnx')), [`model${I.TJS_SUFFIX[dtype]}.onnx`], 'the written model only, under its dtype\'s name');
}

test('prune --sparsity 0.1 --quantize int8 into a folder: pipeline() loads it offline as q8, equal to the module\'s run, close to the original', async () => {
  const out = path.join(dir, 'q8');
  const r = cli('prune', path.join(dir, 'orig'), '-o', `${out}/`, '--sparsity', '0.1', '--quantize', 'int8', '-q');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /transformers\.js folder \(onnx\/model_quantized\.onnx, dtype q8/);
  checkCopied(out, 'q8');
  assert.ok(!fs.readdirSync(dir).some((f) => f.includes('.tmp-')), 'no temporary folder left');

  const pruned = await load('q8', 'q8');
  const byConfig = await load('q8'); // config.json names the dtype: no option needed
  await checkAgainstModule(pruned, out);
  const original = await load('orig', 'fp32');
  const [a, b, c] = [await embed(original), await embed(pruned), await embed(byConfig)];
  assert.deepEqual(c, b, 'the dtype from config.json is the same file');
  closeTo(a, b, 0.9);
});

/**
 * Each line's embedding close to the original's, and nearer it than any other line's: cosines of the
 * embeddings centred on the original lines' mean (all lines of an encoder share a large common
 * component that says nothing of the line), so a broken model (weights shuffled, the wrong file) fails.
 */
function closeTo(a, b, bound) {
  const mean = a[0].map((_, k) => a.reduce((s, x) => s + x[k], 0) / a.length);
  const c = (x) => x.map((v, k) => v - mean[k]);
  const [ca, cb] = [a.map(c), b.map(c)];
  const same = ca.map((x, i) => cos(x, cb[i]));
  let cross = -1;
  for (let i = 0; i < ca.length; i++) for (let j = 0; j < ca.length; j++) if (i !== j) cross = Math.max(cross, cos(ca[i], cb[j]));
  console.log(`centred cosine to the original: min ${Math.min(...same).toFixed(4)}; to another line's: max ${cross.toFixed(4)}`);
  assert.ok(Math.min(...same) >= bound, `centred cosine to the original ${same.map((x) => x.toFixed(4)).join(', ')} (bound ${bound})`);
  assert.ok(Math.min(...same) > cross, 'each line is nearer its own original than any other line');
}

test('a q8 model of a folder as input (FOLDER/onnx/model_quantized.onnx): read back, pruned, written again as q8 with the folder\'s files; pipeline() loads it, equal to the module\'s run, close to the original q8', async () => {
  const out = path.join(dir, 'from-q8');
  const r = cli('prune', path.join(dir, 'orig', 'onnx', 'model_quantized.onnx'), '-o', `${out}/`, '--sparsity', '0.1', '-q');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /quantized again in the input's scheme/);
  assert.match(r.stdout, /dtype q8/);
  checkCopied(out, 'q8');
  const pruned = await load('from-q8', 'q8');
  await checkAgainstModule(pruned, out);
  // Against the float original: onnxruntime's u8·s8 MatMulInteger of the original q8 file (full ±127
  // weight codes) saturates its 16-bit pair sums on x86 CPUs without VNNI, so that file's own
  // embeddings depend on the machine (centred cosine to float 0.76–0.89 on an AVX2-only host); the
  // file written here holds ±63 codes (quant/grid.ts, reduceRange), which no CPU saturates.
  closeTo(await embed(await load('orig', 'fp32')), await embed(pruned), 0.9);
});

test('which variant a folder input reads: model.onnx first, a dtype (module) or the path names another, the only one, or several refused by name', async () => {
  assert.equal(path.basename((await O.resolveTextModel(SRC)).model), 'model.onnx');
  assert.equal((await O.resolveTextModel(SRC)).dtype, 'fp32');
  const q = await O.resolveTextModel(SRC, { dtype: 'q8' });
  assert.equal(path.basename(q.model), 'model_quantized.onnx');
  assert.equal(q.folder, SRC);
  // given by path, a file of the folder still belongs to it (a drop-in output copies its files)
  assert.equal((await O.resolveTextModel(path.join(SRC, 'onnx', 'model_quantized.onnx'))).folder, SRC);
  await assert.rejects(O.resolveTextModel(SRC, { dtype: 'q4' }), (e) => e instanceof O.OnnxError && /no model_q4\.onnx.*model\.onnx, model_quantized\.onnx/.test(e.message));
  await assert.rejects(O.resolveTextModel(SRC, { dtype: 'q3' }), (e) => e instanceof O.OnnxError && /not one of/.test(e.message));
  const two = path.join(dir, 'two');
  fs.cpSync(SRC, two, { recursive: true });
  fs.renameSync(path.join(two, 'onnx', 'model.onnx'), path.join(two, 'onnx', 'model_fp16.onnx'));
  const r = cli('prune', two, '-o', path.join(dir, 'two-out/'), '--sparsity', '0.1', '-q');
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr.trim(), /^[^\n]*model_fp16\.onnx, model_quantized\.onnx and no model\.onnx[^\n]*by its path[^\n]*$/);
  assert.ok(!fs.existsSync(path.join(dir, 'two-out')));
  fs.rmSync(path.join(two, 'onnx', 'model_fp16.onnx'));
  assert.equal((await O.resolveTextModel(two)).dtype, 'q8', 'the only variant');
});

test('a q8 folder in a scheme that cannot be read back: refused in one line naming it, exit 1, no folder', () => {
  const bad = path.join(dir, 'qlinear');
  fs.cpSync(SRC, bad, { recursive: true });
  fs.rmSync(path.join(bad, 'onnx', 'model.onnx'));
  const m = I.ModelProto.decode(fs.readFileSync(path.join(bad, 'onnx', 'model_quantized.onnx')));
  m.graph.node.find((n) => n.op_type === 'MatMulInteger').op_type = 'QLinearMatMul';
  fs.writeFileSync(path.join(bad, 'onnx', 'model_quantized.onnx'), I.ModelProto.encode(m).finish());
  const out = path.join(dir, 'qlinear-out');
  const r = cli('prune', bad, '-o', `${out}/`, '--sparsity', '0.1', '-q');
  assert.equal(r.status, 1, r.stdout);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /QLinearMatMul/);
  assert.ok(!fs.existsSync(out), 'nothing written');
});

test('-o DIR/ needs a transformers.js folder input and a new or empty folder; a single file otherwise', () => {
  const lone = path.join(dir, 'lone');
  fs.mkdirSync(lone);
  fs.copyFileSync(path.join(SRC, 'onnx', 'model.onnx'), path.join(lone, 'm.onnx'));
  let r = cli('prune', path.join(lone, 'm.onnx'), '-o', path.join(dir, 'lone-out/'), '--sparsity', '0.1', '-q');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /names a folder: a transformers\.js model folder is written from one/);
  assert.ok(!fs.existsSync(path.join(dir, 'lone-out')));
  const full = path.join(dir, 'full');
  fs.mkdirSync(full);
  fs.writeFileSync(path.join(full, 'keep.txt'), 'mine');
  r = cli('prune', path.join(dir, 'orig'), '-o', full, '--sparsity', '0.1', '-q');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /exists and is not empty/);
  assert.deepEqual(fs.readdirSync(full), ['keep.txt']);
  // an empty existing folder is a folder target; without the slash and not existing, a file
  const empty = path.join(dir, 'empty');
  fs.mkdirSync(empty);
  assert.equal(cli('prune', path.join(dir, 'orig'), '-o', empty, '--sparsity', '0.1', '-q').status, 0);
  assert.ok(fs.existsSync(path.join(empty, 'onnx', 'model.onnx')), 'fp32 stays model.onnx');
  assert.equal(cli('prune', path.join(dir, 'orig'), '-o', path.join(dir, 'single.onnx'), '--sparsity', '0.1', '-q').status, 0);
  assert.ok(fs.statSync(path.join(dir, 'single.onnx')).isFile());
});

/** The folder with its model's tensors in onnx/model.onnx_data, as transformers.js ships large models. */
function externalFolder(to) {
  fs.cpSync(SRC, to, { recursive: true });
  fs.rmSync(path.join(to, 'onnx', 'model_quantized.onnx'));
  const file = path.join(to, 'onnx', 'model.onnx');
  const model = I.ModelProto.decode(fs.readFileSync(file));
  const chunks = [];
  let off = 0;
  for (const t of model.graph.initializer) {
    if (t.data_type !== 1 || t.raw_data.length < 256) continue;
    chunks.push(Buffer.from(t.raw_data));
    t.external_data = [{ key: 'location', value: 'model.onnx_data' }, { key: 'offset', value: String(off) }, { key: 'length', value: String(t.raw_data.length) }];
    t.data_location = 1;
    t.raw_data = new Uint8Array(0);
    off += chunks[chunks.length - 1].length;
  }
  fs.writeFileSync(file + '_data', Buffer.concat(chunks));
  fs.writeFileSync(file, I.ModelProto.encode(model).finish());
  const cfgFile = path.join(to, 'config.json');
  const cfg = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
  fs.writeFileSync(cfgFile, JSON.stringify({ ...cfg, 'transformers.js_config': { use_external_data_format: { 'model.onnx': 1 } } }));
}

test('external data: written as onnx/<file>_data with use_external_data_format for that file; pipeline() loads it', async () => {
  externalFolder(path.join(dir, 'ext'));
  const src = await O.loadOnnx(path.join(dir, 'ext', 'onnx', 'model.onnx'));
  assert.deepEqual(src.externalLocations, ['model.onnx_data']);
  for (const [name, args, dtype] of [['ext-fp32', [], 'fp32'], ['ext-q8', ['--quantize', 'int8'], 'q8']]) {
    const out = path.join(dir, name);
    const r = cli('prune', path.join(dir, 'ext'), '-o', `${out}/`, '--sparsity', '0.1', ...args, '-q');
    assert.equal(r.status, 0, r.stderr);
    const file = `model${I.TJS_SUFFIX[dtype]}.onnx`;
    assert.deepEqual(fs.readdirSync(path.join(out, 'onnx')).sort(), [file, `${file}_data`]);
    const tjs = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'))['transformers.js_config'];
    assert.deepEqual(tjs, { dtype, use_external_data_format: { [file]: 1 } });
    const written = await O.loadOnnx(path.join(out, 'onnx', file));
    assert.deepEqual(written.externalLocations, [`${file}_data`]);
    const p = await load(name);
    await checkAgainstModule(p, out);
  }
});

test('the job: output layout transformers.js reports the dtype and file; a bad layout is a JobError', async () => {
  const model = await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx'));
  const res = await O.runJob(model, { mode: { kind: 'nm', nm: [2, 4] }, quantize: { scheme: 'int4' }, output: { layout: 'transformers.js' } });
  assert.deepEqual(res.report.output, { layout: 'transformers.js', dtype: 'q4', file: 'onnx/model_q4.onnx' });
  // an encoder's int4 MatMuls are widened to the int8 graph at load by default (quant/int4-dynamic.ts); MatMulNBits on request
  const forms = (r) => new Set(r.report.quantize.layers.filter((l) => l.op === 'MatMul').map((l) => l.form));
  assert.deepEqual([...forms(res)], ['int4-dynamic']);
  const nb = await O.runJob(await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx')), { mode: { kind: 'sparsity', sparsity: 0 }, quantize: { scheme: 'int4', int4MatMul: 'nbits' }, output: { layout: 'transformers.js' } });
  assert.deepEqual([...forms(nb)], ['int4-nbits']);
  assert.equal(nb.report.output.dtype, 'q4');
  const plain = await O.runJob(await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx')), { mode: { kind: 'sparsity', sparsity: 0.1 } });
  assert.equal(plain.report.output, undefined);
  assert.throws(() => O.checkJob({ mode: { kind: 'sparsity', sparsity: 0.1 }, output: { layout: 'zip' } }), (e) => e instanceof O.JobError && e.option === 'output.layout');
  // the folder writer refuses a layout that is not the model's
  await assert.rejects(O.saveTransformersFolder(model, path.join(dir, 'wrong'), { from: SRC, output: { layout: 'transformers.js', dtype: 'q8', file: 'onnx/model_quantized.onnx' } }), O.OnnxError);
  assert.ok(!fs.existsSync(path.join(dir, 'wrong')));
  const saved = await O.saveTransformersFolder(res.model, path.join(dir, 'q4'), { from: SRC, output: res.report.output });
  assert.deepEqual(saved.copied, ['config.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']);
  const emb = await embed(await load('q4'));
  assert.ok(emb.every((e) => e.every(Number.isFinite)), 'the q4 folder runs in pipeline()');
});

// PruneJob.tokenizer (text/unreachable-tokens.ts): the token rows the folder's WordPiece tokenizer can
// never produce are zeroed; every text it encodes runs bit for bit as before, and the rows are zeros.
test('the job with the tokenizer: its unreachable token rows zeroed, the output for real text unchanged bit for bit', async () => {
  const tokenizer = JSON.parse(fs.readFileSync(path.join(SRC, 'tokenizer.json'), 'utf8'));
  const { ids } = I.unreachableTokens(tokenizer);
  assert.ok(ids.length > 0);
  const original = await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx'));
  const model = await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx'));
  const res = await O.runJob(model, { mode: { kind: 'sparsity', sparsity: 0 }, tokenizer });
  const u = res.report.unreachableTokens;
  assert.equal(u.tokens, ids.length);
  assert.equal(u.tables.length, 1, JSON.stringify(u));
  assert.equal(u.tables[0].rows, ids.length);
  const table = model.weights.find((w) => w.name === u.tables[0].name);
  const [rows, cols] = table.dims;
  const before = original.readFloat(original.weights.find((w) => w.name === table.name)), after = model.readFloat(table);
  const zeroRows = new Set(ids);
  for (let r = 0; r < rows; r++) {
    const row = after.subarray(r * cols, (r + 1) * cols);
    if (zeroRows.has(r)) assert.ok(row.every((v) => v === 0), `row ${r} zeroed`);
    else assert.deepEqual(row, before.subarray(r * cols, (r + 1) * cols), `row ${r} kept`);
  }
  const set = await O.readTextSamples(writeLines(), { tokenizer: path.join(SRC, 'tokenizer.json'), seqLen: 128, inputs: model.inputs, outputs: model.outputs, kind: 'encoder' });
  const runner = O.makeOrtRunner(ort);
  const [a, b] = [await I.runSet(runner, original.encode(), set.samples), await I.runSet(runner, model.encode(), set.samples)];
  a.forEach((o, i) => assert.deepEqual(b[i].last_hidden_state, o.last_hidden_state, `line ${i}`));
  // ids outside the tokenizer's reach do change: the test sees the rows it zeroed
  const far = { feeds: { ...set.samples[0].feeds, input_ids: { ...set.samples[0].feeds.input_ids, data: set.samples[0].feeds.input_ids.data.map((v, k) => (k === 1 ? BigInt(ids[0]) : v)) } } };
  const [fa, fb] = [await I.runSet(runner, original.encode(), [far]), await I.runSet(runner, model.encode(), [far])];
  assert.notDeepEqual(fb[0].last_hidden_state, fa[0].last_hidden_state);
});

test('the job with the tokenizer: a token table read by another node too (a tied head) is left whole, and said; a byte-level BPE tokenizer zeroes nothing', async () => {
  const tokenizer = JSON.parse(fs.readFileSync(path.join(SRC, 'tokenizer.json'), 'utf8'));
  const model = await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx'));
  const gather = model.graph.node.find((n) => n.op_type === 'Gather' && model.graph.input.some((i) => i.name === n.input[1]) && n.input[1] === 'input_ids');
  const table = gather.input[0];
  // a second reader: the table's transpose as an extra output (what a tied language-model head reads)
  model.graph.node.push({ op_type: 'Transpose', name: 'tied_head_t', input: [table], output: ['tied_t'], attribute: [], domain: '' });
  model.graph.output.push({ name: 'tied_t', type: model.graph.output[0].type });
  model.refresh();
  const before = model.readFloat(model.weights.find((w) => w.name === table));
  const res = await O.runJob(model, { mode: { kind: 'sparsity', sparsity: 0 }, tokenizer });
  assert.deepEqual(res.report.unreachableTokens.tables, []);
  assert.equal(res.report.unreachableTokens.left.length, 1);
  assert.match(res.report.unreachableTokens.left[0].why, /also read by Transpose "tied_head_t"/);
  assert.deepEqual(model.readFloat(model.weights.find((w) => w.name === table)), before);
  const bpe = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/data/tokenizers/smollm2-135m.json'), 'utf8'));
  const r2 = await O.runJob(await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx')), { mode: { kind: 'sparsity', sparsity: 0 }, tokenizer: bpe });
  assert.deepEqual([r2.report.unreachableTokens.tokens, r2.report.unreachableTokens.tables], [0, []]);
  assert.throws(() => O.checkJob({ mode: { kind: 'sparsity', sparsity: 0 }, tokenizer: 'tokenizer.json' }), (e) => e instanceof O.JobError && e.option === 'tokenizer');
});

// no --seq-len: the default is cut to the folder's config.json max_position_embeddings (128 here, not 256)
test('prune FOLDER --calib TEXT: the folder\'s tokenizer zeroes its unreachable rows (said); a generated calibration set does not', () => {
  const out = path.join(dir, 'vocab-q8');
  const r = cli('prune', path.join(dir, 'orig'), '-o', `${out}/`, '--sparsity', '0.1', '--method', 'wanda', '--calib', writeLines(), '--quantize', 'int8');
  assert.equal(r.status, 0, r.stderr);
  const { ids } = I.unreachableTokens(JSON.parse(fs.readFileSync(path.join(SRC, 'tokenizer.json'), 'utf8')));
  assert.match(r.stdout, new RegExp(`token rows zeroed: ${ids.length} of \\S+ \\(${ids.length} of the tokenizer's \\d+ ids no text produces\\)`));
  const synth = cli('prune', path.join(dir, 'orig'), '-o', path.join(dir, 'vocab-synth.onnx'), '--sparsity', '0.1', '--method', 'wanda');
  assert.equal(synth.status, 0, synth.stderr);
  assert.doesNotMatch(synth.stdout, /token rows/);
});

test('prune --quantize alone: quantization without pruning, no weight zeroed beyond the codes\' own zeros', async () => {
  const out = path.join(dir, 'q-alone.onnx');
  const r = cli('prune', path.join(SRC, 'onnx', 'model.onnx'), '-o', out, '--quantize', 'int8', '-q');
  assert.equal(r.status, 0, r.stderr);
  const q = await O.loadOnnx(out);
  assert.ok(q.graph.node.some((n) => n.op_type === 'MatMulInteger'), 'quantized');
  // read back, the float weights hold no more zeros than rounding to the int8 grid gives the original's
  const back = await O.loadOnnx(out);
  I.dequantizeModel(back);
  const orig = await O.loadOnnx(path.join(SRC, 'onnx', 'model.onnx'));
  const zeros = (m) => m.prunable().reduce((a, w) => a + m.readFloat(w).filter((v) => v === 0).length, 0);
  const n = orig.prunable().reduce((a, w) => a + w.numel, 0);
  assert.ok(zeros(back) < 0.05 * n, `${zeros(back)} zeros of ${n}: nothing pruned`);
  const none = cli('prune', path.join(SRC, 'onnx', 'model.onnx'), '-o', path.join(dir, 'none.onnx'), '-q');
  assert.equal(none.status, 2);
  assert.match(none.stderr, /or --quantize alone/);
});

test('prune --quantize int4,embeddings=int3: the tables on 8 levels, the matrices on int4\'s; a wrong value names --quantize', async () => {
  const model = path.join(SRC, 'onnx', 'model.onnx');
  const forms = (name, q) => {
    const out = path.join(dir, `${name}.onnx`);
    const r = cli('prune', model, '-o', out, '--quantize', q, '--report', `${out}.json`, '-q');
    assert.equal(r.status, 0, r.stderr);
    const layers = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8')).quantize.layers;
    return { tables: new Set(layers.filter((l) => l.op === 'Gather').map((l) => `${l.form}/${l.bits}`)), rest: new Set(layers.filter((l) => l.op !== 'Gather').map((l) => l.form)) };
  };
  const t3 = forms('t3', 'int4,embeddings=int3'), t4 = forms('t4', 'int4');
  assert.deepEqual([...t3.tables], ['int3-gather/3']);
  assert.deepEqual([...t4.tables], ['int4-gather/4']);
  assert.deepEqual([...t3.rest], [...t4.rest], 'the matrices are written alike');
  assert.deepEqual([...forms('t8', 'int4,embeddings=int8').tables], ['int8-gather/8']);
  for (const [q, re] of [['int4,embeddings=int2', /--quantize.*int3/], ['int4,group=64', /only one embeddings=/], ['int4,embeddings=int3,embeddings=int4', /only one embeddings=/]]) {
    const r = cli('prune', model, '-o', path.join(dir, 'never.onnx'), '--quantize', q, '-q');
    assert.equal(r.status, 2, `${q}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.ok(!fs.existsSync(path.join(dir, 'never.onnx')));
  }
});
