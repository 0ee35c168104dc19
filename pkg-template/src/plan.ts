// The playground's default pruning plan, as a package export: what one click on "run" does to a
// model, computed from its weights alone (no model run, no wasm), so users can reproduce it.

/** Per-layer settings of the playground: criterion, block and scope shapes, sparsity, N:M. */
export interface LayerConfig {
  /** 'nm' (N:M), 'hard' (hard threshold by sparsity), 'soft' (soft threshold) or 'none' (dense). */
  criterion: 'nm' | 'hard' | 'soft' | 'none';
  block: number[];
  scope: number[];
  sparsity: number;
  n: number;
  m: number;
}

/** A rule for defaultPlan(): one model-wide magnitude threshold with a per-layer cap, or 2:4. */
export type PlanRule = { readonly kind: 'magnitude'; readonly target: number; readonly cap: number } | { readonly kind: 'nm24' };

/** A prunable weight as defaultPlan() reads it. */
export interface PlanWeight {
  /** The ONNX dims, e.g. Conv (O, C/g, kh, kw), MatMul (K, N). */
  dims: readonly number[];
  /** 0 for MatMul / Gemm(transB=0) weights (K, N), whose reduction axis is the first. */
  reduceAxis?: number;
  /** The consuming op ('Conv', 'ConvTranspose', 'MatMul', 'Gemm', ...). */
  op?: string;
  data: ArrayLike<number>;
}

/** One weight's default: its settings, how they were decided, and why (shown on the page). */
export interface PlanItem {
  cfg: LayerConfig;
  /** 'global' (the model-wide threshold decides), 'capped' (the cap decides), 'dense' or 'nm'. */
  kind: 'global' | 'capped' | 'dense' | 'nm';
  note: string;
}

/** The result of defaultPlan(). */
export interface Plan {
  rule: PlanRule;
  sentence: string;
  /** The model-wide magnitude threshold (magnitude rule only). */
  threshold?: number;
  items: PlanItem[];
}

/** The result of magnitudeAllocation(). */
export interface MagnitudeAllocation {
  threshold: number;
  /** Weights each layer loses. */
  counts: number[];
  /** Weights the threshold alone would prune in each layer. */
  uncapped: number[];
  /** All weights. */
  total: number;
}

/**
 * Base settings of a layer: the block, scope, sparsity and N:M fields every criterion starts from.
 * What a layer gets by default is chosen over the whole model by defaultPlan().
 */
export const DEFAULT_CONFIG: Readonly<LayerConfig> = Object.freeze({ criterion: 'nm', block: [4, 4], scope: [-1, -1], sparsity: 0.5, n: 2, m: 4 });

/**
 * The default rule (one click on "run" gives a meaningful pruning of any model): one model-wide
 * magnitude threshold over every prunable weight that prunes `target` of them, unstructured (1x1),
 * with no layer losing more than `cap` of its weights.
 *
 * Measured on the three PaddleOCR models (det / cls / rec) with onnxruntime on the playground's
 * inputs, cosine similarity of the outputs, original vs pruned (tests/e2e/measure-defaults.mjs):
 *   this rule (25%, cap 50%)                 0.992 / 0.981 / 0.964
 *   the same threshold without the cap       0.992 / 0.982 / 0.732  (92% of rec's SE layers go)
 *   25% per layer (uniform)                  0.978 / 0.986 / 0.637
 *   2:4 wherever the reduction axis allows   0.000 / 0.683 / 0.585  (47% / 31% / 49% sparse)
 * One-shot 2:4 without fine-tuning breaks these compact models; it stays one click away (NM24_RULE).
 */
export const DEFAULT_RULE: PlanRule = Object.freeze({ kind: 'magnitude', target: 0.25, cap: 0.5 });
/** The 2:4 preset: 2:4 along the reduction axis wherever that axis holds a multiple of 4 (nm24ConfigFor). */
export const NM24_RULE: PlanRule = Object.freeze({ kind: 'nm24' });

