// Per-layer quantization (issue 39, item 6): a recipe's `quantize` per layer, parsed and checked;
// the quantizer's `layerBits` (each layer at its own bits, or left float, GPTQ at each layer's own
// grid); a recipe job that quantizes as its entries say, embedding tables named as units.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import { build } from './build.mjs';
import { tinyDecoder } from './text-models.mjs';

build();
const O = await import('#onnx-internal');
const { OnnxModel, parseRecipe, settingJson, quantizeModel, plannedGrids, runJob, makeInputSet, planRecipe } = O;

const lm = () => tinyDecoder({ dim: 64, vocab: 300 });
const formOf = (rep, name) => rep.layers.find((l) => l.name === name)?.form;
const ops = (m) => m.graph.node.map((n) => n.op_type);

test('recipe: "quantize" beside a pruning or alone (dense), written back as given; bad values and channels refused by name', () => {
  const r = parseRecipe({ default: { sparsity: 0.5, quantize: 'int4' }, layers: { a: { quantize: 'int8' }, b: { nm: '2:4', quantize: 'float' }, c: { dense: true, quantize: 'int4' }, d: 'dense' } });
  assert.deepEqual(r.default, { kind: 'sparsity', sparsity: 0.5, quantize: 'int4' });
  assert.deepEqual(r.rules.map((x) => x.setting), [
    { kind: 'dense', quantize: 'int8' }, { kind: 'nm', nm: [2, 4], quantize: 'float' }, { kind: 'dense', quantize: 'int4' }, { kind: 'dense' },
  ]);
  assert.deepEqual(r.rules.map((x) => settingJson(x.setting)), [{ quantize: 'int8' }, { nm: '2:4', quantize: 'float' }, { quantize: 'int4' }, 'dense']);
  assert.deepEqual(settingJson(r.default), { sparsity: 0.5, quantize: 'int4' });
  assert.throws(() => parseRecipe({ layers: { a: { quantize: 'int2' } } }), (e) => e.code === 'invalid_recipe' && /quantize must be int8, int4 or float/.test(e.message));
  assert.throws(() => parseRecipe({ layers: { a: { channels: 0.25, quantize: 'int8' } } }), (e) => e.code === 'invalid_recipe' && /channel removal/.test(e.message));
  assert.throws(() => parseRecipe({ default: { channels: 0.25 }, layers: { a: { quantize: 'int8' } } }), (e) => e.code === 'invalid_recipe' && /channels recipe/.test(e.message));
});

test('recipe: embedding tables are units for their bits; a table named with a pruning setting is refused', () => {
  const model = OnnxModel.parse(lm());
  const { resolved } = planRecipe(model, { default: { sparsity: 0.5 }, layers: { tok: { quantize: 'int8' } } });
  assert.deepEqual(resolved.settings.get('tok'), { kind: 'dense', quantize: 'int8' });
  // the default prunes layers; a table takes only its bits (none here)
  assert.deepEqual(resolved.settings.get('pos'), { kind: 'dense' });
  assert.deepEqual(resolved.settings.get('w1'), { kind: 'sparsity', sparsity: 0.5 });
  assert.throws(() => planRecipe(model, { layers: { tok: { sparsity: 0.5 } } }), (e) => e.code === 'invalid_recipe' && /embedding table/.test(e.message));
});

