//! The NaN / ±Inf policy (docs/errors.md), pinned natively:
//! - norms, min, max propagate NaN: a block holding a NaN has a NaN norm/min/max; ±Inf gives an
//!   Inf norm (and Inf - Inf never appears: norms only add non-negative terms);
//! - `hard_threshold` by thresholds prunes iff `norm < t`, so a NaN-norm block is kept (the
//!   comparison docs/API.md defines), an Inf-norm block is kept by every finite threshold and by t = +Inf pruned only
//!   if its norm is finite; NaN thresholds are refused (`invalid_value`), ±Inf thresholds allowed;
//! - top-k (nnz / sparsity / scores) ranks NaN below every number, -Inf included (a NaN block is
//!   pruned first), +Inf above every finite number; ties to the lower index; the result does not
//!   depend on the position of the NaN or on the sort algorithm;
//! - the Adam-conditioned soft threshold: NaN in weights or conditioners stays confined to its
//!   block (other blocks get exactly the values they get without it); a NaN threshold is refused.
#![cfg(not(target_arch = "wasm32"))]

use sparsekit_wasm::block::{BlockSpec, Norm, SoftOptions};
use sparsekit_wasm::scope::{kth_best, top_k};
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
use sparsekit_wasm::BlockCoupling;
use sparsekit_wasm::ErrorKind;
use sparsekit_wasm::Param;
use sparsekit_wasm::View;

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

/// A 1 x 8 param cut into four 1 x 2 blocks.
fn spec(data: [f32; 8]) -> (Param, BlockSpec) {
    let p = Param::from_slice(&data, &[1, 8]).unwrap();
    let s = BlockSpec::new(View::from_param(&p), &[1, 2], None).unwrap();
    (p, s)
}

fn bits(p: &Param) -> Vec<u32> {
    p.data().iter().map(|x| x.to_bits()).collect()
}

#[test]
fn norms_min_max_propagate_nan_and_inf() {
    let (_p, s) = spec([NAN, 1.0, 3.0, 4.0, INF, 1.0, -INF, 2.0]);
    for norm in [Norm::L1, Norm::L2, Norm::Inf] {
        let n = s.norms(norm, None).unwrap();
        assert!(n[0].is_nan(), "{norm:?}: a NaN element gives a NaN norm, got {}", n[0]);
        assert_eq!(n[2], INF, "{norm:?}: +Inf element");
        assert_eq!(n[3], INF, "{norm:?}: -Inf element");
    }
    assert_eq!(s.norms(Norm::L2, None).unwrap()[1], 5.0);
    let (mn, mx) = (s.min(None).unwrap(), s.max(None).unwrap());
    assert!(mn[0].is_nan() && mx[0].is_nan(), "min/max propagate NaN");
    assert_eq!((mn[2], mx[2]), (1.0, INF));
    assert_eq!((mn[3], mx[3]), (-INF, 2.0));
    // NaN in `values` (not the weights) propagates the same way.
    let vals = [1.0, 1.0, NAN, 0.0, 0.0, 0.0, 0.0, 0.0];
    let n = s.norms(Norm::L2, Some(&vals)).unwrap();
    assert!(!n[0].is_nan() && n[1].is_nan());
}

#[test]
fn nan_position_inside_block_does_not_matter() {
    for pos in 0..2 {
        let mut d = [1.0; 8];
        d[2 + pos] = NAN;
        let (_p, s) = spec(d);
        for norm in [Norm::L1, Norm::L2, Norm::Inf] {
            assert!(s.norms(norm, None).unwrap()[1].is_nan());
        }
        assert!(s.max(None).unwrap()[1].is_nan() && s.min(None).unwrap()[1].is_nan());
    }
}

