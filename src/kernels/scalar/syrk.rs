//! The portable register tile of the Hessian's update ([`crate::kernels::syrk`]): the oracle of
//! its contract, and what runs off SIMD128.

use crate::kernels::syrk::{PANEL, STRIP};

/// `STRIP x PANEL` f32 sums from zero over `k` packed rows (row `p` of `a` at `a[p * PANEL..]`,
/// of `b` at `b[p * PANEL..]`), `p` in order, each then added as f64 to `h[r * ldh + c]`.
///
/// # Safety
/// `a` and `b` are readable for `k` rows of `PANEL` f32 (`a`'s first `STRIP` read); `h` is
/// writable for `STRIP` rows of `PANEL` f64 at stride `ldh`.
#[inline(always)]
pub unsafe fn syrk_tile(a: *const f32, b: *const f32, k: usize, h: *mut f64, ldh: usize) {
    let mut acc = [[0.0f32; PANEL]; STRIP];
    for p in 0..k {
        let (ap, bp) = (a.add(p * PANEL), b.add(p * PANEL));
        // p outer, columns inner: each element still sees p in order (natively this
        // autovectorizes without changing any element's sequence of operations).
        for (r, row) in acc.iter_mut().enumerate() {
            let av = *ap.add(r);
            for (c, s) in row.iter_mut().enumerate() {
                *s += av * *bp.add(c);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        for (c, &s) in row.iter().enumerate() {
            *h.add(r * ldh + c) += s as f64;
        }
    }
}
