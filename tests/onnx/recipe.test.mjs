// Recipes: per-layer settings from JSON, honoured layer by layer (ignore patterns, exact names, globs,
// regexes, the default), through the module and `prune --recipe`; a bad recipe exits 2 with one line
// and leaves no output file.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { build, CLI } from './build.mjs';
import { writeNpy } from './npy.mjs';

build();
const O = await import('#onnx-internal');
const G = await import('./graphs.mjs');

let dir;
before(() => { dir = G.tmpDir('sk-recipe-'); });

function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const zeros = (v) => v.reduce((a, x) => a + (x === 0 ? 1 : 0), 0);
const write = (name, obj) => { const f = path.join(dir, name); fs.writeFileSync(f, typeof obj === 'string' ? obj : JSON.stringify(obj)); return f; };

/** Every group of m consecutive input channels (per output, per kernel position) keeps at most n. */
function isNm(v, [o, c, kh, kw], n, m) {
  for (let a = 0; a < o; a++) for (let p = 0; p < kh * kw; p++) for (let g = 0; g < c; g += m) {
    let nz = 0;
    for (let j = g; j < g + m; j++) if (v[(a * c + j) * kh * kw + p] !== 0) nz++;
    if (nz > n) return false;
  }
  return true;
}

const HAND = {
  sparsekit: 'recipe/1',
  default: { sparsity: 0.5 },
  layers: { 'A.w': { sparsity: 0.75 }, '/^[BC]\\.w$/': { nm: '2:4' } },
  ignore: ['fc.*'],
};

function checkHand(m, original) {
  const get = (n) => m.readFloat(m.weight(n));
  assert.equal(zeros(get('A.w')), Math.round(0.75 * 8 * 4 * 9), 'A.w: its own sparsity, by exact name');
  assert.ok(isNm(get('B.w'), [8, 8, 3, 3], 2, 4), 'B.w: 2:4 by the regex');
  assert.ok(isNm(get('C.w'), [6, 8, 1, 1], 2, 4), 'C.w: 2:4 by the regex');
  assert.equal(zeros(get('B.w')), 8 * 8 * 9 / 2);
  assert.deepEqual(Array.from(get('fc.w')), Array.from(original.readFloat(original.weight('fc.w'))), 'fc.w: ignored by the glob, untouched');
}

test('a hand-written recipe: ignore glob, exact name, regex, default (module)', async () => {
  const bytes = G.residual();
  const original = O.OnnxModel.parse(bytes);
  const m = O.OnnxModel.parse(bytes);
  const rep = await O.applyRecipe(m, HAND);
  checkHand(m, original);
  assert.equal(rep.recipe.source['fc.w'], 'ignore: fc.*');
  assert.equal(rep.recipe.source['A.w'], 'layers: A.w');
  assert.equal(rep.recipe.settings['B.w'], '2:4');
  // Exact names win over patterns; the first matching pattern wins over later ones.
  const r2 = O.resolveRecipe(O.parseRecipe({ layers: { '*.w': 'dense', 'A.w': { sparsity: 0.1 }, '?.w': { sparsity: 0.9 } } }), O.layerUnits(original));
  assert.deepEqual(r2.settings.get('A.w'), { kind: 'sparsity', sparsity: 0.1 });
  assert.deepEqual(r2.settings.get('B.w'), { kind: 'dense' });
});

test('prune --recipe writes what the recipe says, layer by layer', async () => {
  const input = path.join(dir, 'residual.onnx');
  fs.writeFileSync(input, G.residual());
  const out = path.join(dir, 'out.onnx');
  const r = cli('prune', input, '-o', out, '--recipe', write('hand.json', HAND), '-q');
  assert.equal(r.code, 0, r.err);
  checkHand(await O.loadOnnx(out), O.OnnxModel.parse(G.residual()));
  // The written model still runs.
  const s = await ort.InferenceSession.create(out);
  const y = await s.run({ x: new ort.Tensor('float32', new Float32Array(4 * 64).fill(0.5), [1, 4, 8, 8]) });
  assert.equal(y.y.dims.join(), '1,5');
});

