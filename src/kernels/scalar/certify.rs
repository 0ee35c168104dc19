//! The certified stop of the Newton search: one Halley step whose root is proven within the
//! tolerance of the true one.

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
