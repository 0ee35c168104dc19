// An independent float64 oracle for the Adam-conditioned soft threshold of a BlockCoupling (the
// case README's definition, step for step), so that the one case the JS API must accept although
// its case file expects an error (conditioners in param layout, pub-0583) is compared by numbers.
import { prod } from './cases.mjs';

/** Every multi-index of `shape`, row-major. */
function* indices(shape) {
  const n = prod(shape);
  for (let i = 0; i < n; i++) {
    const idx = new Array(shape.length);
    let r = i;
    for (let d = shape.length - 1; d >= 0; d--) {
      idx[d] = r % shape[d];
      r = Math.floor(r / shape[d]);
    }
    yield idx;
  }
}

/**
 * The params after `softThreshold(thresholds, {conditioners, maxIter, atol, eps})` on a coupling.
 * specs: [{param: Float64Array-like (param layout), viewShape, viewStride, blockShape}];
 * conditioners: one param-layout array per spec; orders: [] for the identity.
 * Returns one Float64Array per param (elements outside the views unchanged).
 */
export function couplingAdamProx(specs, orders, thresholds, conditioners, { maxIter = 20, atol = 1e-8, eps = 1.1920929e-7 } = {}) {
  const ndim = specs[0].viewShape.length;
  const ords = orders.length ? orders : specs.map(() => [...Array(ndim).keys()]);
  const geo = specs.map((s) => {
    const block = s.blockShape.length === 0 ? s.viewShape.map(() => 1) : s.blockShape.map((b, d) => (b <= 0 ? s.viewShape[d] : b));
    return { ...s, block, grid: s.viewShape.map((n, d) => n / block[d]) };
  });
  const G = ords[0].map((k) => geo[0].grid[k]);
  // Param offsets of every joint block, in aligned row-major order, spec after spec.
  const blocks = [...indices(G)].map((a) =>
    geo.flatMap((s, i) => {
      const b = new Array(ndim);
      ords[i].forEach((k, j) => {
        b[k] = a[j];
      });
      return [...indices(s.block)].map((e) => ({ i, off: e.reduce((o, x, d) => o + (b[d] * s.block[d] + x) * s.viewStride[d], 0) }));
    }),
  );
  const x0 = (el) => specs[el.i].param[el.off];
  const h = (el) => conditioners[el.i][el.off];
  const norm = (f, blk) => Math.sqrt(blk.reduce((a, el) => a + f(el) ** 2, 0));
  const t = Array.from(thresholds);
  const D = blocks.map((blk, g) => norm((el) => h(el) * x0(el), blk) - t[g]);
  const nonSurvivor = D.map((d) => d <= 0);
  const lo = blocks.map((blk, g) => Math.max(0, (t[g] * Math.min(...blk.map(h))) / Math.max(D[g], eps)));
  const hi = blocks.map((blk, g) => Math.max(0, (t[g] * Math.max(...blk.map(h))) / Math.max(D[g], eps)));
  const mu = lo.map((l, g) => (l + hi[g]) / 2);
  for (let it = 0; it < maxIter; it++) {
    blocks.forEach((blk, g) => {
      const zeta = mu[g] * norm((el) => (h(el) * x0(el)) / (h(el) + mu[g]), blk);
      if (zeta < t[g]) lo[g] = mu[g];
      else hi[g] = mu[g];
      mu[g] = (lo[g] + hi[g]) / 2;
    });
    if (Math.max(...lo.map((l, g) => Math.abs(l - hi[g]))) < atol) break;
  }
  const out = specs.map((s) => Float64Array.from(s.param));
  blocks.forEach((blk, g) => {
    for (const el of blk) out[el.i][el.off] = ((x0(el) * h(el)) / (h(el) + mu[g])) * (nonSurvivor[g] ? 0 : 1);
  });
  return out;
}
