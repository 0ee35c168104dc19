//! The f32 GEMM's split over workers (src/kernels/gemm.rs `gemm_acc`) against the scalar oracle,
//! bit for bit, on 1, 2 and 3 workers: products with many rows (row bands sharing each packed
//! panel of `B`) and with few (the column split: a batch of short token rows), a transposed `A`,
//! chunked sums, column counts off the 8-column strips, and a `C` wider than the product.
//! `cargo test --release --features native-threads --test gemm_threads`
#![cfg(all(feature = "native-threads", not(target_arch = "wasm32")))]

use sparsekit_wasm::test_support::gemm::{gemm_acc, gemm_acc_scalar, Gemm};

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

#[test]
fn split_products_have_the_oracles_bits() {
    // (m, n, k): few rows (column tasks) and many (row bands), deep and shallow
    let shapes = [(100, 192, 384), (100, 768, 384), (101, 387, 768), (8, 200, 64), (20, 16, 300), (300, 40, 96), (384, 192, 100)];
    for (workers, (si, &(m, n, k))) in [1usize, 2, 3].into_iter().flat_map(|w| shapes.iter().enumerate().map(move |s| (w, s))) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(workers).build().unwrap();
        for transposed_a in [false, true] {
            for kc in [0, 128] {
                let (a_rs, a_ks) = if transposed_a { (1, m) } else { (k, 1) };
                let seed = (si * 8 + transposed_a as usize * 2 + (kc > 0) as usize) as u64;
                let (a, b) = (data(m * k, seed), data(k * (n + 5), seed + 100));
                let ldc = n + 3;
                let c0 = data(m * ldc, seed + 200);
                let g = Gemm { m, n, k, a_rs, a_ks, ldb: n + 5, ldc, upper: false, kc };
                let (mut want, mut got) = (c0.clone(), c0);
                gemm_acc_scalar(&g, &a, &b, &mut want);
                pool.install(|| gemm_acc(&g, &a, &b, &mut got));
                let same = want.iter().zip(&got).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{workers} workers, {m}x{n}x{k}, transposed A {transposed_a}, kc {kc}");
            }
        }
    }
}
