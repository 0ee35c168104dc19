// The pruning plan and its execution with sparsekit-wasm. Pure functions of their inputs: runs in the
// page's Web Worker (prune-worker.js) and in Node. `sk` is the imported sparsekit-wasm module.

const gcd = (a, b) => (b ? gcd(b, a % b) : a);

/**
 * Base settings of a layer: the block, scope, sparsity and N:M fields every criterion starts from.
 * What a layer gets by default is chosen over the whole model by defaultPlan().
 */
export const DEFAULT_CONFIG = Object.freeze({ criterion: 'nm', block: [4, 4], scope: [-1, -1], sparsity: 0.5, n: 2, m: 4 });

/**
 * The default rule (one click on "run" gives a meaningful pruning of any model): one model-wide
 * magnitude threshold over every prunable weight that prunes `target` of them, unstructured (1x1),
 * with no layer losing more than `cap` of its weights.
 *
 * Measured on the three PaddleOCR models (det / cls / rec) with onnxruntime on the page's inputs,
 * cosine similarity of the outputs, original vs pruned (tests/e2e/measure-defaults.mjs):
 *   this rule (25%, cap 50%)                 0.992 / 0.981 / 0.964
 *   the same threshold without the cap       0.992 / 0.982 / 0.732  (92% of rec's SE layers go)
 *   25% per layer (uniform)                  0.978 / 0.986 / 0.637
 *   2:4 wherever the reduction axis allows   0.000 / 0.683 / 0.585  (47% / 31% / 49% sparse)
 * One-shot 2:4 without fine-tuning breaks these compact models; it stays one click away (NM24_RULE).
 */
export const DEFAULT_RULE = Object.freeze({ kind: 'magnitude', target: 0.25, cap: 0.5 });
/** The 2:4 preset: 2:4 along the reduction axis wherever that axis holds a multiple of 4 (nm24ConfigFor). */
export const NM24_RULE = Object.freeze({ kind: 'nm24' });

/** The rule in one sentence (shown on the page). */
export function describeRule(rule = DEFAULT_RULE) {
  if (rule.kind === 'nm24') {
    return '2:4 (N:M, groups of 4 along the reduction axis: input channels of a Conv, K of a MatMul/Gemm) on every weight whose reduction axis is a multiple of 4; the others stay dense.';
  }
  const pct = (x) => `${Math.round(x * 1000) / 10}%`;
  return `Prune the ${pct(rule.target)} smallest-magnitude weights model-wide (one magnitude threshold over all Conv/Gemm/MatMul weights, unstructured), `
    + `but never more than ${pct(rule.cap)} of any one layer.`;
}

/**
 * Length of the dimension N:M groups run along (the reduction axis, as nmMask() groups it): C/group
 * of a Conv weight (O, C/g, kh, kw), K of a MatMul / Gemm(transB=0) weight (K, N), K of a
 * Gemm(transB=1) weight (N, K); the flattened rest of a rank > 4 weight.
 */
export function nmGroupLength(dims, reduceAxis) {
  if (dims.length === 2 && reduceAxis === 0) return dims[0];
  if (dims.length > 4) return dims.slice(1).reduce((a, b) => a * b, 1);
  return dims.length === 1 ? dims[0] : dims[1];
}

const freshConfig = () => ({ ...DEFAULT_CONFIG, block: [...DEFAULT_CONFIG.block], scope: [...DEFAULT_CONFIG.scope] });

/**
 * The 2:4 preset for one weight: 2:4 along the reduction axis where that axis holds a multiple of 4,
 * so that every group of 4 is complete and the layer is exactly 50% sparse in the hardware 2:4 form;
 * dense otherwise (depthwise convs with 1 channel per group, a first conv on 3 colour channels, …),
 * with the reason. ConvTranspose weights stay dense too. Returns {cfg, note}: note is null, or says
 * why the layer stays dense.
 */