test('a recipe that names no existing layer, or malformed JSON: exit 2, one line, no output file', () => {
  const input = path.join(dir, 'residual2.onnx');
  fs.writeFileSync(input, G.residual());
  const cases = [
    [write('typo.json', { default: { sparsity: 0.5 }, layers: { 'conv9.w': 'dense' } }), /conv9\.w.*matches no prunable layer/],
    [write('typo-ignore.json', { default: { sparsity: 0.5 }, ignore: ['head.*'] }), /head\.\*.*matches no prunable layer/],
    [write('bad.json', '{"default": {"sparsity": 0.5},'), /not valid JSON/],
    [write('bad-nm.json', { default: { nm: '4:2' } }), /nm must be "N:M"/],
    [write('mixed.json', { default: { sparsity: 0.5 }, layers: { 'A.w': { channels: 0.5 } } }), /cannot be mixed/],
    [write('unknown-key.json', { defaults: { sparsity: 0.5 } }), /unknown key "defaults"/],
    [path.join(dir, 'missing.json'), /cannot read --recipe/],
  ];
  for (const [recipe, re] of cases) {
    const out = path.join(dir, `never-${path.basename(recipe)}.onnx`);
    const r = cli('prune', input, '-o', out, '--recipe', recipe);
    assert.equal(r.code, 2, `${recipe}: ${r.err}`);
    assert.equal(r.err.trim().split('\n').length, 1, r.err);
    assert.match(r.err, re);
    assert.ok(!fs.existsSync(out), 'no output file');
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith(`never-${path.basename(recipe)}`)), [], 'no temporary file left');
  }
});

test('a channels recipe: one group at its own fraction, the rest left whole', async () => {
  const bytes = G.residual();
  const m = O.OnnxModel.parse(bytes);
  const units = O.groupUnits(m);
  const groups = O.findChannelGroups(m).groups.filter((g) => g.prunable);
  assert.ok(groups.length >= 1);
  const target = groups[0];
  const rep = await O.applyRecipe(m, { default: 'dense', layers: { [target.producers[0]]: { channels: 0.5 } }, roundTo: 1 });
  assert.ok(units.some((u) => u.name === target.producers[0]));
  const after = O.findChannelGroups(m).groups.find((g) => g.producers[0] === target.producers[0]);
  assert.equal(after.channels, Math.round(target.channels / 2));
  for (const g of groups.slice(1)) {
    const a = O.findChannelGroups(m).groups.find((x) => x.producers[0] === g.producers[0]);
    assert.equal(a.channels, g.channels, `group of ${g.producers[0]} left whole`);
  }
  assert.ok(rep.params.after < rep.params.before);
});

test('a calibrated recipe (sparsegpt): per-layer targets, a dense layer left as it was', async () => {
  const bytes = G.mlp();
  const m = O.OnnxModel.parse(bytes);
  const w2 = Array.from(m.readFloat(m.weight('W2')));
  const calibDir = path.join(dir, 'calib-mlp');
  fs.mkdirSync(calibDir, { recursive: true });
  const r = G.rng(3);
  for (let i = 0; i < 8; i++) writeNpy(path.join(calibDir, `s${i}.npy`), Float32Array.from({ length: 160 }, () => r()), [1, 10, 16]);
  const calibration = await O.readCalibrationDir(calibDir, m);
  const rep = await O.applyRecipe(m, { method: 'sparsegpt', layers: { W1: { sparsity: 0.5 }, W2: 'dense' } }, { ort, calibration });
  assert.deepEqual(Array.from(m.readFloat(m.weight('W2'))), w2);
  assert.equal(zeros(m.readFloat(m.weight('W1'))), 16 * 32 / 2);
  assert.equal(rep.layers.find((l) => l.name === 'W1').method, 'sparsegpt');
  // The same through the CLI.
  const input = path.join(dir, 'mlp.onnx');
  fs.writeFileSync(input, bytes);
  const out = path.join(dir, 'mlp-out.onnx');
  const c = cli('prune', input, '-o', out, '--recipe', write('mlp.json', { method: 'sparsegpt', layers: { W1: { sparsity: 0.5 }, W2: 'dense' } }), '--calib', calibDir, '-q');
  assert.equal(c.code, 0, c.err);
  const f = await O.loadOnnx(out);
  assert.deepEqual(Array.from(f.readFloat(f.weight('W1'))), Array.from(m.readFloat(m.weight('W1'))), 'CLI and module give the same weights');
});