test('quantizeModel layerBits: each layer at its own bits, float layers left as plain MatMul, tables too; a bad value is a typed error', () => {
  const m = OnnxModel.parse(lm());
  const bits = { w1: 'int8', head: 'float', tok: 'int4', pos: 'float' };
  const r = quantizeModel(m, { scheme: 'int4', layerBits: (w) => bits[w.name] });
  assert.equal(formOf(r, 'w1'), 'int8-dynamic');
  assert.equal(formOf(r, 'head'), 'float');
  assert.equal(formOf(r, 'tok'), 'int4-gather');
  assert.equal(formOf(r, 'pos'), 'float');
  assert.match(r.layers.find((l) => l.name === 'head').note, /own setting/);
  // head is still a float MatMul reading its initializer; no MatMulNBits anywhere (no layer at int4)
  assert.ok(m.graph.node.some((n) => n.op_type === 'MatMul' && n.input[1] === 'head'));
  assert.ok(!ops(m).includes('MatMulNBits'));
  // int4 under the int8 scheme: the layer's own bits win, in blocks of the default group
  const m2 = OnnxModel.parse(lm());
  const r2 = quantizeModel(m2, { scheme: 'int8', layerBits: (w) => (w.name === 'head' ? 'int4' : undefined) });
  assert.equal(formOf(r2, 'head'), 'int4-nbits');
  assert.equal(formOf(r2, 'w1'), 'int8-dynamic');
  assert.equal(formOf(r2, 'tok'), 'int8-gather');
  const m3 = OnnxModel.parse(lm());
  assert.throws(() => quantizeModel(m3, { scheme: 'int8', layerBits: () => 'int3' }), (e) => e.code === 'invalid_arguments' && /int8, int4 or float/.test(e.message));
  // nothing changed on a refusal
  assert.deepEqual(ops(m3), ops(OnnxModel.parse(lm())));
});

test('plannedGrids: GPTQ quantizes each layer at its own grid, and not at all where the layer stays float', () => {
  const m = OnnxModel.parse(lm());
  const g = plannedGrids(m, { scheme: 'int4', layerBits: (w) => ({ w1: 'int8', head: 'float' })[w.name] });
  assert.ok(!g.has('head'));
  assert.equal(g.get('w1').bits, 8);
  const all = plannedGrids(m, { scheme: 'int4' });
  assert.equal(all.get('head').bits, 4);
});

test('runJob with a recipe: its layers\' bits override the job\'s scheme, with GPTQ at each grid; without job quantize only the named layers are quantized', async () => {
  const bytes = lm();
  const probe = OnnxModel.parse(bytes);
  const calibration = makeInputSet(probe, { count: 4, seed: 3 });
  const recipe = { layers: { w1: { sparsity: 0.5, quantize: 'int8' }, head: { quantize: 'float' }, tok: { quantize: 'int4' } } };
  const m = OnnxModel.parse(bytes);
  const { report } = await runJob(m, { mode: { kind: 'recipe', recipe }, calibration: { samples: calibration }, quantize: { scheme: 'int4' } }, { ort });
  const q = report.quantize;
  assert.equal(formOf(q, 'w1'), 'int8-dynamic');
  assert.equal(formOf(q, 'head'), 'float');
  assert.equal(formOf(q, 'tok'), 'int4-gather');
  assert.equal(formOf(q, 'pos'), 'int4-gather', 'a table the recipe leaves alone takes the job\'s embeddings form');
  assert.equal(q.layers.find((l) => l.name === 'w1').method, 'gptq');
  assert.ok(q.layers.find((l) => l.name === 'w1').zeros > 0, 'the recipe\'s pruning ran before');
  assert.equal(q.gptq.layers, 1, 'GPTQ ran on the one linear layer that is quantized');
  // no job quantize: the recipe alone says which layers are quantized, the rest stay float
  const m2 = OnnxModel.parse(bytes);
  const r2 = (await runJob(m2, { mode: { kind: 'recipe', recipe: { layers: { head: { quantize: 'int8' } } } }, quantize: undefined }, {})).report;
  assert.equal(formOf(r2.quantize, 'head'), 'int8-dynamic');
  assert.equal(formOf(r2.quantize, 'w1'), 'float');
  assert.equal(formOf(r2.quantize, 'tok'), 'float');
  assert.equal(r2.quantize.layers.find((l) => l.name === 'head').method, 'rtn');
  // a recipe without quantize entries and a job without quantize: no quantization at all
  const r3 = (await runJob(OnnxModel.parse(bytes), { mode: { kind: 'recipe', recipe: { default: { sparsity: 0.5 } } } }, {})).report;
  assert.equal(r3.quantize, undefined);
});
