// The pruning plan and its execution with sparsekit-wasm. Pure functions of their inputs: runs in the
// page's Web Worker (prune-worker.js) and in Node. `sk` is the imported sparsekit-wasm module.

import { DEFAULT_CONFIG } from 'sparsekit-wasm';

const gcd = (a, b) => (b ? gcd(b, a % b) : a);

// The default plan (rule, allocation, 2:4 preset) is the package's documented export, so users can
// reproduce what the page does; re-exported here for the page and its tests.
export {
  DEFAULT_CONFIG, DEFAULT_RULE, NM24_RULE, describeRule, nmGroupLength, nm24ConfigFor, magnitudeAllocation, defaultPlan,
} from 'sparsekit-wasm';

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
