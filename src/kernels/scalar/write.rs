//! The Adam step's final write: each element scaled by `H / (H + mu)` and its block's keep factor.

/// BlockSpec's Adam update of one element, `(H / (H + mu)) * x` in the definition's order of
/// operations (docs/API.md, "The soft threshold"); where `H + mu == 0`
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

/// The final write of BlockSpec's Adam step on a contiguous row: piece `j` (`chunk` long) of
/// `x` belongs to the block of `mu_keep[j * step] = (mu, keep)`, and each element becomes
/// `((H / (H + mu)) * x) * keep` (`x * keep` where `H + mu == 0`, see
/// [`super::prox_scaled`]).
pub fn prox_write(x: &mut [f32], h: &[f32], chunk: usize, mu_keep: &[(f32, f32)], step: usize) {
    debug_assert!(chunk > 0 && x.len() == h.len() && x.len().is_multiple_of(chunk));
    for (j, (xc, hc)) in x.chunks_exact_mut(chunk).zip(h.chunks_exact(chunk)).enumerate() {
        let (mu, keep) = mu_keep[j * step];
        for (x, &h) in xc.iter_mut().zip(hc) {
            *x = prox_scaled(*x, h, mu) * keep;
        }
    }
}
