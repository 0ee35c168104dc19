//! Four blocks interleaved lane by lane (the quad kernels' layout) and their statistics.

use crate::kernels::reduction::{nan_max, nan_min, Reduction};

/// Interleaves four consecutive blocks of `n` elements (`x`, `h`: `4 n` long, block `k` at
/// `[k n ..]`, `n % 4 == 0`) into the layout of [`super::prox_step4`]: `ht[4 j + k] = h`,
/// `hxt[4 j + k] = h * x` (the definition's `H * x0`, the same f32 product).
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

/// Per-lane statistics of four interleaved blocks (`hxt[4 j + k]` = element `j` of block `k`,
/// `ht` likewise): `[sum w, min h, max h, sum w h, sum w h²]` with `w = (hx)²`, each folded in
/// the order of [`super::reduce_chunk`] (4 interleaved lanes, then `(l0 + l1) + (l2 + l3)`), so with the
/// same bits as that function (and [`super::hx_moments`]) applied to each block on its own. The
/// two moments of `h` weighted by `w` give the Newton search its start
/// ([`super::root_start_mu`]). The block length must be a multiple of 4.
pub fn prox_stats4(hxt: &[f32], ht: &[f32]) -> [[f32; 4]; 5] {
    debug_assert!(hxt.len() == ht.len() && hxt.len().is_multiple_of(16));
    let (mut sq, mut lo, mut hi) = ([[0.0f32; 4]; 4], [[f32::INFINITY; 4]; 4], [[f32::NEG_INFINITY; 4]; 4]);
    let (mut m1, mut m2) = ([[0.0f32; 4]; 4], [[0.0f32; 4]; 4]);
    for (a, c) in hxt.chunks_exact(16).zip(ht.chunks_exact(16)) {
        for l in 0..4 {
            for k in 0..4 {
                let (w, h) = (a[4 * l + k] * a[4 * l + k], c[4 * l + k]);
                sq[l][k] += w;
                lo[l][k] = nan_min(lo[l][k], h);
                hi[l][k] = nan_max(hi[l][k], h);
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

/// `[sum w h, sum w h²]` with `w = (hx)²` of one block, in [`super::reduce_chunk`]'s lane order: the
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
