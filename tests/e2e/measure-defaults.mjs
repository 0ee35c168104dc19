// Measures candidate default rules of the playground on the three PaddleOCR models with the built
// sparsekit-wasm (pkg/): each candidate's per-layer settings written as the page's layer table
// writes them (www/src/layer-recipe.ts) and applied by the package's applyRecipe, as the page's job
// runs them; onnxruntime-node on the page's fixed inputs: total sparsity of the prunable weights,
// cosine similarity and max |Δ| of the outputs.
// Not a test (node --test skips it); run: node tests/e2e/measure-defaults.mjs [det,cls,rec] [label-regex]
import fs from 'node:fs';
import { OnnxModel, applyRecipe } from 'sparsekit-wasm/onnx';
import { defaultPlan, nm24ConfigFor, nmGroupLength, magnitudeAllocation } from 'sparsekit-wasm';
import { DET, CLS, REC, runModel, importWww } from './helpers.mjs';

const { compareOutputs } = await importWww('model-input.ts');
const { layerRecipe } = await importWww('layer-recipe.ts');
const MODELS = { det: DET, cls: CLS, rec: REC };
const NM = { criterion: 'nm' };
const hard1 = (sparsity) => ({ criterion: 'hard', block: [1, 1], sparsity });

/** Fraction of a weight's L2 energy that 2:4 along its reduction axis removes (candidate b). */
async function nmEnergy(bytes, l) {
  const m = OnnxModel.parse(bytes);
  await applyRecipe(m, { layers: { [l.w.name]: { nm: '2:4' } } });
  const after = m.readFloat(m.weight(l.w.name));
  let tot = 0, rem = 0;
  for (let i = 0; i < l.data.length; i++) { const v = l.data[i] ** 2; tot += v; if (after[i] === 0) rem += v; }
  return tot ? rem / tot : 0;
}

// Each candidate maps the layers to per-layer configs (and optionally a global-scope setting).
const candidates = {
  '2:4 where the reduction axis allows (old default)': { per: (l) => (l.eligible ? NM : null) },
  'a: 2:4 where C >= 64': { per: (l) => (l.eligible && l.len >= 64 ? NM : null) },
  'a: 2:4 where C >= 64, not first/last layer': { per: (l) => (l.eligible && l.len >= 64 && !l.first && !l.last ? NM : null) },
  'a: 2:4 where C >= 128': { per: (l) => (l.eligible && l.len >= 128 ? NM : null) },
  'a: 2:4 where numel >= 64k': { per: (l) => (l.eligible && l.w.numel >= 65536 ? NM : null) },
  'b: 2:4 where it removes <= 10% of the energy': { per: (l) => (l.eligible && l.energy <= 0.10 ? NM : null) },
  'b: 2:4 where it removes <= 15% of the energy': { per: (l) => (l.eligible && l.energy <= 0.15 ? NM : null) },
  'c: global 1x1 top-k, keep 75%': { per: () => hard1(0.5), global: 0.25 },
  'c: global 1x1 top-k, keep 70%': { per: () => hard1(0.5), global: 0.30 },
  'c: global 4x4 top-k, keep 70%': { per: () => ({ criterion: 'hard', block: [4, 4] }), global: 0.30 },
  'c: uniform 1x1, 25% per layer': { per: () => hard1(0.25) },
  'd: 2:4 on lowest-energy layers, summed loss <= 1': { whole: (ls) => { const el = ls.filter((l) => l.eligible).sort((a, b) => a.energy - b.energy); let s = 0; const on = new Set(); for (const l of el) { if (s + l.energy > 1) break; s += l.energy; on.add(l); } return ls.map((l) => (on.has(l) ? NM : null)); } },
  'd: global 1x1, 25%, cap 50% per layer (DEFAULT)': { whole: (ls) => defaultPlan(ls.map((l) => ({ dims: l.w.dims, reduceAxis: l.w.reduceAxis, op: l.w.op, data: l.data }))).items.map((i) => i.cfg) },
  'd: global 1x1, 25%, cap 40% per layer': { whole: (ls) => magnitudeAllocation(ls.map((l) => l.data), 0.25, 0.4).counts.map((k, i) => hard1(k / ls[i].data.length)) },
  'd: global 1x1, 30%, cap 60% per layer': { whole: (ls) => magnitudeAllocation(ls.map((l) => l.data), 0.30, 0.6).counts.map((k, i) => hard1(k / ls[i].data.length)) },
};

const names = (process.argv[2] ?? 'det,cls,rec').split(',');
const filter = process.argv[3] ? new RegExp(process.argv[3]) : null;
console.log(`| model | candidate | sparsity | cosine | max abs diff |\n|---|---|---|---|---|`);
for (const name of names) {
  const bytes = fs.readFileSync(MODELS[name]);
  const model = OnnxModel.parse(bytes);
  const ws = model.weights.filter((w) => w.prunable);
  const layers = ws.map((w, i) => {
    const l = { w, data: model.readFloat(w), len: nmGroupLength(w.dims, w.reduceAxis), first: i === 0, last: i === ws.length - 1 };
    l.eligible = nm24ConfigFor(w.dims, w.reduceAxis, w.op).cfg.criterion === 'nm';
    l.energy = null;
    return l;
  });
  for (const l of layers) if (l.eligible) l.energy = await nmEnergy(bytes, l);
  const base = await runModel(bytes, model);
  for (const [label, c] of Object.entries(candidates)) {
    if (filter && !filter.test(label)) continue;
    const cfgs = c.whole ? c.whole(layers) : layers.map((l) => c.per(l));
    const rows = layers.map((l, i) => ({ w: l.w, cfg: { criterion: 'none', block: [4, 4], scope: [-1, -1], sparsity: 0.5, n: 2, m: 4, ...(cfgs[i] ?? {}) } }));
    const fresh = OnnxModel.parse(bytes);
    const rep = await applyRecipe(fresh, layerRecipe(rows, c.global != null ? { enabled: true, keep: 1 - c.global } : { enabled: false, keep: 1 }));
    const z = rep.zeros, n = rep.params.prunableAfter;
    const cmp = compareOutputs(base, await runModel(fresh.encode(), fresh));
    console.log(`| ${name} | ${label} | ${(z / n * 100).toFixed(1)}% | ${cmp.cosine.toFixed(3)} | ${cmp.maxAbs.toPrecision(3)} |`);
  }
}
