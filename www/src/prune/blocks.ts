// Block pruning of one layer (hard top-k or soft threshold per scope) and of the hard layers coupled
// in one model-wide scope, with the package's Param / BlockSpec / ScopeSpec / ScopeCoupling.
import { blockKeepFromElements, blockNormsJs } from './plan.js';
import type { BlockSpec, Param, ScopeSpec } from 'sparsekit-wasm';
import type { Draft, LayerConfig, LayerInput, LayerPlan, Sk } from './types.js';

type Freeable = { free(): void };
function freeAll(objs: Freeable[]): void {
  for (const o of objs.reverse()) { try { o.free(); } catch { /* already freed */ } }
}

/** The mask of the spec named `name` (the layer id), or the index-th when the names are not kept. */
function pickMask(map: Map<{ name?: string | null }, Uint8Array>, name: string, index: number): Uint8Array {
  for (const [k, v] of map) if (k && k.name === name) return v;
  return [...map.values()][index];
}

/** Per-layer threshold = the smallest kept block score (none if nothing or everything pruned). */
function thresholdsOf(scores: Float32Array, keep: Uint8Array): number[] {
  let min = Infinity, any = false, anyPruned = false;
  for (let i = 0; i < keep.length; i++) {
    if (keep[i]) { any = true; if (scores[i] < min) min = scores[i]; } else anyPruned = true;
  }
  return any && anyPruned ? [min] : [];
}

export function pruneBlocks(sk: Sk, layer: LayerInput, plan: LayerPlan, res: Draft, cfg: LayerConfig): void {
  const { rows, cols, block, scope } = plan;
  const objs: Freeable[] = [];
  try {
    const p = sk.Param.fromArray(layer.data, [rows, cols]); objs.push(p);
    const spec = new sk.BlockSpec(p, block, String(layer.id)); objs.push(spec);
    const sc = new sk.ScopeSpec(spec, scope); objs.push(sc);
    const norms = spec.norms(2);
    if (cfg.criterion === 'hard') {
      const masks = sc.getMasks({ sparsity: cfg.sparsity });
      const keep = blockKeepFromElements(pickMask(masks, String(layer.id), 0), rows, cols, block[0], block[1]);
      spec.applyMask(keep);
      res.blockKeep = keep;
      res.thresholds = thresholdsOf(norms, keep);
    } else {
      // Soft threshold: per scope, shrink every block norm by the norm of the first block the
      // sparsity target would prune, so exactly the weakest blocks reach zero and the rest shrink.
      const nnz = sc.sparsityToNnz(cfg.sparsity);
      const perScope = sc.numblkPerScope();
      const bn = sc.blockNorms();
      const ns = bn.length / perScope;
      const thr = new Float32Array(ns);
      for (let s = 0; s < ns; s++) {
        const v = Array.from(bn.subarray(s * perScope, (s + 1) * perScope)).sort((a, b) => b - a);
        thr[s] = nnz >= perScope ? 0 : v[nnz];
      }
      sc.softThreshold(thr);
      res.thresholds = [...new Set(thr)].slice(0, 64);
    }
    res.data = p.toArray();
    if (cfg.criterion === 'soft') {
      const after = blockNormsJs(res.data, rows, cols, block[0], block[1]);
      res.blockKeep = Uint8Array.from(after, (x) => (x > 0 ? 1 : 0));
    }
    res.pattern = `block ${block[0]}x${block[1]}${cfg.criterion === 'soft' ? ' (soft)' : ''}`;
    res.blockNorms = norms;
    res.normKind = 'L2';
  } finally { freeAll(objs); }
}

/**
 * The hard layers in one ScopeCoupling (one whole-grid scope per layer) keeping the top (1 - sparsity)
 * of their blocks model-wide; blocks of different sizes are ranked by RMS instead of L2.
 */
export function pruneCoupled(sk: Sk, coupled: { layer: LayerInput; res: Draft }[], sparsity: number, onProgress: (done: number, total: number) => void): void {
  const objs: Freeable[] = [];
  try {
    const mixed = new Set(coupled.map(({ res }) => res.block[0] * res.block[1])).size > 1;
    const rms = (res: Draft) => (mixed ? 1 / Math.sqrt(res.block[0] * res.block[1]) : 1);
    const params: Param[] = [], specs: BlockSpec[] = [], scopes: ScopeSpec[] = [], values: Float32Array[] = [];
    for (const { layer, res } of coupled) {
      const p = sk.Param.fromArray(layer.data, [res.rows, res.cols]); objs.push(p); params.push(p);
      const spec = new sk.BlockSpec(p, res.block, String(layer.id)); objs.push(spec); specs.push(spec);
      const sc = new sk.ScopeSpec(spec, [-1, -1]); objs.push(sc); scopes.push(sc);
      res.scope = [-1, -1];
      if (mixed) { const f = rms(res); values.push(Float32Array.from(layer.data, (x) => x * f)); }
    }
    const coupling = new sk.ScopeCoupling(scopes); objs.push(coupling);
    // (ScopeCoupling.getMasks takes no onProgress: progress is reported per stage around it.)
    onProgress(0.5, 1);
    const masks = coupling.getMasks(mixed ? { sparsity, values } : { sparsity });
    let cut = Infinity, anyPruned = false;
    const keeps = coupled.map(({ layer, res }, i) => {
      const keep = blockKeepFromElements(pickMask(masks, String(layer.id), i), res.rows, res.cols, res.block[0], res.block[1]);
      const norms = specs[i].norms(2);
      const f = rms(res);
      for (let k = 0; k < keep.length; k++) { if (keep[k]) cut = Math.min(cut, norms[k] * f); else anyPruned = true; }
      res.blockNorms = norms;
      return keep;
    });
    coupled.forEach(({ res }, i) => {
      specs[i].applyMask(keeps[i]);
      res.data = params[i].toArray();
      res.blockKeep = keeps[i];
      res.thresholds = Number.isFinite(cut) && anyPruned ? [cut / rms(res)] : [];
      res.pattern = `block ${res.block[0]}x${res.block[1]}`;
      res.normKind = 'L2';
      res.global = true;
      if (mixed) res.notes.push('global ranking by block RMS (blocks of different sizes are coupled)');
    });
  } finally { freeAll(objs); }
}
