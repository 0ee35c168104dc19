//! Property tests of scopes: block norms per scope and top-k selection (distinct norms and exact
//! ties) against a reference top-k, for ScopeSpec and the joint top-k of a ScopeCoupling; NaN norms
//! rank lowest.
//!
//! The generator and the reference are in `support/core_gen.rs`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/core_gen.rs"]
mod core_gen;
// `Rng` named explicitly: proptest's prelude exports a trait of that name too.
use core_gen::Rng;
use core_gen::*;
use proptest::prelude::*;
use sparsekit_wasm::block::{BlockSpec, Norm};
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
use sparsekit_wasm::Param;
use sparsekit_wasm::View;

/// Scope reference: for each scope (row-major over the scope grid), its block indices (flat,
/// block grid) in in-scope row-major order.
fn ref_scopes(bgrid: &[usize], sshape: &[usize]) -> Vec<Vec<usize>> {
    let sg: Vec<usize> = bgrid.iter().zip(sshape).map(|(b, s)| b / s).collect();
    (0..numel(&sg))
        .map(|g| {
            let gi = unravel(g, &sg);
            (0..numel(sshape))
                .map(|j| {
                    let ji = unravel(j, sshape);
                    let bi: Vec<usize> = (0..ji.len()).map(|d| gi[d] * sshape[d] + ji[d]).collect();
                    ravel(&bi, bgrid)
                })
                .collect()
        })
        .collect()
}

fn gen_scope_shape(r: &mut Rng, bgrid: &[usize]) -> (Vec<i64>, Vec<usize>) {
    if r.below(6) == 0 {
        return (vec![], bgrid.to_vec());
    }
    let mut api = Vec::new();
    let mut norm = Vec::new();
    for &b in bgrid {
        let ds = divisors(b);
        let s = ds[r.below(ds.len())];
        api.push(if s == b && r.coin() { -1 } else { s as i64 });
        norm.push(s);
    }
    (api, norm)
}

/// Reference top-k of `(score, position)`: descending, ties to the lower position; NaN lowest.
fn ref_topk(scores: &[f64], k: usize) -> Vec<bool> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|&a, &b| {
        let (x, y) = (scores[a], scores[b]);
        match (x.is_nan(), y.is_nan()) {
            (true, true) => a.cmp(&b),
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => y.partial_cmp(&x).unwrap().then(a.cmp(&b)),
        }
    });
    let mut keep = vec![false; scores.len()];
    idx[..k].iter().for_each(|&i| keep[i] = true);
    keep
}

/// True when the k-th and (k+1)-th largest differ by less than `rel` (a near tie that f32
/// rounding may order either way).
fn near_tie(scores: &[f64], k: usize, rel: f64) -> bool {
    if k == 0 || k >= scores.len() {
        return false;
    }
    let mut s: Vec<f64> = scores.to_vec();
    s.sort_by(|a, b| b.partial_cmp(a).unwrap());
    (s[k - 1] - s[k]).abs() <= rel * s[k - 1].abs().max(1e-30)
}

