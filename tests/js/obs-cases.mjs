// The calibration family of the conformance harness: one case of tests/data/obs-cases
// (Hessian, Wanda, SparseGPT) through the public JS API of a sparsekit-wasm module `api`, with the
// mapping and comparisons of that folder's README; decoding and `close` are the harness's
// (tests/support/cases.mjs). No Node APIs here (shared by the Node run and the Chromium runs).

import { compare, f32, num, prod, stridesOf, tolOf, u8, viewOffsets } from '../support/cases.mjs';

const arg = num;
const contiguous = stridesOf;

/** `got` (array or number) against the expected tensor or number, with the case's tolerance for `key`. */
const close = (c, key, got, exp, label = key) => compare(label, got, exp, tolOf(c, key));

const sameBits = (a, b) => {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(Float32Array.from(a).buffer);
  const y = new Uint32Array(Float32Array.from(b).buffer);
  return x.every((v, i) => v === y[i]);
};

function hessianCall(api, h, call) {
  if (call.op === 'add_rows') return h.addRows(f32(call.x), call.n ?? call.x.shape[0]);
  const conv = { kernelShape: call.conv.kernel_shape };
  for (const [k, js] of [['strides', 'strides'], ['pads', 'pads'], ['dilations', 'dilations']]) {
    if (call.conv[k] !== undefined) conv[js] = call.conv[k];
  }
  return h.addConv(f32(call.x), call.input_shape ?? call.x.shape, conv);
}

function errorIs(api, e, kind, step) {
  if (!(e instanceof api.SparseKitError)) return `${step}: threw ${e && e.name} (${e && e.message}), not a SparseKitError`;
  if (e.code !== kind) return `${step}: code ${e.code}, expected ${kind} (${e.message})`;
  return null;
}

/** Relative reconstruction error in f64 (README "How to compare"). */
function relRecon(w0, w1, H, cols) {
  const quad = (v) => {
    let s = 0;
    for (let a = 0; a < cols; a++) {
      if (v[a] === 0) continue;
      let t = 0;
      for (let b = 0; b < cols; b++) t += H[a * cols + b] * v[b];
      s += v[a] * t;
    }
    return s;
  };
  let num = 0;
  let den = 0;
  for (let r = 0; r < w0.length / cols; r++) {
    const a = Array.from(w0.subarray(r * cols, (r + 1) * cols));
    const d = a.map((x, j) => x - w1[r * cols + j]);
    num += quad(d);
    den += quad(a);
  }
  return num === 0 ? 0 : Math.sqrt(num / den);
}

/**
 * Runs one obs case (parsed JSON) through `api` (the package's exports). Returns null when it
 * passes, else a string saying what differed. Frees everything it allocates.
 */
export function runObsCase(api, c) {
  const owned = [];
  const own = (x) => (owned.push(x), x);
  try {
    return runInner(api, c, own);
  } catch (e) {
    return `unexpected throw: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`;
  } finally {
    for (const o of owned.reverse()) o.free();
  }
}

