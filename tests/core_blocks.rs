//! Property tests of a BlockSpec's reductions and in-place operations against the naive reference:
//! norms (p = 1, 2, inf), min, max and nnz over weights and `values` in both layouts;
//! `apply_multiplier`, hard and Euclidean soft thresholds, `apply_mask` and `get_masks`; refused
//! calls write nothing.
//!
//! The generator and the reference are in `support/core_gen.rs`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/core_gen.rs"]
mod core_gen;
// `Rng` named explicitly: proptest's prelude exports a trait of that name too.
use core_gen::Rng;
use core_gen::*;
use proptest::prelude::*;
use sparsekit_wasm::block::{Norm, SoftOptions};
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeSpec};
use sparsekit_wasm::ErrorKind;

fn check_reductions(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_case(&mut r, 4, 5);
    prop_assert_eq!(c.spec.grid_shape(), &c.rb.grid[..]);
    prop_assert_eq!(c.spec.shape(), &c.block[..]);
    for p in [Norm::L1, Norm::L2, Norm::Inf] {
        let got = c.spec.norms(p, None).unwrap();
        for (b, el) in c.rb.elems.iter().enumerate() {
            let want = ref_norm(&c.data, el, p);
            prop_assert!(close(got[b], want, 1e-5, 1e-6), "{:?} block {} got {} want {} seed {}", p, b, got[b], want, seed);
        }
    }
    let (mn, mx) = (c.spec.min(None).unwrap(), c.spec.max(None).unwrap());
    for (b, el) in c.rb.elems.iter().enumerate() {
        let want_min = el.iter().map(|&o| c.data[o]).fold(f32::INFINITY, f32::min);
        let want_max = el.iter().map(|&o| c.data[o]).fold(f32::NEG_INFINITY, f32::max);
        prop_assert_eq!(mn[b], want_min);
        prop_assert_eq!(mx[b], want_max);
    }
    // Values in param layout and in view layout give the same reductions as the reference.
    let vals = gen_data(&mut r, numel(&c.lay.pshape));
    let view_shaped: Vec<f32> = c.lay.offsets().iter().map(|&o| vals[o]).collect();
    let got_p = c.spec.norms(Norm::L2, Some(&vals)).unwrap();
    for (b, el) in c.rb.elems.iter().enumerate() {
        prop_assert!(close(got_p[b], ref_norm(&vals, el, Norm::L2), 1e-5, 1e-6));
    }
    if view_shaped.len() != vals.len() {
        // Same values, another walk order: equal up to f32 summation order.
        let got_v = c.spec.norms(Norm::L2, Some(&view_shaped)).unwrap();
        for (b, el) in c.rb.elems.iter().enumerate() {
            prop_assert!(close(got_v[b], ref_norm(&vals, el, Norm::L2), 1e-5, 1e-6));
        }
    }
    // nnz counts view elements only.
    let want_nnz = c.lay.offsets().iter().filter(|&&o| c.data[o].abs() as f64 > 0.3).count();
    prop_assert_eq!(c.spec.nnz(0.3).unwrap(), want_nnz);
    Ok(())
}