export function nm24ConfigFor(dims, reduceAxis, op = '') {
  const cfg = freshConfig();
  const len = nmGroupLength(dims, reduceAxis);
  let note = null;
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
function countBelow(sorted, t) {
  let lo = 0, hi = sorted.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (sorted[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

const fmtThr = (t) => (t === 0 ? '0' : t.toPrecision(3));

/**
 * Model-wide magnitude allocation: the smallest threshold t such that pruning every weight with
 * |w| < t, but at most floor(cap * n) weights of a layer of n, prunes round(target * N) of the N
 * weights (more only where weights tie at t). Returns {threshold, counts, uncapped} where counts[i]
 * is the number of weights layer i loses and uncapped[i] the number the threshold alone would prune.
 * Deterministic: a function of the weights alone.
 */
export function magnitudeAllocation(datas, target, cap) {
  const sorted = datas.map((d) => {
    const a = new Float32Array(d.length);
    for (let i = 0; i < d.length; i++) a[i] = Math.abs(d[i]);
    return a.sort();
  });
  const caps = sorted.map((s) => Math.floor(cap * s.length));
  const N = sorted.reduce((a, s) => a + s.length, 0);
  const K = Math.min(Math.round(target * N), caps.reduce((a, b) => a + b, 0));
  const count = (t) => { let c = 0; for (let i = 0; i < sorted.length; i++) c += Math.min(countBelow(sorted[i], t), caps[i]); return c; };
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
 * The default settings of every prunable weight of a model, from the weights alone (no model run).
 * @param weights [{dims, reduceAxis, op, data: Float32Array}]
 * @param rule DEFAULT_RULE (magnitude threshold with a per-layer cap) or NM24_RULE
 * @returns {rule, sentence, threshold?, items: [{cfg, kind, note}]} with kind 'global' (the
 *   model-wide threshold decides), 'capped' (the cap decides), 'dense' (nothing pruned) or 'nm'.
 */
export function defaultPlan(weights, rule = DEFAULT_RULE) {
  const sentence = describeRule(rule);
  if (rule.kind === 'nm24') {
    const items = weights.map((w) => {
      const { cfg, note } = nm24ConfigFor(w.dims, w.reduceAxis, w.op);
      return { cfg, kind: cfg.criterion === 'nm' ? 'nm' : 'dense', note: note ?? '2:4 along the reduction axis (a multiple of 4 here)' };
    });
    return { rule, sentence, items };
  }
  const pct = (x) => `${(x * 100).toFixed(1)}%`;
  const alloc = magnitudeAllocation(weights.map((w) => w.data), rule.target, rule.cap);
  const thr = fmtThr(alloc.threshold);
  const items = weights.map((w, i) => {
    const n = w.data.length, k = alloc.counts[i], u = alloc.uncapped[i];
    const cfg = { ...freshConfig(), criterion: 'hard', block: [1, 1], sparsity: n ? k / n : 0 };
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

/**
 * How a weight is viewed and blocked: the 2-D view (rows, cols) is (O, rest) for Conv-like weights
 * and the stored (K, N) for MatMul / Gemm(transB=0) weights. A block dim that does not divide the
 * view falls back to gcd(block, dim) (1 at worst), with a note.
 */
export function planLayer(dims, cfg) {
  const rows = dims[0];
  const cols = dims.slice(1).reduce((a, b) => a * b, 1);
  const notes = [];
  const want = cfg.block ?? DEFAULT_CONFIG.block;
  const block = [
    want[0] === -1 ? rows : want[0] > 0 && rows % want[0] === 0 ? want[0] : gcd(Math.max(1, want[0]), rows),
    want[1] === -1 ? cols : want[1] > 0 && cols % want[1] === 0 ? want[1] : gcd(Math.max(1, want[1]), cols),
  ];
  if ((want[0] !== -1 && block[0] !== want[0]) || (want[1] !== -1 && block[1] !== want[1])) {
    notes.push(`block ${want[0]}x${want[1]} does not divide the ${rows}x${cols} view: using ${block[0]}x${block[1]}`);
  }
  const grid = [rows / block[0], cols / block[1]];
  const wantScope = cfg.scope ?? DEFAULT_CONFIG.scope;
  const scope = wantScope.map((s, i) => (s === -1 || (s > 0 && grid[i] % s === 0) ? s : -1));
  if (scope.some((s, i) => s !== wantScope[i])) {
    notes.push(`scope ${wantScope.join('x')} blocks does not divide the ${grid[0]}x${grid[1]} block grid: using ${scope.map((s) => (s === -1 ? 'all' : s)).join('x')}`);
  }
  return { rows, cols, block, grid, scope, notes };
}

/** Transposes a (r, c) row-major array. */
function transpose(a, r, c, Ctor) {
  const out = new Ctor(a.length);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j];
  return out;
}

/** Block L2 norms of a (rows, cols) matrix: a (rows/bh, cols/bw) grid, computed in JS (for display). */
export function blockNormsJs(data, rows, cols, bh, bw) {
  const gr = rows / bh, gc = cols / bw;
  const out = new Float32Array(gr * gc);
  for (let i = 0; i < rows; i++) {
    const bi = ((i / bh) | 0) * gc;
    for (let j = 0; j < cols; j++) { const v = data[i * cols + j]; out[bi + ((j / bw) | 0)] += v * v; }
  }
  for (let k = 0; k < out.length; k++) out[k] = Math.sqrt(out[k]);
  return out;
}

/** Block keep-mask (grid) from an element keep-mask (rows, cols): a block is kept iff its first element is. */
function blockKeepFromElements(mask, rows, cols, bh, bw) {
  const gr = rows / bh, gc = cols / bw;
  const out = new Uint8Array(gr * gc);
  for (let i = 0; i < gr; i++) for (let j = 0; j < gc; j++) out[i * gc + j] = mask[i * bh * cols + j * bw] ? 1 : 0;
  return out;
}

/**
 * Checks an N:M pattern: along `axis` of `dims` (ASP grouping: axis 1 of 2-D/3-D/4-D weights,
 * axis 0 for MatMul-style (K, N) weights) every group of m consecutive elements (the last one padded)
 * holds at most n non-zeros. Returns the number of violating groups.
 */
export function nmViolations(data, dims, axis, n, m) {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  let bad = 0;
  for (let o = 0; o < outer; o++) {
    for (let r = 0; r < inner; r++) {
      for (let g = 0; g < len; g += m) {
        let nz = 0;
        for (let k = g; k < Math.min(g + m, len); k++) if (data[(o * len + k) * inner + r] !== 0) nz++;
        if (nz > n) bad++;
      }
    }
  }
  return bad;
}

function countNonZero(a) { let z = 0; for (let i = 0; i < a.length; i++) if (a[i] !== 0) z++; return z; }

function freeAll(objs) { for (const o of objs) { try { o && o.free && o.free(); } catch { /* already freed */ } } }

function pickMask(map, name, index) {
  for (const [k, v] of map) if (k && k.name === name) return v;
  return [...map.values()][index];
}

/**
 * Zero-pads `axis` of a row-major tensor to a multiple of m (as NVIDIA ASP pads its groups), or
 * crops it back (`crop`): returns [data, shape].
 */
function padAxis(data, dims, axis, to, Ctor) {
  const len = dims[axis];
  const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
  const outer = dims.slice(0, axis).reduce((a, b) => a * b, 1);
  const shape = dims.slice();
  shape[axis] = to;
  const out = new Ctor(outer * to * inner);
  const n = Math.min(len, to) * inner;
  for (let o = 0; o < outer; o++) out.set(data.subarray(o * len * inner, o * len * inner + n), o * to * inner);
  return [out, shape];
}

/** N:M pruning of one weight with createAspMask; returns the element keep-mask (storage layout). */
function nmMask(sk, data, dims, reduceAxis, n, m, notes) {
  const pattern = `m${m}n${n}_1d`;
  let values = data, shape = dims, transposed = false;
  if (reduceAxis === 0 && dims.length === 2) {
    values = transpose(data, dims[0], dims[1], Float32Array);
    shape = [dims[1], dims[0]];
    transposed = true;
  } else if (dims.length > 4) {
    shape = [dims[0], data.length / dims[0]];
    notes.push(`rank ${dims.length}: N:M groups run along the flattened (O, rest) view`);
  }
  const axis = shape.length === 1 ? 0 : 1;           // ASP: groups along C (or the columns)
  const len = shape[axis];
  if (shape.length >= 3 && len <= n) notes.push(`only ${len} input channel(s): ${n}:${m} along C prunes nothing`);
  let mask;
  if (len % m) {
    const padded = Math.ceil(len / m) * m;
    const [pv, ps] = padAxis(values, shape, axis, padded, Float32Array);
    [mask] = padAxis(sk.createAspMask(pv, ps, pattern), ps, axis, len, Uint8Array);
    if (len > n) notes.push(`${len} ${shape.length >= 3 ? 'channels' : 'columns'} padded with zeros to ${padded} for ${n}:${m} groups (as ASP does)`);
  } else {
    mask = sk.createAspMask(values, shape, pattern);
  }
  return transposed ? transpose(mask, shape[0], shape[1], Uint8Array) : mask;
}

/**
 * Prunes the given layers.
 * @param sk the sparsekit-wasm module (initialised)
 * @param layers [{id, name, dims, reduceAxis, data: Float32Array, cfg}] where cfg = {criterion:
 *   'none'|'hard'|'soft'|'nm', block, scope, sparsity, n, m}
 * @param global {enabled, sparsity}: when enabled, all 'hard' layers are coupled in one ScopeCoupling
 *   (one whole-grid scope per layer) that keeps the top (1 - sparsity) of their blocks model-wide.
 * @param onProgress (done, total, label)
 */
export function pruneLayers(sk, layers, global = { enabled: false }, onProgress = () => {}) {
  const results = [];
  const total = layers.length + (global.enabled ? 1 : 0);
  let done = 0;
  const coupled = [];
  for (const layer of layers) {
    const { cfg, dims } = layer;
    const plan = planLayer(dims, cfg);
    const res = {
      id: layer.id, name: layer.name, dims, criterion: cfg.criterion, rows: plan.rows, cols: plan.cols,
      block: plan.block, grid: plan.grid, scope: plan.scope, notes: [...plan.notes], thresholds: [],
      reduceAxis: layer.reduceAxis, sparsityTarget: cfg.sparsity,
    };
    results.push(res);
    if (cfg.criterion === 'hard' && global.enabled) { coupled.push({ layer, res }); continue; }
    onProgress(done, total, layer.name);
    if (cfg.criterion === 'nm') {
      const [bh, bw] = [1, 1];
      const keep = nmMask(sk, layer.data, dims, layer.reduceAxis, cfg.n, cfg.m, res.notes);
      const out = Float32Array.from(layer.data);
      for (let i = 0; i < out.length; i++) if (!keep[i]) out[i] = 0;
      res.notes = res.notes.filter((n) => !n.startsWith('block') && !n.startsWith('scope'));
      Object.assign(res, {
        pattern: `${cfg.n}:${cfg.m}`, n: cfg.n, m: cfg.m, block: [bh, bw], grid: [plan.rows, plan.cols], scope: [-1, -1],
        data: out, blockKeep: keep, blockNorms: Float32Array.from(layer.data, Math.abs), normKind: '|w|',
      });
      if (layer.reduceAxis === 0) res.notes.push('groups run along the input (K) dimension');
    } else if (cfg.criterion === 'hard' || cfg.criterion === 'soft') {
      pruneBlocks(sk, layer, plan, res, cfg);
    } else {
      const [bh, bw] = plan.block;
      Object.assign(res, { pattern: 'dense', data: layer.data, blockNorms: blockNormsJs(layer.data, plan.rows, plan.cols, bh, bw),
        blockKeep: new Uint8Array(plan.grid[0] * plan.grid[1]).fill(1), normKind: 'L2' });
    }
    done++;
  }
  if (coupled.length) {
    onProgress(done, total, 'global scope coupling');
    pruneCoupled(sk, coupled, global.sparsity, (d, t) => onProgress(done + d / Math.max(1, t), total, 'global scope coupling'));
    done++;
  }
  for (const r of results) finishStats(sk, r);
  onProgress(total, total, 'done');
  return results;
}

function pruneBlocks(sk, layer, plan, res, cfg) {
  const { rows, cols, block, scope } = plan;
  const objs = [];
  try {
    const p = sk.Param.fromArray(layer.data, [rows, cols]); objs.push(p);
    const spec = new sk.BlockSpec(p, block, String(layer.id)); objs.push(spec);
    const sc = new sk.ScopeSpec(spec, scope); objs.push(sc);
    const norms = spec.norms(2);
    const nnz = sc.sparsityToNnz(cfg.sparsity);
    const perScope = sc.numblkPerScope();
    if (cfg.criterion === 'hard') {
      const masks = sc.getMasks({ sparsity: cfg.sparsity });
      const keep = blockKeepFromElements(pickMask(masks, String(layer.id), 0), rows, cols, block[0], block[1]);
      spec.applyMask(keep);
      res.blockKeep = keep;
      res.thresholds = thresholdsOf(norms, keep);
    } else {
      // Soft threshold: per scope, shrink every block norm by the norm of the first block the
      // sparsity target would prune, so exactly the weakest blocks reach zero and the rest shrink.
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
    Object.assign(res, { pattern: `block ${block[0]}x${block[1]}`, blockNorms: norms, normKind: 'L2' });
    if (cfg.criterion === 'soft') res.pattern += ' (soft)';
  } finally { freeAll(objs.reverse()); }
}

/** Per-layer threshold = the smallest kept block score (none if nothing or everything pruned). */
function thresholdsOf(scores, keep) {
  let min = Infinity, any = false, anyPruned = false;
  for (let i = 0; i < keep.length; i++) {
    if (keep[i]) { any = true; if (scores[i] < min) min = scores[i]; } else anyPruned = true;
  }
  return any && anyPruned ? [min] : [];
}

function pruneCoupled(sk, coupled, sparsity, onProgress) {
  const objs = [];
  try {
    const sizes = new Set(coupled.map(({ res }) => res.block[0] * res.block[1]));
    const mixed = sizes.size > 1;           // blocks of different sizes: rank blocks by RMS, not L2
    const params = [], specs = [], scopes = [], values = [];
    for (const { layer, res } of coupled) {
      const p = sk.Param.fromArray(layer.data, [res.rows, res.cols]); objs.push(p); params.push(p);
      const spec = new sk.BlockSpec(p, res.block, String(layer.id)); objs.push(spec); specs.push(spec);
      const sc = new sk.ScopeSpec(spec, [-1, -1]); objs.push(sc); scopes.push(sc);
      res.scope = [-1, -1];
      if (mixed) {
        const f = 1 / Math.sqrt(res.block[0] * res.block[1]);
        values.push(Float32Array.from(layer.data, (x) => x * f));
      }
    }
    const coupling = new sk.ScopeCoupling(scopes); objs.push(coupling);
    // (ScopeCoupling.getMasks takes no onProgress: progress is reported per stage around it.)
    const opts = { sparsity };
    if (mixed) opts.values = values;
    onProgress(0.5, 1);
    const masks = coupling.getMasks(opts);
    let cut = Infinity; let anyPruned = false;
    const keeps = coupled.map(({ layer, res }, i) => {
      const keep = blockKeepFromElements(pickMask(masks, String(layer.id), i), res.rows, res.cols, res.block[0], res.block[1]);
      const norms = specs[i].norms(2);
      const f = mixed ? 1 / Math.sqrt(res.block[0] * res.block[1]) : 1;
      for (let k = 0; k < keep.length; k++) { if (keep[k]) cut = Math.min(cut, norms[k] * f); else anyPruned = true; }
      res.blockNorms = norms;
      return keep;
    });
    coupled.forEach(({ res }, i) => {
      specs[i].applyMask(keeps[i]);
      res.data = params[i].toArray();
      res.blockKeep = keeps[i];
      const f = mixed ? Math.sqrt(res.block[0] * res.block[1]) : 1;
      res.thresholds = Number.isFinite(cut) && anyPruned ? [cut * f] : [];
      res.pattern = `block ${res.block[0]}x${res.block[1]}`;
      res.normKind = 'L2';
      res.global = true;
      if (mixed) res.notes.push('global ranking by block RMS (blocks of different sizes are coupled)');
    });
  } finally { freeAll(objs.reverse()); }
}

function finishStats(sk, r) {
  const numel = r.data.length;
  const nnz = countNonZero(r.data);
  r.numel = numel;
  r.nnz = nnz;
  r.sparsity = numel ? 1 - nnz / numel : 0;
  r.blocksKept = countNonZero(r.blockKeep);
  r.blocksTotal = r.blockKeep.length;
  const bsrBlock = planLayer(r.dims, { block: r.criterion === 'nm' ? [4, 4] : r.block, scope: [-1, -1] }).block;
  // Does the result satisfy 2:4 along the reduction axis (ASP layout)? Then it has a 2:4 form.
  r.nm24Valid = nmViolations(r.data, r.dims, r.dims.length === 2 ? (r.reduceAxis ?? 1) : 1, 2, 4) === 0;
  // Byte sizes of the sparse forms of the (rows, cols) view; the 2:4 form only where the pattern holds.
  const b = sk.sparseBytes(r.data, [r.rows, r.cols], bsrBlock);
  r.bytes = { dense: b.dense, csr: b.csr, bsr: b.bsr, bsrBlock, nm24: r.nm24Valid ? b.nm24 : null };
}