function runInner(api, c, own) {
  const ex = c.expect;
  const h = own(new api.Hessian(c.hessian.cols));
  const calls = c.hessian.calls;
  for (let i = 0; i < calls.length; i++) {
    const failing = ex.where === 'call' && i === calls.length - 1;
    const before = [h.count, h.matrix()];
    try {
      hessianCall(api, h, calls[i]);
    } catch (e) {
      if (!failing) return `Hessian call ${i} threw ${e.code}: ${e.message}`;
      const bad = errorIs(api, e, ex.error, 'Hessian call');
      if (bad) return bad;
      if (h.count !== before[0] || !sameBits(h.matrix(), before[1])) return 'a refused Hessian call changed the Hessian';
      new api.Hessian(1).free(); // the module stays usable
      return null;
    }
    if (failing) return `Hessian call ${i} succeeded, expected ${ex.error}`;
  }
  if (c.op.startsWith('Hessian.')) {
    if (h.count !== ex.count) return `count ${h.count}, expected ${ex.count}`;
    return close(c, 'matrix', h.matrix(), ex.matrix) ?? close(c, 'input_norms', h.inputNorms(), ex.input_norms);
  }
  const param = own(api.Param.fromArray(f32(c.param), c.param.shape));
  const w = c.view ? own(new api.View(param, c.view.shape, c.view.stride)) : param;
  const vshape = c.view ? c.view.shape : c.param.shape;
  const vstride = c.view ? c.view.stride : contiguous(c.param.shape);
  if (c.op === 'wanda_scores') {
    let scores;
    try {
      scores = api.wandaScores(w, h);
    } catch (e) {
      if (!ex.error) return `wandaScores threw ${e.code}: ${e.message}`;
      return errorIs(api, e, ex.error, 'wandaScores');
    }
    if (ex.error) return `wandaScores succeeded, expected ${ex.error}`;
    const bad = close(c, 'scores', scores, ex.scores);
    if (bad) return bad;
    const [rows, cols] = vshape;
    if (c.args.sparsity !== undefined) {
      const values = new Float32Array(prod(c.param.shape));
      viewOffsets(vshape, vstride).forEach((o, i) => (values[o] = scores[i]));
      const view = c.view ? w : own(api.View.fromExisting(param));
      const spec = own(new api.BlockSpec(view, [1, 1]));
      const scope = own(new api.ScopeSpec(spec, [1, -1]));
      const masks = scope.getMasks({ sparsity: arg(c.args.sparsity), values });
      const m = masks.get(spec);
      const exp = u8(ex.mask);
      if (m.length !== exp.length || m.some((v, i) => (v ? 1 : 0) !== exp[i])) return 'wanda unstructured mask differs';
    }
    if (c.args.nm !== undefined) {
      const [n, m] = c.args.nm;
      const mask = api.createAspMask(scores, [rows, cols], `m${m}n${n}_1d`);
      const exp = u8(ex.nm_mask);
      if (mask.length !== exp.length || mask.some((v, i) => (v ? 1 : 0) !== exp[i])) return 'wanda N:M mask differs';
    }
    return null;
  }
  if (c.op !== 'sparse_gpt') return `unknown op ${c.op}`;
  const opts = {};
  if (c.args.sparsity !== undefined) opts.sparsity = arg(c.args.sparsity);
  if (c.args.nm !== undefined) opts.nm = c.args.nm.map(arg);
  if (c.args.keep !== undefined) opts.keep = u8(c.args.keep);
  if (c.args.block_size !== undefined) opts.blockSize = arg(c.args.block_size);
  if (c.args.perc_damp !== undefined) opts.percDamp = arg(c.args.perc_damp);
  const data0 = param.toArray();
  const h0 = [h.count, h.matrix()];
  const offs = vshape.length === 2 ? viewOffsets(vshape, vstride) : [];
  const w0 = Float32Array.from(offs, (o) => data0[o]);
  let mask;
  try {
    mask = api.sparseGpt(w, h, opts);
  } catch (e) {
    if (!ex.error) return `sparseGpt threw ${e.code}: ${e.message}`;
    const bad = errorIs(api, e, ex.error, 'sparseGpt');
    if (bad) return bad;
    if (!sameBits(param.toArray(), data0)) return 'a refused sparseGpt changed the weights';
    if (h.count !== h0[0] || !sameBits(h.matrix(), h0[1])) return 'a refused sparseGpt changed the Hessian';
    new api.Hessian(1).free();
    return null;
  }
  if (ex.error) return `sparseGpt succeeded, expected ${ex.error}`;
  if (h.count !== h0[0] || !sameBits(h.matrix(), h0[1])) return 'sparseGpt changed the Hessian';
  const em = u8(ex.mask);
  if (mask.length !== em.length || mask.some((v, i) => (v ? 1 : 0) !== em[i])) return 'mask differs';
  const after = param.toArray();
  const bad = close(c, 'param', after, ex.param);
  if (bad) return bad;
  const covered = new Uint8Array(after.length);
  offs.forEach((o) => (covered[o] = 1));
  for (let i = 0; i < after.length; i++) {
    if (!covered[i] && !sameBits([after[i]], [data0[i]])) return `element ${i} outside the view changed`;
  }
  const w1 = Float32Array.from(offs, (o) => after[o]);
  const rel = relRecon(w0, w1, h.matrix(), vshape[1]);
  const badRel = close(c, 'rel_recon_error', rel, ex.rel_recon_error);
  if (badRel) return badRel;
  // The exported helper computes the same quantity.
  return close(c, 'rel_recon_error', api.relReconError(w0, w1, h), ex.rel_recon_error, 'relReconError()');
}

/** The calibration family of the harness (tests/js/conformance-runner.mjs RUNNERS). */
export const obsRunner = {
  handles: (op) => op.startsWith('Hessian.') || op === 'wanda_scores' || op === 'sparse_gpt',
  run: runObsCase,
};