fn check_in_place(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_case(&mut r, 4, 5);
    let nb = numel(&c.rb.grid);
    let inside: std::collections::HashSet<usize> = c.lay.offsets().into_iter().collect();
    let outside_untouched = |before: &[f32], after: &[f32]| {
        (0..before.len()).filter(|o| !inside.contains(o)).all(|o| before[o].to_bits() == after[o].to_bits())
    };
    match r.below(4) {
        0 => {
            // apply_multiplier, through the BlockSpec or the View
            let m = gen_data(&mut r, nb);
            if r.coin() {
                c.spec.apply_multiplier(&m).unwrap();
            } else {
                c.spec.view().apply_multiplier(&m, &to_i64(&c.block)).unwrap();
            }
            let mut want = c.data.clone();
            for (b, el) in c.rb.elems.iter().enumerate() {
                for &o in el {
                    want[o] *= m[b];
                }
            }
            prop_assert_eq!(snapshot(&c.param), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        1 => {
            // hard_threshold with thresholds 30% away from each norm
            let norms: Vec<f64> = c.rb.elems.iter().map(|el| ref_norm(&c.data, el, Norm::L2)).collect();
            let prune: Vec<bool> = (0..nb).map(|_| r.coin()).collect();
            // Some kept blocks get exactly their own (f32) norm: equal is kept.
            let own = c.spec.norms(Norm::L2, None).unwrap();
            let t: Vec<f32> = norms
                .iter()
                .zip(&prune)
                .zip(&own)
                .map(|((n, &p), &o)| {
                    if p {
                        (n * 1.3 + 1e-3) as f32
                    } else if r.coin() {
                        o
                    } else {
                        (n * 0.7) as f32
                    }
                })
                .collect();
            c.spec.hard_threshold(&t, None).unwrap();
            let mut want = c.data.clone();
            for (b, el) in c.rb.elems.iter().enumerate() {
                if prune[b] {
                    el.iter().for_each(|&o| want[o] *= 0.0);
                }
            }
            prop_assert_eq!(snapshot(&c.param), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        2 => {
            // Euclidean soft threshold, factors kept away from 0
            let norms: Vec<f64> = c.rb.elems.iter().map(|el| ref_norm(&c.data, el, Norm::L2)).collect();
            let t: Vec<f32> = norms.iter().map(|n| (n * if r.coin() { 0.8 * r.unit() } else { 1.2 + r.unit() }) as f32).collect();
            c.spec.soft_threshold(&t, None, SoftOptions::default()).unwrap();
            let after = c.param.data().clone();
            for (b, el) in c.rb.elems.iter().enumerate() {
                let f = (1.0 - t[b] as f64 / (norms[b] + f32::EPSILON as f64)).max(0.0);
                for &o in el {
                    let want = c.data[o] as f64 * f;
                    prop_assert!(close(after[o], want, 1e-4, 1e-6), "block {} got {} want {} seed {}", b, after[o], want, seed);
                }
            }
            prop_assert!(outside_untouched(&c.data, &after));
        }
        _ => {
            // apply_mask with a random keep-mask, and get_masks agreeing with it
            let keep: Vec<u8> = (0..nb).map(|_| r.coin() as u8).collect();
            let masks = c.spec.get_masks(&keep).unwrap();
            let mut want_mask = vec![0u8; numel(&c.lay.shape)];
            for (f, w) in want_mask.iter_mut().enumerate() {
                let idx = unravel(f, &c.lay.shape);
                let g: Vec<usize> = idx.iter().zip(&c.block).map(|(i, b)| i / b).collect();
                *w = keep[ravel(&g, &c.rb.grid)];
            }
            prop_assert_eq!(&masks, &want_mask);
            c.spec.apply_mask(&keep).unwrap();
            let after = c.param.data().clone();
            for (b, el) in c.rb.elems.iter().enumerate() {
                for &o in el {
                    let want = c.data[o] * if keep[b] != 0 { 1.0 } else { 0.0 };
                    prop_assert_eq!(after[o].to_bits(), want.to_bits());
                }
            }
        }
    }
    prop_assert!(outside_untouched(&c.data, &c.param.data()));
    Ok(())
}

/// Refusals leave every weight unchanged.
fn check_refusals(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_case(&mut r, 4, 5);
    let before = snapshot(&c.param);
    let nb = numel(&c.rb.grid);
    let scope = ScopeSpec::new(BlockNode::Spec(c.spec.clone()), &[], None).unwrap();
    let (want, err) = match r.below(7) {
        0 => (ErrorKind::ShapeMismatch, c.spec.hard_threshold(&vec![1.0; nb + 1], None)),
        1 => (ErrorKind::ShapeMismatch, c.spec.apply_multiplier(&vec![0.0; nb + 1])),
        2 => (ErrorKind::ShapeMismatch, c.spec.apply_mask(&vec![0; nb + 2])),
        3 => {
            (ErrorKind::InvalidEps, c.spec.soft_threshold(&vec![0.1; nb], None, SoftOptions { eps: Some(-1e-3), ..SoftOptions::default() }))
        }
        4 => {
            // conditioners of neither the param's nor the view's length
            let n = numel(&c.lay.pshape).max(numel(&c.lay.shape)) + 1;
            (ErrorKind::ShapeMismatch, c.spec.soft_threshold(&vec![0.1; nb], Some(&vec![1.0; n]), SoftOptions::default()))
        }
        5 => (ErrorKind::InvalidNnz, scope.hard_threshold(HardBy::Nnz(nb + 1), None)),
        _ => {
            let s = [-0.1, 1.5, f64::NAN][r.below(3)];
            (ErrorKind::InvalidSparsity, scope.hard_threshold(HardBy::Sparsity(s), None))
        }
    };
    prop_assert_eq!(err.map_err(|e| e.kind()), Err(want));
    prop_assert_eq!(snapshot(&c.param), before);
    Ok(())
}

#[test]
fn prop_reductions_match_reference() {
    run_prop("reductions (norms p=1/2/inf, min, max, values layouts, nnz)", 1536, check_reductions);
}

#[test]
fn prop_in_place_ops_match_reference() {
    run_prop("in-place (apply_multiplier, hard/soft threshold, apply_mask, get_masks)", 2048, check_in_place);
}

#[test]
fn prop_refusals_write_nothing() {
    run_prop("refusals", 1024, check_refusals);
}
