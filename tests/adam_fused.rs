//! The Newton method's fused one-pass form (2-D specs) against its two-phase form (taken for
//! other ranks): the same blocks as a 2-D view and as a `[1, rows, cols]` view must get the same
//! bits, on data with every kind of block (searched, zeroed, constant conditioner, zero
//! threshold, non-finite and non-positive entries that are bisected), for small and default
//! `maxIter`, `atol` 0, tiny and wide (a global stop below `maxIter`), strided (transposed)
//! views and grids that are not a multiple of 4 blocks.
#![cfg(not(target_arch = "wasm32"))]

use sparsekit_wasm::{BlockSpec, Method, Param, SoftOptions, View};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 40) as f32) / ((1u64 << 24) as f32)
    }
}

/// Weights, conditioners and thresholds for a `rows x cols` param with `bh x bw` blocks; with
/// `odd`, some blocks carry the degenerate cases.
fn data(rows: usize, cols: usize, bh: usize, bw: usize, odd: bool, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut r = Rng(seed);
    let n = rows * cols;
    let mut x: Vec<f32> = (0..n).map(|_| 2.0 * r.next() - 1.0).collect();
    let mut h: Vec<f32> = (0..n).map(|_| 0.5 + r.next()).collect();
    let nb = (rows / bh) * (cols / bw);
    let base = 0.3 * ((bh * bw) as f32 / 3.0).sqrt();
    let mut t: Vec<f32> = (0..nb).map(|_| base * (0.2 + 1.6 * r.next())).collect();
    if odd {
        for (b, tb) in t.iter_mut().enumerate() {
            // Element (0, 0) of block b in the row-major param.
            let (gr, gc) = (b / (cols / bw), b % (cols / bw));
            let e = gr * bh * cols + gc * bw;
            match b % 11 {
                1 => *tb = 0.0,
                2 => *tb = 1e3,
                3 => {
                    for i in 0..bh {
                        for j in 0..bw {
                            h[e + i * cols + j] = 0.75;
                        }
                    }
                }
                4 => x[e] = f32::NAN,
                5 => h[e] = 0.0,
                6 => h[e] = -0.5,
                7 => x[e] = f32::INFINITY,
                8 => *tb = 1e-30,
                _ => {}
            }
        }
    }
    (x, h, t)
}

fn run(x: &[f32], h: &[f32], t: &[f32], shape: &[usize], view: Option<(&[i64], &[i64])>, block: &[i64], opts: SoftOptions) -> Vec<u32> {
    let p = Param::from_slice(x, shape).unwrap();
    let v = match view {
        Some((s, st)) => View::new(&p, s, st).unwrap(),
        None => View::from_param(&p),
    };
    let spec = BlockSpec::new(v, block, None).unwrap();
    spec.soft_threshold(t, Some(h), opts).unwrap();
    let out = p.data().iter().map(|v| v.to_bits()).collect();
    out
}

#[test]
fn fused_equals_two_phase() {
    let mut checked = 0;
    for &(rows, cols, bh, bw) in &[(16, 24, 4, 4), (12, 20, 2, 2), (8, 40, 1, 8), (12, 12, 2, 6), (36, 4, 4, 4), (64, 64, 4, 4)] {
        for odd in [false, true] {
            for &(max_iter, atol) in &[(0, 1e-8), (1, 1e-8), (3, 0.0), (20, 0.0), (20, 1e-8), (20, 1e-3), (20, 10.0), (60, 0.0)] {
                let (x, h, t) = data(rows, cols, bh, bw, odd, 0x1234_5678 + (rows * cols + max_iter) as u64);
                let opts = SoftOptions { max_iter, atol, method: Method::Newton, ..SoftOptions::default() };
                let two_d = run(&x, &h, &t, &[rows, cols], None, &[bh as i64, bw as i64], opts);
                let three_d = run(&x, &h, &t, &[1, rows, cols], None, &[1, bh as i64, bw as i64], opts);
                assert_eq!(two_d, three_d, "{rows}x{cols} blocks {bh}x{bw} odd {odd} maxIter {max_iter} atol {atol}");
                // The transposed view: strided rows (conditioners given view-shaped).
                let ht: Vec<f32> = (0..rows * cols).map(|i| h[(i % rows) * cols + i / rows]).collect();
                let tt: Vec<f32> = t[..(cols / bh) * (rows / bw)].to_vec();
                let (vs, vst) = ([cols as i64, rows as i64], [1i64, cols as i64]);
                let two_t = run(&x, &ht, &tt, &[rows, cols], Some((&vs, &vst)), &[bh as i64, bw as i64], opts);
                let (vs3, vst3) = ([1i64, cols as i64, rows as i64], [0i64, 1, cols as i64]);
                let three_t = run(&x, &ht, &tt, &[rows, cols], Some((&vs3, &vst3)), &[1, bh as i64, bw as i64], opts);
                assert_eq!(two_t, three_t, "transposed {rows}x{cols} blocks {bh}x{bw} odd {odd} maxIter {max_iter} atol {atol}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 96);
}
