//! The element kernels (block reductions, scaling, conditioned sums, the 2:4 mask, the training core's Adam update, its exp, sigmoid and erf): SIMD128 against the scalar oracle, bit for bit (NaN: any NaN on both sides). The Adam soft threshold's kernels are in `wasm_prox_kernels.rs`, the GEMMs in `wasm_gemm.rs`.
//! Only meaningful on wasm32 with simd128:
//! `RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C target-feature=+simd128" CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
//!   wasm-pack test --headless --chrome --mode no-install -- --test wasm_kernels`
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

#[path = "support/wasm_inputs.rs"]
mod wasm_inputs;

use sparsekit_wasm::test_support::{scalar, simd, Reduction};
use wasm_bindgen_test::*;
use wasm_inputs::{inputs, same};

wasm_bindgen_test_configure!(run_in_browser);

const OPS: [Reduction; 5] = [Reduction::SumAbs, Reduction::SumSq, Reduction::MaxAbs, Reduction::Min, Reduction::Max];

#[wasm_bindgen_test]
fn reduce_chunks_bit_exact() {
    for (seed, nan) in [(1u64, false), (7, true)] {
        let mut x = inputs(4 * 3 * 5 * 7 * 8, seed);
        if !nan {
            x.iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = 1.0);
        }
        for op in OPS {
            for chunk in [1usize, 2, 3, 4, 5, 7, 8, 12, 16, 32, 33] {
                let n = x.len() / chunk * chunk;
                for stride in [1usize, 3] {
                    let nch = n / chunk;
                    let init: Vec<f32> = (0..nch * stride).map(|i| if i % 5 == 0 { op.identity() } else { x[i % x.len()].abs() }).collect();
                    let (mut a, mut b) = (init.clone(), init.clone());
                    scalar::reduce_chunks(op, &x[..n], chunk, &mut a, stride);
                    simd::reduce_chunks(op, &x[..n], chunk, &mut b, stride);
                    for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                        assert!(same(*p, *q), "{op:?} chunk {chunk} stride {stride} acc[{i}]: scalar {p:?} simd {q:?}");
                    }
                }
            }
            for len in 0..40 {
                let (p, q) = (scalar::reduce_chunk(op, &x[..len]), simd::reduce_chunk(op, &x[..len]));
                assert!(same(p, q), "{op:?} reduce_chunk len {len}: {p:?} vs {q:?}");
            }
        }
    }
}

#[wasm_bindgen_test]
fn scale_chunks_bit_exact() {
    let x = inputs(960, 3);
    let f = inputs(2 * 960, 5);
    for chunk in [1usize, 2, 4, 5, 16] {
        for stride in [1usize, 2] {
            let (mut a, mut b) = (x.clone(), x.clone());
            scalar::scale_chunks(&mut a, chunk, &f, stride);
            simd::scale_chunks(&mut b, chunk, &f, stride);
            assert!(a.iter().zip(&b).all(|(p, q)| same(*p, *q)), "scale chunk {chunk} stride {stride}");
        }
    }
}

#[wasm_bindgen_test]
fn cond_sumsq_bit_exact() {
    let x = inputs(203, 11);
    let h: Vec<f32> = inputs(203, 13).iter().map(|v| v.abs() + 0.25).collect();
    let hx: Vec<f32> = h.iter().zip(&x).map(|(h, x)| h * x).collect();
    for len in 0..203 {
        for mu in [0.0f32, 1e-3, 0.37, 5.0] {
            let s = scalar::cond_sumsq(&x[..len], &h[..len], mu);
            assert!(same(s, simd::cond_sumsq(&x[..len], &h[..len], mu)), "cond_sumsq len {len} mu {mu}");
            assert!(same(s, scalar::cond_sumsq_hx(&hx[..len], &h[..len], mu)), "scalar hx len {len}");
            assert!(same(s, simd::cond_sumsq_hx(&hx[..len], &h[..len], mu)), "simd hx len {len}");
        }
    }
}

