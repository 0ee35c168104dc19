//! Property test of the Adam-conditioned soft threshold against an f64 bisection run to
//! convergence, on random views and block shapes.
//!
//! The generator and the reference are in `support/core_gen.rs`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/core_gen.rs"]
mod core_gen;
// `Rng` named explicitly: proptest's prelude exports a trait of that name too.
use core_gen::Rng;
use core_gen::*;
use proptest::prelude::*;
use sparsekit_wasm::block::SoftOptions;

/// Adam-conditioned step against an f64 bisection run to convergence.
fn check_adam(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_case(&mut r, 3, 5);
    prop_assume!(numel(&c.block) > 1);
    let h: Vec<f32> = (0..c.data.len()).map(|_| (0.2 + 1.8 * r.unit()) as f32).collect();
    let nb = numel(&c.rb.grid);
    let mut t = vec![0.0f32; nb];
    for (b, el) in c.rb.elems.iter().enumerate() {
        let hv: f64 = el.iter().map(|&o| (h[o] as f64 * c.data[o] as f64).powi(2)).sum::<f64>().sqrt();
        // 1% away from the survival boundary ||H v|| = t
        let u = if r.coin() { 0.05 + 0.94 * r.unit() } else { 1.01 + r.unit() };
        t[b] = (hv * u) as f32;
    }
    c.spec.soft_threshold(&t, Some(&h), SoftOptions { max_iter: 60, atol: 0.0, ..SoftOptions::default() }).unwrap();
    let after = c.param.data().clone();
    for (b, el) in c.rb.elems.iter().enumerate() {
        let hv: f64 = el.iter().map(|&o| (h[o] as f64 * c.data[o] as f64).powi(2)).sum::<f64>().sqrt();
        let tb = t[b] as f64;
        if hv <= tb {
            for &o in el {
                prop_assert_eq!(after[o], 0.0);
            }
            continue;
        }
        let zeta = |mu: f64| mu * el.iter().map(|&o| (h[o] as f64 * c.data[o] as f64 / (h[o] as f64 + mu)).powi(2)).sum::<f64>().sqrt();
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        while zeta(hi) < tb {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if zeta(mid) < tb {
                lo = mid
            } else {
                hi = mid
            }
        }
        let mu = 0.5 * (lo + hi);
        for &o in el {
            let want = h[o] as f64 * c.data[o] as f64 / (h[o] as f64 + mu);
            prop_assert!(close(after[o], want, 1e-3, 1e-5), "seed {} block {} got {} want {}", seed, b, after[o], want);
        }
    }
    Ok(())
}

#[test]
fn prop_adam_matches_converged_prox() {
    run_prop("adam prox", 768, check_adam);
}
