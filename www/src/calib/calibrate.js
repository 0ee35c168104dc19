// Calibration-aware pruning of a whole ONNX model: capture each layer's input with extra graph
// outputs, accumulate its statistics, prune it, and move on. Sequential by default: the inputs of
// layer k are captured from the model whose layers < k are already pruned (as SparseGPT does), so
// each layer compensates the errors of the ones before it.
import { findLayers, captureGroups } from './layers.js';
import { pruneLayer } from './layer-prune.js';

export class CancelledError extends Error {
  constructor() { super('Calibration cancelled'); this.name = 'AbortError'; this.code = 'cancelled'; }
}

/** The model bytes with `names` added as graph outputs (typed float; shapes left to the runtime). */
function withExtraOutputs(model, names) {
  const g = model.graph;
  const have = new Set(g.output.map((o) => o.name));
  const added = names.filter((n) => !have.has(n));
  const before = g.output.length;
  for (const name of added) g.output.push({ name, type: { tensor_type: { elem_type: 1 } } });
  try { return model.encode(); } finally { g.output.length = before; }
}

const asF32 = (d) => (d instanceof Float32Array ? d : Float32Array.from(d, Number));

/** Adds an (N, C, H, W) input to one Hessian per Conv group (each sees only its C/G channels). */
function addGrouped(hs, x, [N, C, H, W], conv) {
  const G = hs.length, Cg = C / G, plane = Cg * H * W;
  const slice = new Float32Array(N * plane);
  hs.forEach((h, g) => {
    for (let n = 0; n < N; n++) slice.set(x.subarray((n * C + g * Cg) * H * W, (n * C + g * Cg) * H * W + plane), n * plane);
    h.addConv(slice, [N, Cg, H, W], conv);
  });
}

/**
 * @param p.model OnnxModel, pruned in place (writeFloat)
 * @param p.runner makeOrtRunner(ort)
 * @param p.engine makeEngine(sk)
 * @param p.calibration input set (input-sets.js makeInputSet)
 * @param p.plan (layer) => null (leave dense) | {criterion: 'magnitude'|'wanda'|'sparsegpt', sparsity} | {criterion, nm: [n, m]}
 * @param p.sequential default true; false captures every input from the unpruned model in one pass
 * @param p.onProgress ({done, total, phase, layer}) with done/total in layers (fractional while capturing)
 * @param p.minVectors SparseGPT only where the layer saw >= minVectors calibration vectors per input (layer-prune.js)
 * @param p.signal an AbortSignal: cancels between model runs and layers (CancelledError)
 * @returns {layers: [...per-layer report], engine, sequential, calibration: count, passes, ms}
 */
export async function calibratePrune({ model, runner, engine, calibration, plan, sequential = true, blockSize = 128, percDamp = 0.01, minVectors,
  onProgress = () => {}, signal } = {}) {
  const t0 = Date.now();
  const layers = findLayers(model).filter((l) => plan(l));
  const total = layers.length;
  const graphInputs = new Set(model.graph.input.map((i) => i.name));
  const reports = [];
  let done = 0, passes = 0;
  const check = () => { if (signal?.aborted) throw new CancelledError(); };
  // onnxruntime-web's wasm backend can settle its promises without ever leaving the microtask queue:
  // a macrotask turn per group lets a worker receive its 'cancel' message (and the page repaint).
  const yieldTurn = () => new Promise((resolve) => setTimeout(resolve, 0));
  for (const group of captureGroups(layers, sequential)) {
    await yieldTurn();
    check();
    const needs = group.filter((l) => plan(l).criterion !== 'magnitude' && l.stats);
    const stats = new Map();
    if (needs.length) {
      const names = [...new Set(needs.map((l) => l.input).filter((n) => !graphInputs.has(n)))];
      for (const l of needs) stats.set(l, l.stats === 'grouped' ? { groups: Array.from({ length: l.group }, () => engine.hessian(l.cols)) } : { h: engine.hessian(l.cols) });
      const session = await runner.createSession(withExtraOutputs(model, names));
      passes++;
      try {
        for (let k = 0; k < calibration.length; k++) {
          check();
          onProgress({ done: done + (k / calibration.length) * group.length * 0.5, total, phase: 'capture', layer: group[0].name });
          const { feeds } = calibration[k];
          const out = names.length ? await session.run(feeds, names) : {};
          for (const l of needs) {
            const t = out[l.input] ?? feeds[l.input];
            const x = asF32(t.data), s = stats.get(l);
            if (l.stats === 'conv') s.h.addConv(x, t.dims, l.conv);
            else if (l.stats === 'grouped') addGrouped(s.groups, x, t.dims, l.conv);
            else s.h.addRows(x, x.length / l.cols);
          }
        }
      } finally { await session.release(); }
    }
    for (const l of group) {
      check();
      onProgress({ done, total, phase: 'prune', layer: l.name });
      const want = plan(l);
      const s = stats.get(l) ?? {};
      const t1 = Date.now();
      const target = want.nm ? { nm: want.nm } : { sparsity: want.sparsity };
      const res = pruneLayer({ engine, layer: l, stored: model.readFloat(l.weight), stats: s, criterion: want.criterion, target, blockSize, percDamp, minVectors });
      model.writeFloat(l.weight, res.data);
      for (const h of s.groups ?? (s.h ? [s.h] : [])) h.free?.();
      reports.push({ name: l.name, node: l.node, op: l.op, dims: l.weight.dims, rows: l.rows, cols: l.cols, transposed: l.transposed,
        requested: want.criterion, used: res.used, target: want.nm ? want.nm.join(':') : want.sparsity,
        sparsity: res.sparsity, relError: res.relError, notes: res.notes, ms: Date.now() - t1 });
      done++;
    }
  }
  onProgress({ done: total, total, phase: 'done', layer: '' });
  return { layers: reports, engine: engine.name, sequential, calibration: calibration.length, passes, ms: Date.now() - t0 };
}
