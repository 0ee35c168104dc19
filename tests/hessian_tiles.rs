//! The Hessian's tiled update (src/kernels/syrk.rs) against references written out here: the
//! contract's exact bits (each chunk of 64 rows summed in f32 from zero in row order, widened and
//! added to an f64 sum), an f64 sum of products within the documented bound, calls split at and
//! off chunk boundaries, and (with `--features native-threads`) the same bits on 1, 2 and 3
//! workers. Column counts that are not multiples of the 8-column panels nor of the 64-column
//! tiles, and row counts over one packed slab.

#![cfg(not(target_arch = "wasm32"))]

#[path = "support/calib_data.rs"]
mod calib_data;
use calib_data::{hessian_of, rand_vec};
use sparsekit_wasm::calib::hessian::CHUNK;
use sparsekit_wasm::calib::Hessian;

/// The contract, one element at a time: per call, chunks of `CHUNK` rows from its first row.
fn contract_sum(x: &[f32], cols: usize, calls: &[usize]) -> Vec<f64> {
    let mut sum = vec![0.0f64; cols * cols];
    let mut r0 = 0;
    for &n in calls {
        for c0 in (r0..r0 + n).step_by(CHUNK) {
            let c1 = (c0 + CHUNK).min(r0 + n);
            for a in 0..cols {
                for b in a..cols {
                    let mut s = 0.0f32;
                    for r in c0..c1 {
                        s += x[r * cols + a] * x[r * cols + b];
                    }
                    sum[a * cols + b] += s as f64;
                }
            }
        }
        r0 += n;
    }
    sum
}

fn hessian_in_calls(x: &[f32], cols: usize, calls: &[usize]) -> Hessian {
    let mut h = Hessian::new(cols).unwrap();
    let mut r0 = 0;
    for &n in calls {
        h.add_rows(&x[r0 * cols..(r0 + n) * cols], n).unwrap();
        r0 += n;
    }
    h
}

fn upper_bits(h: &Hessian) -> Vec<u64> {
    let c = h.cols();
    let m = h.matrix_f64().unwrap();
    (0..c).flat_map(|a| (a..c).map(move |b| (a, b))).map(|(a, b)| m[a * c + b].to_bits()).collect()
}

/// Every element equals the contract's, bit for bit, for shapes around the panel and tile
/// edges and calls that end inside a chunk.
#[test]
fn tiles_give_the_contracts_bits() {
    for (cols, calls) in [
        (1usize, vec![5usize]),
        (7, vec![64, 1, 63]),
        (8, vec![200]),
        (13, vec![7, 293]),
        (64, vec![65, 64]),
        (65, vec![130]),
        (130, vec![1, 128, 3]),
        (200, vec![257]),
    ] {
        let n: usize = calls.iter().sum();
        let x = rand_vec(cols as u64 * 7 + n as u64, n * cols);
        let h = hessian_in_calls(&x, cols, &calls);
        let want = contract_sum(&x, cols, &calls);
        let inv = 1.0 / n as f64;
        let got = h.matrix_f64().unwrap();
        for a in 0..cols {
            for b in a..cols {
                let w = want[a * cols + b] * inv;
                assert_eq!(
                    got[a * cols + b].to_bits(),
                    w.to_bits(),
                    "cols {cols} calls {calls:?} H[{a},{b}]: {} vs {w}",
                    got[a * cols + b]
                );
                assert_eq!(got[b * cols + a].to_bits(), w.to_bits(), "symmetric");
            }
        }
    }
}

/// Calls split at chunk boundaries give one call's bits; calls split inside chunks stay within
/// the documented bound of it (and of the exact sum).
#[test]
fn split_calls_equal_one_call() {
    let (cols, n) = (37, 64 * 5 + 9);
    let x = rand_vec(41, n * cols);
    let one = hessian_in_calls(&x, cols, &[n]);
    assert_eq!(upper_bits(&hessian_in_calls(&x, cols, &[128, 64, n - 192])), upper_bits(&one));
    let split = hessian_in_calls(&x, cols, &[1, 63, 30, 70, 100, n - 264]);
    assert_eq!(split.count(), one.count());
    let (m1, m2) = (one.matrix_f64().unwrap(), split.matrix_f64().unwrap());
    for a in 0..cols {
        for b in 0..cols {
            let bound = 2.0 * 65.0 * 2f64.powi(-24) * (m1[a * cols + a] * m1[b * cols + b]).sqrt();
            assert!((m1[a * cols + b] - m2[a * cols + b]).abs() <= bound, "H[{a},{b}]: {} vs {}", m1[a * cols + b], m2[a * cols + b]);
        }
    }
}

/// cols 1000 (neither panels nor tiles divide it) over more rows than one packed slab (1024
/// rows at this width), against an f64 sum of products within the documented bound.
#[test]
fn large_cols_match_f64_reference() {
    let (cols, n) = (1000, 1100);
    let x = rand_vec(3, n * cols);
    let h = hessian_of(&x, cols);
    let m = h.matrix_f64().unwrap();
    let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut exact = vec![0.0f64; cols * cols];
    for r in xd.chunks_exact(cols) {
        for (a, &xa) in r.iter().enumerate() {
            for (e, &xb) in exact[a * cols + a..(a + 1) * cols].iter_mut().zip(&r[a..]) {
                *e += xa * xb;
            }
        }
    }
    for a in 0..cols {
        for b in a..cols {
            let e = exact[a * cols + b] / n as f64;
            let bound = 65.0 * 2f64.powi(-24) * (m[a * cols + a] * m[b * cols + b]).sqrt() + 1e-12;
            assert!((m[a * cols + b] - e).abs() <= bound, "H[{a},{b}] = {} vs {e}", m[a * cols + b]);
        }
    }
    // the diagonal read on its own agrees with the matrix
    let d = h.diag_f64();
    assert!((0..cols).all(|j| d[j].to_bits() == m[j * cols + j].to_bits()));
}

/// The same bits on 1, 2 and 3 workers: tiles are whole tasks, each computed in one order.
#[cfg(feature = "native-threads")]
#[test]
fn bits_independent_of_threads() {
    let pool = |t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
    for (cols, calls) in [(1000usize, vec![1100usize, 70]), (333, vec![3000]), (72, vec![5, 700])] {
        let n: usize = calls.iter().sum();
        let x = rand_vec(cols as u64, n * cols);
        let runs: Vec<Vec<u64>> = [1, 2, 3].iter().map(|&t| pool(t).install(|| upper_bits(&hessian_in_calls(&x, cols, &calls)))).collect();
        assert_eq!(runs[0], runs[1], "cols {cols}");
        assert_eq!(runs[0], runs[2], "cols {cols}");
    }
}
