// The page's pruning run, a pure function of its inputs: runs in the pruning worker and in Node (the
// tests). `sk` is the initialised sparsekit-wasm module. The default plan (rule, allocation, 2:4
// preset) is the package's own export, re-exported here for the page and its tests.
import { nmViolations, countNonZero, planLayer, blockNormsJs } from './prune/plan.js';
import { nmMask } from './prune/nm.js';
import { pruneBlocks, pruneCoupled } from './prune/blocks.js';
import type { Draft, GlobalOption, LayerInput, LayerResult, Sk } from './prune/types.js';

export {
  DEFAULT_CONFIG, DEFAULT_RULE, NM24_RULE, describeRule, nmGroupLength, nm24ConfigFor, magnitudeAllocation, defaultPlan,
} from 'sparsekit-wasm';
export { planLayer, blockNormsJs, nmViolations } from './prune/plan.js';
export type { LayerInput, LayerResult, GlobalOption, PruneProgress } from './prune/types.js';

/**
 * Prunes the given layers: per layer by its criterion ('none' | 'hard' | 'soft' | 'nm'), except that
 * with `global.enabled` every 'hard' layer joins one ScopeCoupling that keeps the top
 * (1 - global.sparsity) of their blocks model-wide.
 */
export function pruneLayers(sk: Sk, layers: LayerInput[], global: GlobalOption = { enabled: false },
  onProgress: (done: number, total: number, label: string) => void = () => {}): LayerResult[] {
  const drafts: Draft[] = [];
  const total = layers.length + (global.enabled ? 1 : 0);
  let done = 0;
  const coupled: { layer: LayerInput; res: Draft }[] = [];
  for (const layer of layers) {
    const { cfg, dims } = layer;
    const plan = planLayer(dims, cfg);
    const res: Draft = {
      ...plan, notes: [...plan.notes], id: layer.id, name: layer.name, dims, criterion: cfg.criterion, thresholds: [],
      reduceAxis: layer.reduceAxis, sparsityTarget: cfg.sparsity,
    };
    drafts.push(res);
    if (cfg.criterion === 'hard' && global.enabled) { coupled.push({ layer, res }); continue; }
    onProgress(done, total, layer.name);
    if (cfg.criterion === 'nm') {
      const keep = nmMask(sk, layer.data, dims, layer.reduceAxis, cfg.n, cfg.m, res.notes);
      const out = Float32Array.from(layer.data);
      for (let i = 0; i < out.length; i++) if (!keep[i]) out[i] = 0;
      res.notes = res.notes.filter((n) => !n.startsWith('block') && !n.startsWith('scope'));
      Object.assign(res, {
        pattern: `${cfg.n}:${cfg.m}`, n: cfg.n, m: cfg.m, block: [1, 1], grid: [plan.rows, plan.cols], scope: [-1, -1],
        data: out, blockKeep: keep, blockNorms: Float32Array.from(layer.data, Math.abs), normKind: '|w|',
      });
      if (layer.reduceAxis === 0) res.notes.push('groups run along the input (K) dimension');
    } else if (cfg.criterion === 'hard' || cfg.criterion === 'soft') {
      pruneBlocks(sk, layer, plan, res, cfg);
    } else {
      const [bh, bw] = plan.block;
      Object.assign(res, {
        pattern: 'dense', data: layer.data, blockNorms: blockNormsJs(layer.data, plan.rows, plan.cols, bh, bw),
        blockKeep: new Uint8Array(plan.grid[0] * plan.grid[1]).fill(1), normKind: 'L2',
      });
    }
    done++;
  }
  if (coupled.length) {
    onProgress(done, total, 'global scope coupling');
    pruneCoupled(sk, coupled, global.sparsity ?? 0, (d, t) => onProgress(done + d / Math.max(1, t), total, 'global scope coupling'));
    done++;
  }
  const results = drafts.map((r) => finishStats(sk, r));
  onProgress(total, total, 'done');
  return results;
}

/** Counts, the 2:4 check and the sparse-form byte sizes of a finished draft. */
function finishStats(sk: Sk, r: Draft): LayerResult {
  const { data, blockKeep, blockNorms, pattern, normKind } = r;
  if (!data || !blockKeep || !blockNorms || !pattern || !normKind) throw new Error(`internal: layer ${r.name} was not pruned`);
  const numel = data.length;
  const nnz = countNonZero(data);
  const bsrBlock = planLayer(r.dims, { block: r.criterion === 'nm' ? [4, 4] : r.block, scope: [-1, -1] }).block;
  // Does the result satisfy 2:4 along the reduction axis (ASP layout)? Then it has a 2:4 form.
  const nm24Valid = nmViolations(data, r.dims, r.dims.length === 2 ? (r.reduceAxis ?? 1) : 1, 2, 4) === 0;
  const b = sk.sparseBytes(data, [r.rows, r.cols], bsrBlock);
  return {
    ...r, data, blockKeep, blockNorms, pattern, normKind, numel, nnz, sparsity: numel ? 1 - nnz / numel : 0,
    blocksKept: countNonZero(blockKeep), blocksTotal: blockKeep.length, nm24Valid,
    bytes: { dense: b.dense, csr: b.csr, bsr: b.bsr, bsrBlock, nm24: nm24Valid ? b.nm24 : null },
  };
}
