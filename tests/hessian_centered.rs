//! The Hessian's input means and its centred statistics (`Hessian::centered`), against sums
//! written out here: rows with non-zero means, a Conv input whose im2col columns see the zero
//! padding (their means are not the channel's), an input that is constant, and an empty Hessian.

#![cfg(not(target_arch = "wasm32"))]

#[path = "support/calib_data.rs"]
mod calib_data;
use calib_data::{hessian_of, rand_vec};
use sparsekit_wasm::calib::{ConvGeometry, Hessian};

/// `rows x cols` inputs with column j offset by `j - cols / 2` (non-zero means of both signs).
fn offset_rows(seed: u64, rows: usize, cols: usize) -> Vec<f32> {
    let mut x = rand_vec(seed, rows * cols);
    for (i, v) in x.iter_mut().enumerate() {
        *v += (i % cols) as f32 - (cols / 2) as f32;
    }
    x
}

/// Means and `mean((x - μ)(x - μ)ᵀ)` of row-major vectors, in f64 from the f32 values.
fn reference(x: &[f32], cols: usize) -> (Vec<f64>, Vec<f64>) {
    let n = x.len() / cols;
    let mut mu = vec![0.0f64; cols];
    for r in x.chunks_exact(cols) {
        for (m, &v) in mu.iter_mut().zip(r) {
            *m += v as f64 / n as f64;
        }
    }
    let mut c = vec![0.0f64; cols * cols];
    for r in x.chunks_exact(cols) {
        for a in 0..cols {
            for b in 0..cols {
                c[a * cols + b] += (r[a] as f64 - mu[a]) * (r[b] as f64 - mu[b]) / n as f64;
            }
        }
    }
    (mu, c)
}

/// Each element within the accumulation's bound (relative to the uncentred diagonal it came from).
fn assert_close(got: &[f64], want: &[f64], diag: &[f64], cols: usize) {
    for a in 0..cols {
        for b in 0..cols {
            let tol = 2e-5 * (diag[a] * diag[b]).sqrt() + 1e-12;
            let (g, w) = (got[a * cols + b], want[a * cols + b]);
            assert!((g - w).abs() <= tol, "element ({a}, {b}): {g} vs {w} (tolerance {tol})");
        }
    }
}

#[test]
fn rows_means_and_centred_matrix() {
    for (rows, cols, calls) in [(200usize, 13usize, vec![200usize]), (130, 70, vec![64, 1, 65])] {
        let x = offset_rows(7 + cols as u64, rows, cols);
        let mut h = Hessian::new(cols).unwrap();
        let mut r0 = 0;
        for n in calls {
            h.add_rows(&x[r0 * cols..(r0 + n) * cols], n).unwrap();
            r0 += n;
        }
        let (mu, c) = reference(&x, cols);
        for (g, w) in h.means().iter().zip(&mu) {
            assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "mean {g} vs {w}");
        }
        let before = h.matrix_f64().unwrap();
        let centred = h.centered().unwrap();
        assert_eq!(centred.count(), h.count());
        assert!(centred.means().iter().all(|&m| m == 0.0), "the centred statistics have zero means");
        assert_close(&centred.matrix_f64().unwrap(), &c, &h.diag_f64(), cols);
        // `h` itself is not changed.
        assert_eq!(h.matrix_f64().unwrap(), before);
    }
}

/// A padded 3x3 Conv: the means are those of the im2col columns (border taps read zeros), which
/// differ from the channel's mean; the centred matrix is that of the im2col vectors.
#[test]
fn conv_columns_see_the_padding() {
    let (n, ch, hh, ww) = (2usize, 3usize, 5usize, 6usize);
    let mut x = rand_vec(3, n * ch * hh * ww);
    for v in x.iter_mut() {
        *v += 2.0;
    }
    let geo = ConvGeometry { kernel_shape: vec![3, 3], strides: Some(vec![2, 1]), pads: Some(vec![1, 1, 1, 1]), dilations: None };
    let cols = ch * 9;
    let mut h = Hessian::new(cols).unwrap();
    h.add_conv(&x, &[n as i64, ch as i64, hh as i64, ww as i64], &geo).unwrap();
    let g = geo.resolve(&[n as i64, ch as i64, hh as i64, ww as i64], x.len(), cols).unwrap();
    let mut rows = vec![0.0f32; g.vectors() * cols];
    g.im2col(&x, 0, g.vectors(), &mut rows);
    let (mu, c) = reference(&rows, cols);
    for (g, w) in h.means().iter().zip(&mu) {
        assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "mean {g} vs {w}");
    }
    // The corner tap (c, 0, 0) reads the padding on the first row: its mean is below channel 0's.
    let chan0: f64 =
        x[..hh * ww].iter().chain(&x[ch * hh * ww..(ch * hh + hh) * ww]).map(|&v| v as f64).sum::<f64>() / (2 * hh * ww) as f64;
    assert!(mu[0] < chan0 - 0.1, "tap (0, 0, 0) mean {} vs channel 0 mean {chan0}", mu[0]);
    assert_close(&h.centered().unwrap().matrix_f64().unwrap(), &c, &h.diag_f64(), cols);
}

/// A constant input has a zero row and column once centred (exactly, not rounding), and the
/// others are untouched by it.
#[test]
fn constant_input_is_zero_once_centred() {
    let (rows, cols) = (300usize, 9usize);
    let mut x = offset_rows(11, rows, cols);
    for r in 0..rows {
        x[r * cols + 4] = 0.3;
    }
    let h = hessian_of(&x, cols);
    let m = h.centered().unwrap().matrix_f64().unwrap();
    for j in 0..cols {
        assert_eq!(m[4 * cols + j], 0.0);
        assert_eq!(m[j * cols + 4], 0.0);
    }
    assert!((h.means()[4] - 0.3).abs() < 1e-7);
    let (_, c) = reference(&x, cols);
    assert_close(&m, &c, &h.diag_f64(), cols);
}

#[test]
fn empty_hessian_centres_to_zero() {
    let h = Hessian::new(4).unwrap();
    assert!(h.means().iter().all(|&m| m == 0.0));
    assert!(h.centered().unwrap().matrix_f64().unwrap().iter().all(|&v| v == 0.0));
}