/** The rule in one sentence (shown on the page). */
export function describeRule(rule: PlanRule = DEFAULT_RULE): string {
  if (rule.kind === 'nm24') {
    return '2:4 (N:M, groups of 4 along the reduction axis: input channels of a Conv, K of a MatMul/Gemm) on every weight whose reduction axis is a multiple of 4; the others stay dense.';
  }
  const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;
  return `Prune the ${pct(rule.target)} smallest-magnitude weights model-wide (one magnitude threshold over all Conv/Gemm/MatMul weights, unstructured), `
    + `but never more than ${pct(rule.cap)} of any one layer.`;
}

/**
 * Length of the dimension N:M groups run along (the reduction axis, as createAspMask groups it):
 * C/group of a Conv weight (O, C/g, kh, kw), K of a MatMul / Gemm(transB=0) weight (K, N), K of a
 * Gemm(transB=1) weight (N, K); the flattened rest of a rank > 4 weight.
 */
export function nmGroupLength(dims: readonly number[], reduceAxis?: number): number {
  if (dims.length === 2 && reduceAxis === 0) return dims[0];
  if (dims.length > 4) return dims.slice(1).reduce((a, b) => a * b, 1);
  return dims.length === 1 ? dims[0] : dims[1];
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/**
 * The block shape used on a (rows, cols) view for a wanted one: a dim that divides stays, -1 means the
 * whole dim, any other falls back to gcd(want, dim) (1 at worst), so the blocks tile the view exactly.
 * `note` says what changed, or is null.
 */
export function fitBlock(rows: number, cols: number, want: readonly number[]): { block: [number, number]; note: string | null } {
  const fit = (w: number, dim: number) => (w === -1 ? dim : w > 0 && dim % w === 0 ? w : gcd(Math.max(1, w), dim));
  const block: [number, number] = [fit(want[0], rows), fit(want[1], cols)];
  const changed = (want[0] !== -1 && block[0] !== want[0]) || (want[1] !== -1 && block[1] !== want[1]);
  return { block, note: changed ? `block ${want[0]}x${want[1]} does not divide the ${rows}x${cols} view: using ${block[0]}x${block[1]}` : null };
}

const freshConfig = (): LayerConfig => ({ ...DEFAULT_CONFIG, block: [...DEFAULT_CONFIG.block], scope: [...DEFAULT_CONFIG.scope] });

/**
 * The 2:4 preset for one weight: 2:4 along the reduction axis where that axis holds a multiple of 4,
 * so that every group of 4 is complete and the layer is exactly 50% sparse in the hardware 2:4 form;
 * dense otherwise (depthwise convs with 1 channel per group, a first conv on 3 colour channels, …),
 * with the reason. ConvTranspose weights stay dense too. `note` is null, or says why the layer
 * stays dense.
 */
export function nm24ConfigFor(dims: readonly number[], reduceAxis?: number, op = ''): { cfg: LayerConfig; note: string | null } {
  const cfg = freshConfig();
  const len = nmGroupLength(dims, reduceAxis);
  let note: string | null = null;
  if (op === 'ConvTranspose') {
    // (C_in, C_out/g, kh, kw): N:M groups (axis 1) would run along the outputs, not the reduction.
    cfg.criterion = 'none';
    note = `dense: the groups of ${cfg.n}:${cfg.m} would run along the output channels of a ConvTranspose weight, not its reduction axis`;
  } else if (len % cfg.m !== 0) {
    cfg.criterion = 'none';
    note = `dense: ${cfg.n}:${cfg.m} groups run along the reduction axis, which holds ${len} element${len === 1 ? '' : 's'} here (not a multiple of ${cfg.m})`;
  }
  return { cfg, note };
}

/** Number of elements of a sorted (ascending) array that are < t. */
function countBelow(sorted: Float32Array, t: number): number {
  let lo = 0, hi = sorted.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

const fmtThr = (t: number) => (t === 0 ? '0' : t.toPrecision(3));

/**
 * Model-wide magnitude allocation: the smallest threshold t such that pruning every weight with
 * |w| < t, but at most floor(cap * n) weights of a layer of n, prunes round(target * N) of the N
 * weights (more only where weights tie at t). counts[i] is the number of weights layer i loses and
 * uncapped[i] the number the threshold alone would prune. Deterministic: a function of the
 * weights alone (magnitudes compared in float32, as the weights are stored).
 */
export function magnitudeAllocation(datas: readonly ArrayLike<number>[], target: number, cap: number): MagnitudeAllocation {
  const sorted = datas.map((d) => {
    const a = new Float32Array(d.length);
    for (let i = 0; i < d.length; i++) a[i] = Math.abs(d[i]);
    return a.sort();
  });
  const caps = sorted.map((s) => Math.floor(cap * s.length));
  const N = sorted.reduce((a, s) => a + s.length, 0);
  const K = Math.min(Math.round(target * N), caps.reduce((a, b) => a + b, 0));
  const count = (t: number) => { let c = 0; for (let i = 0; i < sorted.length; i++) c += Math.min(countBelow(sorted[i], t), caps[i]); return c; };
  // Binary search over the candidate thresholds (the distinct |w|, and +inf) in float order.
  let lo = 0, hi = 0;
  for (const s of sorted) if (s.length && s[s.length - 1] > hi) hi = s[s.length - 1];
  hi = hi > 0 ? hi * 2 : 1;
  if (K > 0) {
    for (let it = 0; it < 200 && lo < hi; it++) {
      const mid = lo + (hi - lo) / 2;
      if (mid === lo || mid === hi) break;
      if (count(mid) >= K) hi = mid; else lo = mid;
    }
  } else hi = 0;
  const uncapped = sorted.map((s) => countBelow(s, hi));
  return { threshold: hi, counts: uncapped.map((u, i) => Math.min(u, caps[i])), uncapped, total: N };
}

/**
 * The default settings of every prunable weight of a model, from the weights alone (no model run):
 * with DEFAULT_RULE, one model-wide magnitude threshold (magnitudeAllocation) gives each layer an
 * unstructured (1x1 blocks) hard-threshold sparsity; with NM24_RULE, 2:4 where the reduction axis
 * allows (nm24ConfigFor).
 */
export function defaultPlan(weights: readonly PlanWeight[], rule: PlanRule = DEFAULT_RULE): Plan {
  const sentence = describeRule(rule);
  if (rule.kind === 'nm24') {
    const items = weights.map((w): PlanItem => {
      const { cfg, note } = nm24ConfigFor(w.dims, w.reduceAxis, w.op);
      return { cfg, kind: cfg.criterion === 'nm' ? 'nm' : 'dense', note: note ?? '2:4 along the reduction axis (a multiple of 4 here)' };
    });
    return { rule, sentence, items };
  }
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const alloc = magnitudeAllocation(weights.map((w) => w.data), rule.target, rule.cap);
  const thr = fmtThr(alloc.threshold);
  const items = weights.map((w, i): PlanItem => {
    const n = w.data.length, k = alloc.counts[i], u = alloc.uncapped[i];
    const cfg: LayerConfig = { ...freshConfig(), criterion: 'hard', block: [1, 1], sparsity: n ? k / n : 0 };
    if (k === 0) {
      return { cfg: { ...cfg, criterion: 'none' }, kind: 'dense', note: `dense by default: none of its weights lies below the model-wide threshold |w| < ${thr}` };
    }
    if (k < u) {
      return { cfg, kind: 'capped', note: `${pct(k / n)} (capped at ${pct(rule.cap)}: the model-wide threshold |w| < ${thr} would prune ${pct(u / n)} of this layer)` };
    }
    return { cfg, kind: 'global', note: `${pct(k / n)}: its weights below the model-wide threshold |w| < ${thr}` };
  });
  return { rule, sentence, threshold: alloc.threshold, items };
}
