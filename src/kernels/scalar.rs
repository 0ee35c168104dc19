//! Portable kernels: the reference that the SIMD kernels must reproduce bit for bit.

use super::{BlockRun, ProxLanes, ProxStop, QuadSearch, Reduction, RootLanes, RootStart};

/// One element's contribution to a reduction.
#[inline(always)]
fn map(op: Reduction, x: f32) -> f32 {
    match op {
        Reduction::SumAbs | Reduction::MaxAbs => x.abs(),
        Reduction::SumSq => x * x,
        Reduction::Min | Reduction::Max => x,
    }
}

/// Reduces one contiguous chunk with 4 interleaved lanes: element `i` goes to lane `i % 4`,
/// lanes combine as `(l0 + l1) + (l2 + l3)`. This order is the contract with the SIMD kernel.
#[inline]
pub fn reduce_chunk(op: Reduction, chunk: &[f32]) -> f32 {
    let mut lanes = [op.identity(); 4];
    let mut quads = chunk.chunks_exact(4);
    for q in &mut quads {
        for l in 0..4 {
            lanes[l] = op.combine(lanes[l], map(op, q[l]));
        }
    }
    for (l, &x) in quads.remainder().iter().enumerate() {
        lanes[l] = op.combine(lanes[l], map(op, x));
    }
    op.combine(op.combine(lanes[0], lanes[1]), op.combine(lanes[2], lanes[3]))
}

pub fn reduce_chunks(op: Reduction, row: &[f32], chunk: usize, acc: &mut [f32], acc_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    // Monomorphic loops for the sums (what the native build autovectorizes). Both are the
    // contract's order: reduce_chunk([x]) is map(x), and for 4 elements every lane starts at
    // 0 + map(x_l) = map(x_l) (map of a sum is never -0.0).
    if matches!(op, Reduction::SumSq | Reduction::SumAbs) && (chunk == 1 || chunk == 4) {
        let m = |x: f32| if op == Reduction::SumSq { x * x } else { x.abs() };
        if chunk == 1 {
            if op == Reduction::SumSq {
                for (j, &x) in row.iter().enumerate() {
                    acc[j * acc_stride] += x * x;
                }
            } else {
                for (j, &x) in row.iter().enumerate() {
                    acc[j * acc_stride] += x.abs();
                }
            }
        } else {
            for (j, c) in row.chunks_exact(4).enumerate() {
                acc[j * acc_stride] += (m(c[0]) + m(c[1])) + (m(c[2]) + m(c[3]));
            }
        }
        return;
    }
    for (j, c) in row.chunks_exact(chunk).enumerate() {
        let a = &mut acc[j * acc_stride];
        *a = op.combine(*a, reduce_chunk(op, c));
    }
}

pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    for (j, c) in row.chunks_exact_mut(chunk).enumerate() {
        let f = factors[j * f_stride];
        for x in c {
            *x *= f;
        }
    }
}