#[test]
fn hard_threshold_keeps_nan_norm_blocks_and_refuses_nan_thresholds() {
    let (p, s) = spec([NAN, 1.0, 3.0, 4.0, INF, 1.0, 0.5, 0.5]);
    // +Inf threshold prunes every block with a finite norm, keeps the Inf and NaN ones.
    s.hard_threshold(&[INF, INF, INF, INF], None).unwrap();
    let d = p.data().clone();
    assert!(d[0].is_nan() && d[1] == 1.0, "NaN-norm block kept");
    assert_eq!(&d[2..4], &[0.0, 0.0], "finite norm < +Inf pruned");
    assert_eq!(&d[4..6], &[INF, 1.0], "Inf norm is not < Inf: kept");
    assert_eq!(&d[6..8], &[0.0, 0.0]);
    // -Inf thresholds keep everything.
    let (p, s) = spec([1.0; 8]);
    s.hard_threshold(&[-INF; 4], None).unwrap();
    assert_eq!(&p.data()[..], &[1.0; 8]);
    // A NaN threshold is refused and writes nothing.
    let (p, s) = spec([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let before = bits(&p);
    let e = s.hard_threshold(&[100.0, NAN, 100.0, 100.0], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(bits(&p), before);
    let e = s.soft_threshold(&[0.0, 0.0, NAN, 0.0], None, SoftOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(bits(&p), before);
}

#[test]
fn pruning_a_nan_block_by_mask_keeps_nan_as_masks_multiply() {
    // Masks multiply (docs/API.md, `data *= mask`): 0 * NaN = NaN, 0 * Inf = NaN, 0 * -x = -0.
    let (p, s) = spec([NAN, 1.0, INF, -2.0, 1.0, 1.0, 1.0, 1.0]);
    s.apply_mask(&[0, 0, 1, 1]).unwrap();
    let d = p.data().clone();
    assert!(d[0].is_nan() && d[1] == 0.0);
    assert!(d[2].is_nan());
    assert_eq!(d[3].to_bits(), (-0.0f32).to_bits());
}

#[test]
fn top_k_ranks_nan_lowest_and_inf_highest() {
    let scores = [NAN, -INF, 3.0, INF, NAN, 0.0];
    let mut scratch = Vec::new();
    let expect: [&[usize]; 7] = [&[], &[3], &[2, 3], &[2, 3, 5], &[1, 2, 3, 5], &[0, 1, 2, 3, 5], &[0, 1, 2, 3, 4, 5]];
    for (k, want) in expect.iter().enumerate() {
        let mut keep = vec![0u8; scores.len()];
        top_k(&scores, k, &mut keep, &mut scratch);
        let got: Vec<usize> = (0..scores.len()).filter(|&i| keep[i] == 1).collect();
        assert_eq!(&got, want, "k = {k}");
    }
    assert_eq!(kth_best(&scores, 1, &mut scratch), INF);
    assert_eq!(kth_best(&scores, 4, &mut scratch), -INF);
    assert!(kth_best(&scores, 5, &mut scratch).is_nan());
    assert_eq!(kth_best(&scores, 0, &mut scratch), INF);
}

#[test]
fn top_k_is_independent_of_nan_position_and_payload() {
    // Every rotation of the same multiset keeps the same scores (by value); NaN payloads and
    // signs (-NaN, signalling) rank the same.
    let nans = [f32::NAN, -f32::NAN, f32::from_bits(0x7f80_0001), f32::from_bits(0xffc1_2345)];
    for &nan in &nans {
        let base = [5.0, nan, 1.0, nan, 2.0, -INF, 7.0, nan];
        let mut scratch = Vec::new();
        for rot in 0..base.len() {
            let mut s = base;
            s.rotate_left(rot);
            for k in 0..=s.len() {
                let mut keep = vec![0u8; s.len()];
                top_k(&s, k, &mut keep, &mut scratch);
                let kept_nan = (0..s.len()).filter(|&i| keep[i] == 1 && s[i].is_nan()).count();
                let kept_num = (0..s.len()).filter(|&i| keep[i] == 1 && !s[i].is_nan()).count();
                assert_eq!(kept_num, k.min(5), "rot {rot} k {k}: numbers first");
                assert_eq!(kept_nan, k.saturating_sub(5), "rot {rot} k {k}: NaN last");
                // Among NaNs, the lower position wins.
                let nan_pos: Vec<usize> = (0..s.len()).filter(|&i| s[i].is_nan()).collect();
                let kept: Vec<usize> = nan_pos.iter().copied().filter(|&i| keep[i] == 1).collect();
                assert_eq!(kept, nan_pos[..kept.len()].to_vec());
            }
        }
    }
}

#[test]
fn scope_hard_threshold_by_nnz_prunes_nan_blocks_first() {
    // Block norms: [NaN, 5, Inf, 1]; keep 2 -> the Inf and the 5 block.
    let (p, s) = spec([NAN, 1.0, 3.0, 4.0, INF, 0.0, 1.0, 0.0]);
    let sc = ScopeSpec::new(BlockNode::Spec(s), &[], None).unwrap();
    sc.hard_threshold(HardBy::Nnz(2), None).unwrap();
    let d = p.data().clone();
    assert!(d[0].is_nan(), "pruned by multiplying: 0 * NaN stays NaN");
    assert_eq!(d[1], 0.0);
    assert_eq!(&d[2..6], &[3.0, 4.0, INF, 0.0]);
    assert_eq!(&d[6..8], &[0.0, 0.0]);
    // Keep 3: the NaN block is still the one pruned.
    let (p, s) = spec([NAN, 1.0, 3.0, 4.0, INF, 0.0, 1.0, 0.0]);
    let sc = ScopeSpec::new(BlockNode::Spec(s), &[], None).unwrap();
    let masks = sc.get_masks(3, None, None).unwrap();
    assert_eq!(masks, vec![vec![0, 0, 1, 1, 1, 1, 1, 1]]);
    sc.hard_threshold(HardBy::Sparsity(0.25), None).unwrap();
    assert_eq!(p.data()[1], 0.0);
    assert_eq!(p.data()[6], 1.0);
}

#[test]
fn scope_thresholds_and_scores_with_nan_and_inf() {
    let (p, s) = spec([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let sc = ScopeSpec::new(BlockNode::Spec(s), &[1, 2], None).unwrap();
    let before = bits(&p);
    let e = sc.hard_threshold(HardBy::Thresholds(&[NAN, 1.0]), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    let e = sc.soft_threshold(&[1.0, NAN], None, false, SoftOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert_eq!(bits(&p), before, "refused calls wrote nothing");
    // Block scores with NaN: NaN ranks lowest in kth_largest and get_masks.
    let scores = [NAN, 2.0, -INF, NAN];
    assert_eq!(sc.kth_largest(&scores, 1).unwrap(), vec![2.0, -INF]);
    let k2 = sc.kth_largest(&scores, 2).unwrap();
    assert!(k2[0].is_nan() && k2[1].is_nan());
    assert_eq!(sc.get_masks(1, None, Some(&scores)).unwrap(), vec![vec![0, 0, 1, 1, 1, 1, 0, 0]]);
    // +Inf thresholds prune every finite block, -Inf keep all.
    sc.hard_threshold(HardBy::Thresholds(&[-INF, INF]), None).unwrap();
    assert_eq!(&p.data()[..], &[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn scope_coupling_joint_topk_with_nan() {
    // Two 4-element params, one-element blocks, one joint scope.
    let fresh = || {
        let p = Param::from_slice(&[NAN, 1.0, 2.0, 3.0], &[4]).unwrap();
        let q = Param::from_slice(&[0.5, NAN, -INF, 4.0], &[4]).unwrap();
        let scope =
            |x: &Param| ScopeSpec::new(BlockNode::Spec(BlockSpec::new(View::from_param(x), &[1], None).unwrap()), &[], None).unwrap();
        let c = ScopeCoupling::new(vec![scope(&p), scope(&q)], &[], None).unwrap();
        (p, q, c)
    };
    let (p, q, c) = fresh();
    // Scores (|x|): [NaN, 1, 2, 3 | 0.5, NaN, Inf, 4]: keep 6 -> both NaN pruned.
    c.hard_threshold(HardBy::Nnz(6), None, &mut |_, _| {}).unwrap();
    let (pd, qd) = (p.data().clone(), q.data().clone());
    assert!(pd[0].is_nan() && qd[1].is_nan(), "pruned NaN stays NaN (0 * NaN)");
    assert_eq!(&pd[1..], &[1.0, 2.0, 3.0]);
    assert_eq!((qd[0], qd[2], qd[3]), (0.5, -INF, 4.0));
    // Keep 4: Inf, 4, 3, 2.
    let (p2, q2, c) = fresh();
    c.hard_threshold(HardBy::Nnz(4), None, &mut |_, _| {}).unwrap();
    assert_eq!(&p2.data()[1..], &[0.0, 2.0, 3.0]);
    assert_eq!((q2.data()[0], q2.data()[2], q2.data()[3]), (0.0, -INF, 4.0));
}

#[test]
fn coupling_norms_propagate_nan_across_specs() {
    let p = Param::from_slice(&[1.0, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let q = Param::from_slice(&[NAN, 0.0, 0.0, 0.0], &[2, 2]).unwrap();
    let a = BlockSpec::new(View::from_param(&p), &[1, -1], None).unwrap();
    let b = BlockSpec::new(View::from_param(&q), &[1, -1], None).unwrap();
    let c = BlockCoupling::new(vec![a, b], &[], None).unwrap();
    let n = c.norms(Norm::L2, None).unwrap();
    assert!(n[0].is_nan());
    assert_eq!(n[1], 5.0);
    // Hard threshold: the NaN joint block is kept (NaN < t is false), the other pruned.
    c.hard_threshold(&[10.0, 10.0], None).unwrap();
    assert_eq!(&p.data()[..], &[1.0, 2.0, 0.0, 0.0]);
}

/// Adam-conditioned soft threshold: results of the blocks without NaN/Inf are exactly those of
/// the same call where the poisoned block is replaced by finite data.
#[test]
fn adam_step_confines_nan_and_inf_to_their_block() {
    let clean = [0.9f32, -1.2, 0.3, 0.8, -0.5, 2.0, 1.5, -0.7];
    let h = [1.0f32, 2.0, 0.5, 1.5, 3.0, 0.25, 1.0, 1.0];
    let t = [0.4f32, 0.4, 0.4, 0.4];
    let run = |w: [f32; 8], hh: [f32; 8]| {
        let (p, s) = spec(w);
        s.soft_threshold(&t, Some(&hh), SoftOptions::default()).unwrap();
        let d = p.data().clone();
        d
    };
    let want = run(clean, h);
    for (poison_w, poison_h) in
        [(Some(NAN), None), (Some(INF), None), (Some(-INF), None), (None, Some(NAN)), (None, Some(INF)), (None, Some(0.0))]
    {
        let (mut w, mut hh) = (clean, h);
        if let Some(x) = poison_w {
            w[2] = x;
        }
        if let Some(x) = poison_h {
            hh[3] = x;
        }
        let got = run(w, hh);
        for i in (0..8).filter(|i| i / 2 != 1) {
            assert_eq!(got[i].to_bits(), want[i].to_bits(), "{poison_w:?}/{poison_h:?}: element {i} of a clean block changed");
        }
    }
    // NaN thresholds are refused before any write; NaN atol and negative/NaN eps too.
    let (p, s) = spec(clean);
    let before = bits(&p);
    assert_eq!(s.soft_threshold(&[0.4, NAN, 0.4, 0.4], Some(&h), SoftOptions::default()).unwrap_err().kind(), ErrorKind::InvalidValue);
    let o = SoftOptions { atol: NAN, ..SoftOptions::default() };
    assert_eq!(s.soft_threshold(&t, Some(&h), o).unwrap_err().kind(), ErrorKind::InvalidValue);
    for eps in [-1.0, NAN] {
        let o = SoftOptions { eps: Some(eps), ..SoftOptions::default() };
        assert_eq!(s.soft_threshold(&t, Some(&h), o).unwrap_err().kind(), ErrorKind::InvalidEps);
    }
    assert_eq!(bits(&p), before);
}

#[test]
fn euclidean_soft_threshold_with_nan_and_inf() {
    // Factor max(0, 1 - t / (norm + eps)): NaN norm -> NaN factor (NaN block stays NaN),
    // Inf norm -> factor 1 (kept as is), +Inf threshold -> factor 0 for a finite norm.
    let (p, s) = spec([NAN, 1.0, INF, 1.0, 3.0, 4.0, 3.0, 4.0]);
    s.soft_threshold(&[1.0, 1.0, 1.0, INF], None, SoftOptions::default()).unwrap();
    let d = p.data().clone();
    assert!(d[0].is_nan() && d[1].is_nan(), "NaN-norm block becomes NaN");
    assert_eq!((d[2], d[3]), (INF, 1.0));
    assert!((d[4] - 3.0 * 0.8).abs() < 1e-6 && (d[5] - 4.0 * 0.8).abs() < 1e-6);
    assert_eq!((d[6], d[7]), (0.0, 0.0));
}

/// Where the formulas of docs/API.md divide 0 by 0 (a zero threshold with a zero conditioner, or a zero block with
/// `eps = 0`), the result is defined: a zero threshold is the identity, with or without
/// conditioners, and nothing becomes NaN.
#[test]
fn zero_threshold_is_the_identity_where_the_formula_divides_zero_by_zero() {
    let x = [1.0, -2.0, 3.0, 0.0, 0.0, 0.0, 5.0, -6.0];
    // Adam-conditioned, blocks of 2: zero conditioner entries, an all-zero conditioner block, a
    // zero weight block.
    let h = [0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 0.5, 0.25];
    let (p, s) = spec(x);
    s.soft_threshold(&[0.0; 4], Some(&h), SoftOptions::default()).unwrap();
    assert_eq!(bits(&p), x.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // Euclid with eps = 0 on a zero block: the formula gives 1 - 0 / (0 + 0).
    let (p, s) = spec(x);
    s.soft_threshold(&[0.0; 4], None, SoftOptions { eps: Some(0.0), ..Default::default() }).unwrap();
    assert_eq!(bits(&p), x.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // One-element blocks: the t / H shortcut with t = 0 and H = 0.
    let p = Param::from_slice(&x, &[1, 8]).unwrap();
    let s1 = BlockSpec::new(View::from_param(&p), &[1, 1], None).unwrap();
    s1.soft_threshold(&[0.0; 8], Some(&h), SoftOptions::default()).unwrap();
    assert_eq!(bits(&p), x.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    // ... while a positive threshold on a zero-conditioner element removes it (t / 0 = +Inf).
    s1.soft_threshold(&[0.5; 8], Some(&h), SoftOptions::default()).unwrap();
    let out = p.data().clone();
    assert!(out.iter().all(|v| !v.is_nan()), "{out:?}");
    assert_eq!(out[0], 0.0);
    // A coupling with zero conditioners and a zero threshold: unchanged too.
    let a = Param::from_slice(&[1.0, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let b = Param::from_slice(&[5.0, 6.0], &[1, 2]).unwrap();
    let sa = BlockSpec::new(View::from_param(&a), &[1, 2], None).unwrap();
    let sb = BlockSpec::new(View::from_param(&b), &[1, 1], None).unwrap();
    let c = BlockCoupling::new(vec![sa, sb], &[vec![0, 1], vec![1, 0]], None).unwrap();
    let (ha, hb) = ([0.0f32; 4], [0.0f32; 2]);
    c.soft_threshold(&[0.0, 0.0], Some(&[&ha, &hb]), SoftOptions::default()).unwrap();
    assert_eq!(*a.data(), vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(*b.data(), vec![5.0, 6.0]);
}