fn check_scope_topk(seed: u64, ties: bool) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let mut c = gen_case(&mut r, 3, 6);
    if ties {
        // Small integers: exact norms with many exact ties.
        let d: Vec<f32> = (0..c.data.len()).map(|_| r.below(3) as f32 - 1.0).collect();
        c.param.data_mut().copy_from_slice(&d);
        c.data = d;
    }
    let bgrid = c.rb.grid.clone();
    let (api, sshape) = gen_scope_shape(&mut r, &bgrid);
    let scope = ScopeSpec::new(BlockNode::Spec(c.spec.clone()), &api, None).unwrap();
    prop_assert_eq!(scope.scope_shape(), &sshape[..]);
    let nps = numel(&sshape);
    let k = r.range(0, nps);
    let norms: Vec<f64> = c.rb.elems.iter().map(|el| ref_norm(&c.data, el, Norm::L2)).collect();
    let scopes = ref_scopes(&bgrid, &sshape);
    // block_norms layout
    let bn = scope.block_norms(None).unwrap();
    for (g, members) in scopes.iter().enumerate() {
        for (j, &b) in members.iter().enumerate() {
            prop_assert!(close(bn[g * nps + j], norms[b], 1e-5, 1e-6));
        }
    }
    let masks = scope.get_masks(k, None, None).unwrap();
    scope.hard_threshold(HardBy::Nnz(k), None).unwrap();
    let after = c.param.data().clone();
    for members in &scopes {
        let s: Vec<f64> = members.iter().map(|&b| norms[b]).collect();
        let want = ref_topk(&s, k);
        let got: Vec<bool> = members
            .iter()
            .map(|&b| {
                let first = c.rb.elems[b][0];
                let idx = c.lay.offsets().iter().position(|&o| o == first).unwrap();
                masks[0][idx] != 0
            })
            .collect();
        prop_assert_eq!(got.iter().filter(|&&x| x).count(), k, "exactly k kept");
        if ties || !near_tie(&s, k, 1e-5) {
            prop_assert_eq!(&got, &want, "seed {} scope norms {:?}", seed, s);
        }
        for (&b, &kept) in members.iter().zip(&got) {
            for &o in &c.rb.elems[b] {
                let want = if kept { c.data[o] } else { c.data[o] * 0.0 };
                prop_assert_eq!(after[o].to_bits(), want.to_bits());
            }
        }
    }
    Ok(())
}

fn check_scope_coupling(seed: u64, ties: bool) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    // Aligned scope grid A; each scope's scope grid is A permuted by its order.
    let rank = r.range(1, 3);
    let aligned: Vec<usize> = (0..rank).map(|_| r.range(1, 3)).collect();
    let nsc = r.range(1, 3);
    let mut scopes = Vec::new();
    let mut info = Vec::new(); // (case, sshape, order, scope members)
    for _ in 0..nsc {
        let order = r.perm(rank);
        let mut sg = vec![0; rank];
        for d in 0..rank {
            sg[order[d]] = aligned[d];
        }
        let sshape: Vec<usize> = (0..rank).map(|_| r.range(1, 3)).collect();
        let block: Vec<usize> = (0..rank).map(|_| r.range(1, 2)).collect();
        let shape: Vec<usize> = (0..rank).map(|d| sg[d] * sshape[d] * block[d]).collect();
        let lay = gen_layout(&mut r, &shape);
        let data: Vec<f32> =
            if ties { (0..numel(&lay.pshape)).map(|_| r.below(3) as f32 - 1.0).collect() } else { gen_data(&mut r, numel(&lay.pshape)) };
        let param = Param::from_slice(&data, &lay.pshape).unwrap();
        let view = View::new(&param, &to_i64(&lay.shape), &to_i64(&lay.stride)).unwrap();
        let spec = BlockSpec::new(view, &to_i64(&block), None).unwrap();
        let rb = ref_blocks(&lay, &block);
        let sc = ScopeSpec::new(BlockNode::Spec(spec.clone()), &to_i64(&sshape), None).unwrap();
        scopes.push(sc);
        let members = ref_scopes(&rb.grid, &sshape);
        info.push((Case { lay, param, data, spec, block, rb }, sshape, order, members));
    }
    let orders: Vec<Vec<i64>> = info.iter().map(|x| to_i64(&x.2)).collect();
    let scc = ScopeCoupling::new(scopes, &orders, None).unwrap();
    let total: usize = info.iter().map(|x| numel(&x.1)).sum();
    prop_assert_eq!(scc.numblk_per_scope(), total);
    let k = r.range(0, total);
    scc.hard_threshold(HardBy::Nnz(k), None, &mut |_, _| {}).unwrap();
    for a in 0..numel(&aligned) {
        let ai = unravel(a, &aligned);
        // concatenation in scope order: (scope i, block b)
        let mut entries = Vec::new();
        for (i, (c, _, order, members)) in info.iter().enumerate() {
            let mut gi = vec![0; rank];
            for d in 0..rank {
                gi[order[d]] = ai[d];
            }
            let sg: Vec<usize> = c.rb.grid.iter().zip(&info[i].1).map(|(b, s)| b / s).collect();
            for &b in &members[ravel(&gi, &sg)] {
                entries.push((i, b, ref_norm(&c.data, &c.rb.elems[b], Norm::L2)));
            }
        }
        let s: Vec<f64> = entries.iter().map(|e| e.2).collect();
        let want = ref_topk(&s, k);
        let check_order = ties || !near_tie(&s, k, 1e-5);
        let mut kept = 0;
        for (&(i, b, _), &w) in entries.iter().zip(&want) {
            let c = &info[i].0;
            let after = c.param.data();
            let is_kept = c.rb.elems[b].iter().all(|&o| after[o].to_bits() == c.data[o].to_bits());
            let is_zeroed = c.rb.elems[b].iter().all(|&o| after[o] == 0.0);
            // an all-zero block is both; count by the reference decision then
            let got_kept = if is_kept && is_zeroed { w } else { is_kept };
            kept += got_kept as usize;
            if check_order {
                prop_assert_eq!(got_kept, w, "seed {} entry scope {} block {}", seed, i, b);
            }
            prop_assert!(is_kept || is_zeroed);
        }
        prop_assert_eq!(kept, k);
    }
    Ok(())
}