pub fn cond_sumsq(x: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(x.len(), h.len());
    let mut lanes = [0.0f32; 4];
    let n4 = x.len() / 4 * 4;
    for i in (0..n4).step_by(4) {
        for l in 0..4 {
            let q = (h[i + l] * x[i + l]) / (h[i + l] + mu);
            lanes[l] += q * q;
        }
    }
    for i in n4..x.len() {
        let q = (h[i] * x[i]) / (h[i] + mu);
        lanes[i - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

pub fn cond_sumsq_hx(hx: &[f32], h: &[f32], mu: f32) -> f32 {
    debug_assert_eq!(hx.len(), h.len());
    let mut lanes = [0.0f32; 4];
    let mut q4 = hx.chunks_exact(4).zip(h.chunks_exact(4));
    for (a, b) in &mut q4 {
        for l in 0..4 {
            let q = a[l] / (b[l] + mu);
            lanes[l] += q * q;
        }
    }
    let n4 = hx.len() / 4 * 4;
    for i in n4..hx.len() {
        let q = hx[i] / (h[i] + mu);
        lanes[i - n4] += q * q;
    }
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// One group of 4: element `i` is kept when fewer than 2 others beat it (a larger key, or an
/// equal key at a lower index).
#[inline(always)]
pub fn nm24_group(g: &[f32], m: &mut [core::mem::MaybeUninit<u8>]) {
    let k = [
        crate::kernels::order::magnitude_key(g[0]),
        crate::kernels::order::magnitude_key(g[1]),
        crate::kernels::order::magnitude_key(g[2]),
        crate::kernels::order::magnitude_key(g[3]),
    ];
    for i in 0..4 {
        let mut beaten = 0u32;
        for j in 0..4 {
            beaten += u32::from(k[j] > k[i] || (k[j] == k[i] && j < i));
        }
        m[i].write(u8::from(beaten < 2));
    }
}

pub fn nm24_mask(values: &[f32], mask: &mut [u8]) {
    // SAFETY: initialised bytes seen as possibly-uninitialised ones; only 0/1 are written.
    nm24_mask_uninit(values, unsafe { &mut *(mask as *mut [u8] as *mut [core::mem::MaybeUninit<u8>]) })
}

/// [`nm24_mask`] into storage not yet initialised (every byte is written), so the caller's
/// output needs no zero-fill pass.
pub fn nm24_mask_uninit(values: &[f32], mask: &mut [core::mem::MaybeUninit<u8>]) {
    debug_assert!(values.len() == mask.len() && values.len().is_multiple_of(4));
    for (g, m) in values.chunks_exact(4).zip(mask.chunks_exact_mut(4)) {
        nm24_group(g, m);
    }
}

/// BlockSpec's Adam update of one element, the seed's `(H / (H + mu)) * x`; where `H + mu == 0`
/// (a zero conditioner entry with `mu = 0`, i.e. a zero threshold) its 0/0 is defined as no
/// change.
#[inline(always)]
pub fn prox_scaled(x: f32, h: f32, mu: f32) -> f32 {
    let d = h + mu;
    if d == 0.0 {
        x
    } else {
        (h / d) * x
    }
}

pub fn prox_write(x: &mut [f32], h: &[f32], chunk: usize, mu_keep: &[(f32, f32)], step: usize) {
    debug_assert!(chunk > 0 && x.len() == h.len() && x.len().is_multiple_of(chunk));
    for (j, (xc, hc)) in x.chunks_exact_mut(chunk).zip(h.chunks_exact(chunk)).enumerate() {
        let (mu, keep) = mu_keep[j * step];
        for (x, &h) in xc.iter_mut().zip(hc) {
            *x = prox_scaled(*x, h, mu) * keep;
        }
    }
}

pub fn prox_pack4(x: &[f32], h: &[f32], hxt: &mut [f32], ht: &mut [f32]) {
    let n = x.len() / 4;
    assert!(n.is_multiple_of(4) && h.len() == 4 * n && hxt.len() == 4 * n && ht.len() == 4 * n);
    for k in 0..4 {
        for j in 0..n {
            ht[4 * j + k] = h[k * n + j];
            hxt[4 * j + k] = h[k * n + j] * x[k * n + j];
        }
    }
}

pub fn prox_stats4(hxt: &[f32], ht: &[f32]) -> [[f32; 4]; 5] {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let (mut sq, mut lo, mut hi) = ([[0.0f32; 4]; 4], [[f32::INFINITY; 4]; 4], [[f32::NEG_INFINITY; 4]; 4]);
    let (mut m1, mut m2) = ([[0.0f32; 4]; 4], [[0.0f32; 4]; 4]);
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for l in 0..4 {
            for k in 0..4 {
                let (w, h) = (a[4 * l + k] * a[4 * l + k], c[4 * l + k]);
                sq[l][k] += w;
                lo[l][k] = super::nan_min(lo[l][k], h);
                hi[l][k] = super::nan_max(hi[l][k], h);
                let wh = w * h;
                m1[l][k] += wh;
                m2[l][k] += wh * h;
            }
        }
    }
    let fold = |v: &[[f32; 4]; 4], op: Reduction| -> [f32; 4] {
        std::array::from_fn(|k| op.combine(op.combine(v[0][k], v[1][k]), op.combine(v[2][k], v[3][k])))
    };
    let sum = Reduction::SumSq;
    [fold(&sq, sum), fold(&lo, Reduction::Min), fold(&hi, Reduction::Max), fold(&m1, sum), fold(&m2, sum)]
}

/// `[sum w h, sum w h²]` with `w = (hx)²` of one block, in [`reduce_chunk`]'s lane order: the
/// moments [`prox_stats4`] gives a quad's blocks, for a block searched on its own.
pub fn hx_moments(hx: &[f32], h: &[f32]) -> [f32; 2] {
    debug_assert_eq!(hx.len(), h.len());
    let mut lanes = [[0.0f32; 4]; 2];
    for (i, (&a, &c)) in hx.iter().zip(h).enumerate() {
        let wh = (a * a) * c;
        lanes[0][i % 4] += wh;
        lanes[1][i % 4] += wh * c;
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// The Newton search's start from a block's moments: `sum w = A²`, `sum w h`, `sum w h²`
/// (`w = (hx)²`), `a = A`, threshold `t`, inside the bracket `(lo, hi)`. With `m` and `V` the
/// `w`-weighted mean and variance of `h`, `1 / sqrt(S2) = (m + mu - 1.5 V / (m + mu)) / A` to
/// second order in the spread of `h` around `m` (exact for constant `H`), so the root of
/// `1 / sqrt(S2) = mu / t` is near the positive root of
/// `(A - t) mu² + (A - 2t) m mu - t (m² - 1.5 V) = 0`, taken in the form that subtracts no two
/// like terms. On Adam-like conditioners it lies a median 1 % of the bracket from the root, close
/// enough for one evaluation to certify the root ([`certified_root`]). Anything outside
/// `(lo, hi)` (or NaN) falls back to the bracket's midpoint.
#[inline(always)]
pub fn root_start_mu(sumsq: f32, swh: f32, swh2: f32, a: f32, t: f32, lo: f32, hi: f32) -> f32 {
    let mid = (lo + hi) * 0.5;
    let inv = 1.0 / sumsq;
    let m = swh * inv;
    let v = swh2 * inv - m * m;
    // pmax(v, 0): a negative variance (rounding) is 0, NaN stays NaN.
    let v = if v < 0.0 { 0.0 } else { v };
    let p = a - t;
    let qc = (p - t) * m;
    let rc = t * (m * m - 1.5 * v);
    let root = (qc * qc + (4.0 * p) * rc).sqrt();
    let (num, den) = if qc > 0.0 { (rc * 2.0, qc + root) } else { (root - qc, p * 2.0) };
    let mu = num / den;
    if mu > lo && mu < hi {
        mu
    } else {
        mid
    }
}

pub fn prox_step4(hxt: &[f32], ht: &[f32], s: &mut ProxLanes, stop: ProxStop) -> bool {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mu = s.mu;
    let mut acc = [[0.0f32; 4]; 4];
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for (l, lane) in acc.iter_mut().enumerate() {
            for k in 0..4 {
                let q = a[4 * l + k] / (c[4 * l + k] + mu[k]);
                lane[k] += q * q;
            }
        }
    }
    for k in 0..4 {
        if s.go[k] == 0 {
            continue;
        }
        let sum = (acc[0][k] + acc[1][k]) + (acc[2][k] + acc[3][k]);
        // mu == 0 only for the bracket [0, 0] (t = 0 or H = 0 on the block): zeta is 0 there,
        // which also avoids 0/0 on zero conditioner entries.
        let zeta = if mu[k] == 0.0 { 0.0 } else { mu[k] * sum.sqrt() };
        if zeta < s.t[k] {
            s.lo[k] = mu[k];
        } else {
            s.hi[k] = mu[k];
        }
        s.mu[k] = (s.lo[k] + s.hi[k]) / 2.0;
        s.iters[k] += 1;
        let done = match stop {
            ProxStop::Converged { max_iter, atol } => s.iters[k] >= max_iter || (s.lo[k] - s.hi[k]).abs() < atol,
            ProxStop::At(n) => s.iters[k] >= n,
        };
        if done {
            s.go[k] = 0;
        }
    }
    s.go.iter().any(|&g| g != 0)
}

/// One element's terms of [`root_sums_hx`]: `q² r`, `q² r h` and `q² r r` with
/// `r = 1 / (h + mu)`, `q = hx r`.
#[inline(always)]
fn root_terms(hx: f32, h: f32, mu: f32) -> [f32; 3] {
    let r = 1.0 / (h + mu);
    let q = hx * r;
    let q2r = (q * q) * r;
    [q2r, q2r * h, q2r * r]
}

pub fn root_sums_hx(hx: &[f32], h: &[f32], mu: f32) -> [f32; 3] {
    debug_assert_eq!(hx.len(), h.len());
    let mut lanes = [[0.0f32; 4]; 3];
    for (i, (&a, &b)) in hx.iter().zip(h).enumerate() {
        for (l, v) in lanes.iter_mut().zip(root_terms(a, b, mu)) {
            l[i % 4] += v;
        }
    }
    lanes.map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

/// The safeguarded Newton step of lane `k` from its sums `[S3, Sh, S4]` at `mu` (see
/// `block::root` for the algebra): `S2 = Sh + mu S3`, `zeta = mu sqrt(S2)` moves the bracket
/// end on its side to `mu` (the bisection's test), then `mu - S2 g / (S3 g - sqrt(S2) Sh)` with
/// `g = t - zeta` is taken if it stays in the bracket and at most halves the previous step;
/// otherwise the open bracket end it overshoots, else the midpoint. Stops once the root is
/// certified within `tol` of the model's ([`certified_root`]), the bracket is within `2 tol`
/// (taking its midpoint), the step within `tol`, the error predicted after two Newton steps
/// (`s (s / s_prev)²`, quadratic convergence) within `tol`, or after `max_evals`.
#[inline(always)]
pub fn root_step_lane(s: &mut RootLanes, k: usize, sums: [f32; 3], max_evals: u32) {
    let [s3, sh, s4] = sums;
    let (mu, t) = (s.mu[k], s.t[k]);
    let s2 = sh + mu * s3;
    let w = s2.sqrt();
    let zeta = if mu == 0.0 { 0.0 } else { mu * w };
    if zeta < t {
        s.lo[k] = mu;
        s.lo_open[k] = 0;
    } else {
        s.hi[k] = mu;
        s.hi_open[k] = 0;
    }
    let (lo, hi, tol) = (s.lo[k], s.hi[k], s.tol[k]);
    let g = t - zeta;
    s.evals[k] += 1;
    let (certified, model) = certified_root([mu, t, tol, lo, hi, s.h_min[k], s.h_max[k]], [s2, s3, sh, s4, w, g]);
    if certified {
        s.mu[k] = model;
        s.go[k] = 0;
        return;
    }
    let newton = mu - (s2 * g) / (s3 * g - w * sh);
    let mid = (lo + hi) * 0.5;
    let take = newton >= lo && newton <= hi && (newton - mu).abs() * 2.0 <= s.prev[k];
    let next = if take {
        newton
    } else if newton > hi && s.hi_open[k] != 0 {
        hi
    } else if newton < lo && s.lo_open[k] != 0 {
        lo
    } else {
        mid
    };
    let narrow = hi - lo <= tol * 2.0;
    let next = if narrow { mid } else { next };
    let step = (next - mu).abs();
    let ratio = step / s.newt[k];
    let predicted = take && ratio * ratio * step <= tol;
    s.mu[k] = next;
    s.prev[k] = step;
    s.newt[k] = if take { step } else { 0.0 };
    if narrow || step <= tol || predicted || s.evals[k] >= max_evals {
        s.go[k] = 0;
    }
}

/// The root of the quadratic Taylor model of `F(mu) = 1 / sqrt(S2) - mu / t` at the evaluated
/// `mu` (one Halley step), and whether the true root is certified within `tol` of it.
///
/// With `y_i = 1 / (h_i + mu)` and the weights `p_i ∝ (h_i x_i)² y_i²`, `u = S2^(-1/2)` has
/// `u'' = -3 u Var(y)` (hence `S4`) and `u''' = u (9 E[y] Var(y) + 12 E[(y - E y)³])`. On an
/// interval of `mu` where `y` spans at most `R` below `y_max`, `|u'''| <= u (2.25 y_max R² + 3 R³)`
/// (Popoviciu: `Var <= R² / 4`; the third moment is at most `R Var`), and `u` is at most its
/// tangent from `mu` (it is concave). So `F` lies within `M3 d³ / 6` of the model `d` away from
/// `mu`: if the model, widened by twice that, is positive at `root - tol` and negative at
/// `root + tol`, `F` changes sign (once: it is concave and positive at 0) inside that interval.
/// The search then stops after this evaluation. The interval is sized from the Newton step
/// (known one division earlier than the model's root, which must then lie within 9/8 of it).
/// `lane = [mu, t, tol, lo, hi, h_min, h_max]`, `sums = [S2, S3, Sh, S4, sqrt(S2), t - zeta]`.
#[inline(always)]
pub fn certified_root(lane: [f32; 7], sums: [f32; 6]) -> (bool, f32) {
    let [mu, t, tol, lo, hi, h_min, h_max] = lane;
    let [s2, s3, sh, s4, w, g] = sums;
    // F' = den / (t S2 w), F''/F' = 2 half; the model in units of F' is q(d) = d - dn + half d².
    let den = s3 * g - w * sh;
    let (inv, inv_s2) = (1.0 / den, 1.0 / s2);
    let dn = -((s2 * g) * inv);
    let span = dn.abs() * 1.125 + tol;
    let low = mu - span;
    let (d_min, d_max) = (h_min + low, h_max + low);
    let (y_max, r) = (1.0 / d_min, (h_max - h_min) / (d_min * d_max));
    let m3 = ((2.25 * y_max + 3.0 * r) * r) * r;
    let u_hi = 1.0 + (s3 * span) * inv_s2;
    // Twice M3 span³ / 6 over |F'|, with u = u_hi / w (1/3 rounded up).
    let bound = (((u_hi * m3) * ((span * span) * span)) * (t * s2)) * (inv.abs() * 0.333_333_34);
    let half = ((-1.5 * t) * (s2 * s4 - s3 * s3)) * (inv * inv_s2);
    let dh = dn / (1.0 + half * dn);
    let (dm, dp) = (dh - tol, dh + tol);
    let (qm, qp) = ((dm - dn) + half * (dm * dm), (dp - dn) + half * (dp * dp));
    let model = mu + dh;
    let fits = den < 0.0 && d_min > 0.0 && dh.abs() <= dn.abs() * 1.125 && model >= lo && model <= hi;
    (fits && qm + bound < 0.0 && qp - bound > 0.0, model)
}

pub fn prox_root4(hxt: &[f32], ht: &[f32], s: &mut RootLanes, max_evals: u32) -> bool {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let mut acc = [[[0.0f32; 4]; 4]; 3];
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for l in 0..4 {
            for k in 0..4 {
                let terms = root_terms(a[4 * l + k], c[4 * l + k], s.mu[k]);
                for (sum, v) in acc.iter_mut().zip(terms) {
                    sum[l][k] += v;
                }
            }
        }
    }
    for k in 0..4 {
        if s.go[k] != 0 {
            let sums = acc.map(|v| (v[0][k] + v[1][k]) + (v[2][k] + v[3][k]));
            root_step_lane(s, k, sums, max_evals);
        }
    }
    s.go.iter().any(|&g| g != 0)
}

pub fn root_start4(stats: &[[f32; 4]; 5], t: [f32; 4], c: &RootStart) -> Option<[[f32; 4]; 4]> {
    let mut out = [[0.0f32; 4]; 4];
    for k in 0..4 {
        [out[0][k], out[1][k], out[2][k], out[3][k]] = root_start_lane(stats, k, t[k], c)?;
    }
    Some(out)
}

/// [`root_start4`]'s lane `k`: `[lo, hi, mu, tol]`, or `None` unless it is a plain search.
#[inline(always)]
pub fn root_start_lane(stats: &[[f32; 4]; 5], k: usize, tk: f32, c: &RootStart) -> Option<[f32; 4]> {
    let a = stats[0][k].sqrt();
    let d = a - tk;
    let den = if c.coupling {
        if d >= c.eps {
            d
        } else {
            c.eps
        }
    } else {
        d + c.eps
    };
    let (lo, hi) = ((tk * stats[1][k]) / den, (tk * stats[2][k]) / den);
    let plain = tk > 0.0 && tk < f32::INFINITY && a < f32::INFINITY && a > tk && stats[1][k] > 0.0 && lo < hi && hi < f32::INFINITY;
    if !plain {
        return None;
    }
    let resolution = 4.0 * f32::EPSILON * hi * (a / d);
    let tol = ((hi - lo) * c.halvings).max(c.atol * 0.5).max(resolution);
    let mu = root_start_mu(stats[0][k], stats[3][k], stats[4][k], a, tk, lo, hi);
    Some([lo, hi, mu, tol])
}

/// A block the step zeroes (`||H x0|| <= t`, `t > 0`) whose result needs no search: with
/// `min H > 0` and `eps > 0` the bracket is `[t min H / eps, t max H / eps]` and the block is
/// written `((h / (h + mu)) x) 0` with `mu` its upper end, or its midpoint where it is a point or
/// there is no iteration (`block::root::plan`'s order, and `block::prox`'s bracket). Returns that
/// `mu`, or `None` (the block is not zeroed, or its case is left to the general path).
#[inline(always)]
pub fn zeroed_mu(a: f32, t: f32, h_min: f32, h_max: f32, c: &RootStart, max_evals: u32) -> Option<f32> {
    if !(a - t <= 0.0 && t > 0.0 && h_min > 0.0 && c.eps > 0.0) {
        return None;
    }
    let (lo, hi) = ((t * h_min) / c.eps, (t * h_max) / c.eps);
    Some(if max_evals == 0 || lo == hi { (lo + hi) * 0.5 } else { hi })
}

/// The bisection's iterate after `k` steps (`cells = 2^k`) on `[lo, hi]` for a block whose root
/// is `r`: the middle of the `2^-k` cell of the bracket that holds `r` (see `block::root`), in
/// f64; past 48 steps the cell is below f32 resolution and the root itself is returned.
#[inline]
pub fn bisection_iterate(lo: f32, hi: f32, r: f32, k: usize, cells: f64) -> f32 {
    if k == 0 {
        return (lo + hi) / 2.0;
    }
    let (lo64, w) = (f64::from(lo), f64::from(hi) - f64::from(lo));
    if k >= 48 || w.is_nan() || w <= 0.0 {
        return r;
    }
    let j = ((f64::from(r) - lo64) / w * cells).floor().clamp(0.0, cells - 1.0);
    (lo64 + (j + 0.5) * (w / cells)) as f32
}

/// The composition [`super::adam_run`] is defined by, quad by quad (the quads are
/// independent): gather the four blocks, pack, statistics, start, search, read off, write.
pub fn adam_run(x: &mut [f32], h: &[f32], run: &BlockRun, t: &[f32], s: &QuadSearch, ok: &mut [bool]) {
    run.check(x.len(), h.len(), t.len(), ok.len());
    let n = run.rows * 4 * run.vecs;
    let w = 4 * run.vecs;
    // Four buffers of 4 n: on the stack for blocks up to 64 elements.
    let (mut stack, mut heap) = ([0.0f32; 1024], Vec::new());
    let buf: &mut [f32] = if 16 * n <= stack.len() {
        &mut stack[..16 * n]
    } else {
        heap.resize(16 * n, 0.0);
        &mut heap
    };
    let (xb, rest) = buf.split_at_mut(4 * n);
    let (hb, rest) = rest.split_at_mut(4 * n);
    let (hxt, ht) = rest.split_at_mut(4 * n);
    for (q, ok) in ok.iter_mut().enumerate() {
        let at: [(usize, usize); 4] = std::array::from_fn(|k| run.block_at(q, k));
        for (k, &(xo, ho)) in at.iter().enumerate() {
            for r in 0..run.rows {
                let (xo, ho) = (xo + r * run.x_stride, ho + r * run.h_stride);
                xb[k * n + r * w..][..w].copy_from_slice(&x[xo..xo + w]);
                hb[k * n + r * w..][..w].copy_from_slice(&h[ho..ho + w]);
            }
        }
        prox_pack4(xb, hb, hxt, ht);
        let stats = prox_stats4(hxt, ht);
        let qt: [f32; 4] = std::array::from_fn(|k| t[run.block(q, k)]);
        // Each lane a plain search or a zeroed block, else the quad is refused.
        let lanes: [Option<Result<[f32; 4], f32>>; 4] = std::array::from_fn(|k| {
            let zeroed = || zeroed_mu(stats[0][k].sqrt(), qt[k], stats[1][k], stats[2][k], &s.start, s.max_evals);
            root_start_lane(&stats, k, qt[k], &s.start).map(Ok).or_else(|| zeroed().map(Err))
        });
        if lanes.iter().any(Option::is_none) {
            *ok = false;
            continue;
        }
        let lanes = lanes.map(Option::unwrap);
        let mut rl = RootLanes::default();
        for (k, lane) in lanes.iter().enumerate() {
            if let Ok([lo, hi, mu, tol]) = *lane {
                rl.search(k, lo, hi, mu, qt[k], tol, stats[1][k], stats[2][k]);
            }
        }
        while prox_root4(hxt, ht, &mut rl, s.max_evals) {}
        for (k, &(xo, _)) in at.iter().enumerate().take(run.lanes(q)) {
            let (m, keep) = match lanes[k] {
                Ok([lo, hi, ..]) => (bisection_iterate(lo, hi, rl.mu[k], s.k_stop, s.cells), 1.0),
                Err(mu) => (mu, 0.0),
            };
            let xk = &mut xb[k * n..(k + 1) * n];
            prox_write(xk, &hb[k * n..(k + 1) * n], n, &[(m, keep)], 1);
            for r in 0..run.rows {
                let xo = xo + r * run.x_stride;
                x[xo..xo + w].copy_from_slice(&xk[r * w..(r + 1) * w]);
            }
        }
        *ok = true;
    }
}
