//! The Adam-conditioned soft threshold on a 4-worker rayon pool against a 1-worker pool, bit for
//! bit, with both methods: chunks of blocks go to different workers, and a block's result must
//! not depend on which (the Newton search is per block; the bisection's global stop and Newton's
//! reading of the bisection's iterate both use the one global step count).
//! `cargo test --release --features native-threads --test adam_threads`
#![cfg(all(feature = "native-threads", not(target_arch = "wasm32")))]

use sparsekit_wasm::{BlockSpec, Method, Param, SoftOptions, View};

fn soft(x: &[f32], h: &[f32], shape: [usize; 2], block: [i64; 2], t: &[f32], opts: SoftOptions) -> Vec<u32> {
    let p = Param::from_slice(x, &shape).unwrap();
    let s = BlockSpec::new(View::from_param(&p), &block, None).unwrap();
    s.soft_threshold(t, Some(h), opts).unwrap();
    let bits = p.data().iter().map(|v| v.to_bits()).collect();
    bits
}

#[test]
fn threaded_results_equal_sequential_ones() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    };
    let (one, four) =
        (rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap(), rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap());
    for (shape, block) in [([512usize, 512usize], [4i64, 4i64]), ([384, 510], [3, 5]), ([256, 1024], [1, 16])] {
        let n = shape[0] * shape[1];
        let mut x: Vec<f32> = (0..n).map(|_| 2.0 * rnd() - 1.0).collect();
        let h: Vec<f32> = (0..n).map(|_| 0.05 + rnd()).collect();
        x[77] = f32::NAN;
        let bn = (block[0] * block[1]) as f32;
        let nb = n / (block[0] * block[1]) as usize;
        let t: Vec<f32> = (0..nb).map(|_| rnd() * bn.sqrt() * 0.6).collect();
        for method in [Method::Newton, Method::Bisection] {
            for (max_iter, atol) in [(20, 0.0), (20, 1e-8), (9, 1e-3)] {
                let opts = SoftOptions { max_iter, atol, method, ..SoftOptions::default() };
                let a = one.install(|| soft(&x, &h, shape, block, &t, opts));
                let b = four.install(|| soft(&x, &h, shape, block, &t, opts));
                let diff = a.iter().zip(&b).filter(|(p, q)| p != q).count();
                assert_eq!(diff, 0, "{shape:?} {block:?} {method:?} max_iter {max_iter} atol {atol}: {diff} elements differ");
            }
        }
    }
}