#[test]
fn prop_scope_topk() {
    run_prop("scope top-k (distinct norms)", 1536, |s| check_scope_topk(s, false));
}

#[test]
fn prop_scope_topk_ties() {
    run_prop("scope top-k (exact ties)", 1024, |s| check_scope_topk(s, true));
}

#[test]
fn prop_scope_coupling_joint_topk() {
    run_prop("scope coupling joint top-k", 1536, |s| check_scope_coupling(s, false));
}

#[test]
fn prop_scope_coupling_ties() {
    run_prop("scope coupling joint top-k (exact ties)", 1024, |s| check_scope_coupling(s, true));
}

#[test]
fn nan_norms_rank_lowest_in_topk() {
    let mut data: Vec<f32> = (0..32).map(|i| 1.0 + i as f32 * 0.01).collect();
    data[5] = f32::NAN; // block (row 0, cols 4..8) has a NaN norm, which would be the largest
    let p = Param::from_slice(&data, &[4, 8]).unwrap();
    let s = BlockSpec::new(View::from_param(&p), &[1, 4], None).unwrap();
    assert!(s.norms(Norm::L2, None).unwrap()[1].is_nan());
    let scope = ScopeSpec::new(BlockNode::Spec(s.clone()), &[], None).unwrap();
    // keep 7 of 8: the NaN block is the one pruned
    let m = scope.get_masks(7, None, None).unwrap();
    for (i, &k) in m[0].iter().enumerate() {
        assert_eq!(k, (!(i / 8 == 0 && (4..8).contains(&(i % 8)))) as u8, "element {i}");
    }
    // in a scope coupling too
    let q = Param::from_slice(&[0.5; 8], &[1, 8]).unwrap();
    let s2 = BlockSpec::new(View::from_param(&q), &[1, 4], None).unwrap();
    let sc1 = ScopeSpec::new(BlockNode::Spec(s), &[-1, -1], None).unwrap();
    let sc2 = ScopeSpec::new(BlockNode::Spec(s2), &[-1, -1], None).unwrap();
    let scc = ScopeCoupling::new(vec![sc1, sc2], &[], None).unwrap();
    let masks = scc.get_masks(HardBy::Nnz(9), None, &mut |_, _| {}).unwrap();
    assert_eq!(masks[0][4..8], [0, 0, 0, 0]);
    assert!(masks[0].iter().enumerate().all(|(i, &k)| k == 1 || (4..8).contains(&i)));
    assert_eq!(masks[1], vec![1; 8]);
    // hard_threshold by thresholds keeps a NaN norm (docs/API.md, "Hard threshold by value")
    s_hard_keeps_nan(&p);
}

fn s_hard_keeps_nan(p: &Param) {
    let s = BlockSpec::new(View::from_param(p), &[1, 4], None).unwrap();
    s.hard_threshold(&[1e9; 8], None).unwrap();
    let d = p.data();
    assert!(d[5].is_nan() && d[4] != 0.0);
    assert!(d.iter().enumerate().all(|(i, &x)| (4..8).contains(&i) || x == 0.0));
}
