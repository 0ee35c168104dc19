//! The f64 dot product of the unblocked Cholesky loops and of the blocked factorization's
//! panels, in one fixed summation order so that both give the same bits.

/// `<a, b>` with four independent partial sums (a fixed order, so the same bits on every
/// build; four chains instead of one keep the FPU busy, and LLVM can vectorize them).
#[inline]
pub fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            s[l] += x[l] * y[l];
        }
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        s[l] += x * y;
    }
    (s[0] + s[1]) + (s[2] + s[3])
}
