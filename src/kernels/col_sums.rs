//! Column sums of a row-major matrix in f64: the calibration's per-input means and the recurrent
//! ops' bias gradients both add every row of a [rows, cols] f32 matrix into one f64 row.

/// Adds each row of `m` (rows of `acc.len()` values) into `acc`, in row order.
pub fn add_col_sums(acc: &mut [f64], m: &[f32]) {
    debug_assert!(acc.is_empty() || m.len().is_multiple_of(acc.len()), "{} values are not rows of {}", m.len(), acc.len());
    if acc.is_empty() {
        return;
    }
    for row in m.chunks_exact(acc.len()) {
        for (s, &v) in acc.iter_mut().zip(row) {
            *s += v as f64;
        }
    }
}
