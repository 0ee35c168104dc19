// The reference of sequential calibration, kept for the tests and bench/calib/calib-sweep.mjs only: the way
// calibratePrune captured before the sweep. For each capture group the whole model (with the layers
// of the earlier groups already pruned) runs every sample with the group's inputs added as graph
// outputs; then the group's layers are pruned. Same layers, groups, statistics and per-layer pruning
// as calibratePrune, so the two must give the same weights to float rounding.
import * as sk from 'sparsekit-wasm';
import { findLayers, captureGroups, pruneLayer, allowsNm, outputAsFloat, CALIB_DEFAULTS } from '#onnx-internal';

/** The model bytes with `names` added as graph outputs (typed from value_info and inputs; float when unknown). */
function withExtraOutputs(model, names) {
  const g = model.graph;
  const have = new Set(g.output.map((o) => o.name));
  const types = new Map();
  for (const v of [...g.value_info, ...g.input]) { const t = v.type?.tensor_type?.elem_type; if (t) types.set(v.name, t); }
  const before = g.output.length;
  for (const name of names) if (!have.has(name)) g.output.push({ name, type: { tensor_type: { elem_type: types.get(name) ?? 1 } } });
  try { return model.encode(); } finally { g.output.length = before; }
}

function addGrouped(hs, x, [N, C, H, W], conv) {
  const G = hs.length, Cg = C / G, plane = Cg * H * W;
  const slice = new Float32Array(N * plane);
  hs.forEach((h, g) => {
    for (let n = 0; n < N; n++) slice.set(x.subarray((n * C + g * Cg) * H * W, (n * C + g * Cg) * H * W + plane), n * plane);
    h.addConv(slice, [N, Cg, H, W], conv);
  });
}

/**
 * Prunes `model` in place the way calibratePrune did before the sweep (criterion one string for
 * every layer). Returns the onnxruntime sessions, runs, and time in onnxruntime vs in total (ms).
 */
export async function calibratePruneByReruns(model, { runner, calibration, sparsity, nm, criterion = CALIB_DEFAULTS.criterion, sequential = true,
  blockSize = CALIB_DEFAULTS.blockSize, percDamp = CALIB_DEFAULTS.percDamp, minVectors = CALIB_DEFAULTS.minVectors }) {
  const target = nm ? { nm } : { sparsity };
  const layers = findLayers(model);
  const graphInputs = new Set(model.graph.input.map((i) => i.name));
  const t0 = performance.now();
  let sessions = 0, runs = 0, ortMs = 0;
  for (const group of captureGroups(layers, sequential)) {
    const needs = group.filter((l) => criterion !== 'magnitude' && l.stats && !(target.nm && !allowsNm(l, target.nm[1])));
    const stats = new Map();
    if (needs.length) {
      const names = [...new Set(needs.map((l) => l.input).filter((n) => !graphInputs.has(n)))];
      for (const l of needs) stats.set(l, l.stats === 'grouped' ? { groups: Array.from({ length: l.group }, () => new sk.Hessian(l.cols)) } : { h: new sk.Hessian(l.cols) });
      let t = performance.now();
      const session = await runner.createSession(withExtraOutputs(model, names));
      ortMs += performance.now() - t;
      sessions++;
      for (const { feeds } of calibration) {
        t = performance.now();
        const out = names.length ? await session.run(feeds, names) : {};
        ortMs += performance.now() - t;
        runs++;
        for (const l of needs) {
          const v = out[l.input] ?? feeds[l.input];
          const x = outputAsFloat(v), s = stats.get(l);
          if (l.stats === 'conv') s.h.addConv(x, v.dims, l.conv);
          else if (l.stats === 'grouped') addGrouped(s.groups, x, v.dims, l.conv);
          else s.h.addRows(x, x.length / l.cols);
        }
      }
      t = performance.now();
      await session.release();
      ortMs += performance.now() - t;
    }
    for (const l of group) {
      const res = pruneLayer({ layer: l, stored: model.readFloat(l.weight), stats: stats.get(l), criterion, target, blockSize, percDamp, minVectors });
      if (res.method !== 'dense') model.writeFloat(l.weight, res.data);
    }
    for (const s of stats.values()) for (const h of s.groups ?? (s.h ? [s.h] : [])) h.free();
  }
  return { sessions, runs, ortMs, ms: performance.now() - t0 };
}

/**
 * How far two models' prunable weights are apart: per layer, the share of zero / non-zero positions
 * that differ and the relative L2 distance; the worst of each over the layers.
 */
export function weightDistance(a, b) {
  let maskDiff = 0, rel = 0, worst = '';
  for (const w of a.prunable()) {
    const x = a.readFloat(w), y = b.readFloat(b.weight(w.name));
    let d = 0, n = 0, flips = 0;
    for (let i = 0; i < x.length; i++) { d += (x[i] - y[i]) ** 2; n += x[i] ** 2; if ((x[i] === 0) !== (y[i] === 0)) flips++; }
    const r = n > 0 ? Math.sqrt(d / n) : Math.sqrt(d);
    if (r > rel) { rel = r; worst = w.name; }
    maskDiff = Math.max(maskDiff, flips / x.length);
  }
  return { maskDiff, rel, worst };
}