#[wasm_bindgen_test]
fn nm24_bit_exact() {
    // Random values plus every tie/NaN/zero pattern over a small alphabet.
    let mut x = inputs(4 * 1000, 17);
    // Every NaN encoding ranks lowest (sign set, quiet, smallest and largest payloads).
    let alphabet = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::from_bits(0xffc0_0000),
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffff_ffff),
        f32::MAX,
        f32::from_bits(1),
    ];
    let k = alphabet.len();
    for a in 0..k {
        for b in 0..k {
            for c in 0..k {
                for d in 0..k {
                    x.extend([alphabet[a], alphabet[b], alphabet[c], alphabet[d]]);
                }
            }
        }
    }
    for n in [0usize, 4, 12, 16, 20, x.len()] {
        let (mut a, mut b) = (vec![9u8; n], vec![9u8; n]);
        scalar::nm24_mask(&x[..n], &mut a);
        simd::nm24_mask(&x[..n], &mut b);
        assert_eq!(a, b, "nm24 over {n} values");
        let mut u = vec![std::mem::MaybeUninit::new(7u8); n];
        simd::nm24_mask_uninit(&x[..n], &mut u);
        assert!(u.iter().zip(&a).all(|(u, &a)| unsafe { u.assume_init() } == a), "nm24 (uninit) over {n} values");
        assert!(a.chunks(4).all(|g| g.iter().map(|&v| v as u32).sum::<u32>() == 2));
    }
}

#[wasm_bindgen_test]
fn adam_update_bit_exact() {
    // lengths around the 4-lane step; moments with the awkward values (NaN, infinities, signed
    // zeros) and ordinary ones; a keep-mask holding every third element, and none
    let c = scalar::AdamCoefs { lr: 6e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01, bc1: 0.271, bc2: 0.002_998_5 };
    for (len, seed) in [(0usize, 1u64), (3, 2), (4, 3), (7, 4), (64, 5), (1001, 6)] {
        let (w, g, m) = (inputs(len, seed), inputs(len, seed + 10), inputs(len, seed + 20));
        let v: Vec<f32> = inputs(len, seed + 30).iter().map(|x| x.abs()).collect();
        let keep: Vec<u8> = (0..len).map(|i| (i % 3 != 1) as u8).collect();
        for k in [None, Some(&keep[..])] {
            let (mut w1, mut m1, mut v1) = (w.clone(), m.clone(), v.clone());
            let (mut w2, mut m2, mut v2) = (w.clone(), m.clone(), v.clone());
            scalar::adam_update(&c, &mut w1, &mut m1, &mut v1, &g, k);
            simd::adam_update(&c, &mut w2, &mut m2, &mut v2, &g, k);
            for (name, p, q) in [("w", &w1, &w2), ("m", &m1, &m2), ("v", &v1, &v2)] {
                assert!(p.iter().zip(q).all(|(a, b)| same(*a, *b)), "{name}, len {len}, keep {}", k.is_some());
            }
        }
    }
}

#[wasm_bindgen_test]
fn exp_sigmoid_erf_bit_exact() {
    // lengths around the 4-lane step; the inputs' NaN, infinities and signed zeros, then a sweep
    // over the range where the results pass from 0 through the subnormals to infinity
    let mut sweep: Vec<f32> = (0..4001).map(|i| -110.0 + 0.05 * i as f32).collect();
    sweep.extend([88.72, 88.7228, 88.7229, -87.33, -103.97, 1.0, -1.0, 0.999_999_94, 4.0, f32::MIN_POSITIVE, -f32::MIN_POSITIVE]);
    for x in [inputs(7, 3), inputs(1001, 4), sweep] {
        for len in [0usize, 1, 3, 4, 5, 8, x.len()] {
            let len = len.min(x.len());
            for shift in [0.0f32, 2.5, f32::NEG_INFINITY] {
                let (mut a, mut b) = (x[..len].to_vec(), x[..len].to_vec());
                scalar::exp_in_place(&mut a, shift);
                simd::exp_in_place(&mut b, shift);
                for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                    assert!(same(*p, *q), "exp shift {shift} [{i}] of {}: scalar {p:?} simd {q:?}", x[i]);
                }
            }
            type Op = fn(&mut [f32]);
            let ops: [(&str, Op, Op); 2] =
                [("sigmoid", scalar::sigmoid_in_place, simd::sigmoid_in_place), ("erf", scalar::erf_in_place, simd::erf_in_place)];
            for (name, on_scalar, on_simd) in ops {
                let (mut a, mut b) = (x[..len].to_vec(), x[..len].to_vec());
                on_scalar(&mut a);
                on_simd(&mut b);
                for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                    assert!(same(*p, *q), "{name} [{i}] of {}: scalar {p:?} simd {q:?}", x[i]);
                }
            }
        }
    }
}