test('pruneSparsity / pruneNm per-layer targets: null leaves a layer dense; global scope is refused', () => {
  const m = O.OnnxModel.parse(G.residual());
  const before = Array.from(m.readFloat(m.weight('B.w')));
  O.pruneSparsity(m, { layerTarget: (w) => (w.name === 'A.w' ? 0.5 : null) });
  assert.equal(zeros(m.readFloat(m.weight('A.w'))), 8 * 4 * 9 / 2);
  assert.deepEqual(Array.from(m.readFloat(m.weight('B.w'))), before);
  assert.throws(() => O.pruneSparsity(m, { scope: 'global', layerTarget: () => 0.5 }), /scope global/);
  O.pruneNm(m, { layerTarget: (w) => (w.name === 'B.w' ? [1, 4] : null) });
  assert.ok(isNm(m.readFloat(m.weight('B.w')), [8, 8, 3, 3], 1, 4));
});

test('a sparsity setting with its block and scope: each layer as pruneSparsity prunes it, global pools per setting', () => {
  const recipe = {
    layers: {
      'A.w': { sparsity: 0.5, block: '4x4' },
      'B.w': { sparsity: 0.75, block: [2, 1], scope: 'row' },
      'C.w': { sparsity: 0.5, scope: 'global', block: '2x2' },
      'fc.w': { sparsity: 0.5, scope: 'global', block: '2x2' },
    },
  };
  const parsed = O.parseRecipe(recipe);
  assert.deepEqual(parsed.rules[1].setting, { kind: 'sparsity', sparsity: 0.75, block: [2, 1], scope: 'row' });
  assert.deepEqual(O.settingJson(parsed.rules[1].setting), { sparsity: 0.75, block: '2x1', scope: 'row' });
  assert.deepEqual(O.parseRecipe(O.recipeJson({ layers: parsed.rules.map((r) => [r.pattern.source, r.setting]) })).rules.map((r) => r.setting), parsed.rules.map((r) => r.setting), 'recipeJson writes it back');
  const m = O.OnnxModel.parse(G.residual());
  return O.applyRecipe(m, recipe).then((rep) => {
    // the oracle: the module's one-shot calls, one per setting, the other layers left out
    const want = O.OnnxModel.parse(G.residual());
    const only = (names) => (w) => (names.includes(w.name) ? undefined : null);
    O.pruneSparsity(want, { sparsity: 0.5, block: [4, 4], layerTarget: only(['A.w']) });
    O.pruneSparsity(want, { sparsity: 0.75, block: [2, 1], scope: 'row', layerTarget: only(['B.w']) });
    O.pruneSparsity(want, { sparsity: 0.5, block: [2, 2], scope: 'global', layerTarget: only(['C.w', 'fc.w']) });
    for (const w of want.prunable()) assert.deepEqual(Array.from(m.readFloat(m.weight(w.name))), Array.from(want.readFloat(w)), w.name);
    assert.equal(zeros(m.readFloat(m.weight('A.w'))), 8 * 4 * 9 / 2);
    assert.equal(rep.recipe.settings['B.w'], 'sparsity 0.75 block 2x1 scope row');
    assert.ok(zeros(m.readFloat(m.weight('C.w'))) > 0 && zeros(m.readFloat(m.weight('fc.w'))) > 0, 'both layers of the global pool are pruned');
    assert.equal(rep.recipe.settings['fc.w'], 'sparsity 0.5 block 2x2 scope global');
  });
});

test('block and scope: validated, and refused with a calibrated method', async () => {
  for (const [s, re] of [
    [{ sparsity: 0.5, block: '4x0' }, /block must be "RxC"/],
    [{ sparsity: 0.5, block: [4] }, /block must be "RxC"/],
    [{ sparsity: 0.5, scope: 'model' }, /scope must be layer, row or global/],
    [{ nm: '2:4', block: '4x4' }, /exactly one of sparsity/],
    [{ block: '4x4' }, /unknown setting "block"/],
  ]) assert.throws(() => O.parseRecipe({ default: s }), re, JSON.stringify(s));
  const m = O.OnnxModel.parse(G.mlp());
  const calibration = O.makeInputSet(m, { count: 2 });
  await assert.rejects(O.applyRecipe(m, { method: 'wanda', layers: { W1: { sparsity: 0.5, block: '4x4' } } }, { ort, calibration }), /W1: block and scope apply to method magnitude/);
});
