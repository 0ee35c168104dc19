//! The training core's Adam update of one run of a parameter's elements (the oracle of the
//! SIMD128 kernel of the same name).

/// The coefficients of one Adam step: the configuration and the step's bias corrections
/// `bc1 = 1 - β1ᵗ`, `bc2 = 1 - β2ᵗ`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamCoefs {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
    pub bc1: f32,
    pub bc2: f32,
}

/// `m = β1 m + (1-β1) g; v = β2 v + (1-β2) g g; w -= lr ((m / bc1) / (sqrt(v / bc2) + eps) + wd w)`
/// per element, in that order of operations; an element whose `keep` is 0 is set to 0 and its
/// moments are left as they are. All slices have `w`'s length.
pub fn adam_update(c: &AdamCoefs, w: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32], keep: Option<&[u8]>) {
    let n = w.len();
    debug_assert!(m.len() == n && v.len() == n && g.len() == n && keep.is_none_or(|k| k.len() == n));
    let (omb1, omb2) = (1.0 - c.beta1, 1.0 - c.beta2);
    for i in 0..n {
        if keep.is_some_and(|k| k[i] == 0) {
            w[i] = 0.0;
            continue;
        }
        let gi = g[i];
        m[i] = c.beta1 * m[i] + omb1 * gi;
        v[i] = c.beta2 * v[i] + omb2 * gi * gi;
        let (mhat, vhat) = (m[i] / c.bc1, v[i] / c.bc2);
        w[i] -= c.lr * (mhat / (vhat.sqrt() + c.eps) + c.weight_decay * w[i]);
    }
}
