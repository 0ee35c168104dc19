//! Property tests of views and block layouts: `block_view` against the naive reference on random
//! views and block shapes; fixed cases of an odd shape through a transposed view and of aliasing
//! views (reads work, every write is refused).
//!
//! The generator and the reference are in `support/core_gen.rs`.
#![cfg(not(target_arch = "wasm32"))]

#[path = "support/core_gen.rs"]
mod core_gen;
// `Rng` named explicitly: proptest's prelude exports a trait of that name too.
use core_gen::Rng;
use core_gen::*;
use proptest::prelude::*;
use sparsekit_wasm::block::{BlockSpec, Norm, SoftOptions};
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeSpec};
use sparsekit_wasm::BlockCoupling;
use sparsekit_wasm::ErrorKind;
use sparsekit_wasm::Param;
use sparsekit_wasm::View;

fn check_block_view(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_case(&mut r, 4, 4);
    let (reorder, merge) = (r.coin(), r.coin());
    let (got, shape) = c.spec.block_view(None, reorder, merge).unwrap();
    let n = c.block.len();
    let grid = &c.rb.grid;
    let want_shape: Vec<usize> = if merge {
        grid.iter().copied().chain([numel(&c.block)]).collect()
    } else if reorder {
        grid.iter().chain(&c.block).copied().collect()
    } else {
        (0..n).flat_map(|d| [grid[d], c.block[d]]).collect()
    };
    prop_assert_eq!(&shape, &want_shape);
    for (f, &g) in got.iter().enumerate() {
        let oi = unravel(f, &want_shape);
        let (gi, ei): (Vec<usize>, Vec<usize>) = if merge {
            (oi[..n].to_vec(), unravel(oi[n], &c.block))
        } else if reorder {
            (oi[..n].to_vec(), oi[n..].to_vec())
        } else {
            ((0..n).map(|d| oi[2 * d]).collect(), (0..n).map(|d| oi[2 * d + 1]).collect())
        };
        let idx: Vec<usize> = (0..n).map(|d| gi[d] * c.block[d] + ei[d]).collect();
        prop_assert_eq!(g.to_bits(), c.data[c.lay.offset(&idx)].to_bits());
    }
    Ok(())
}

#[test]
fn prop_block_view_matches_reference() {
    run_prop("block_view", 1024, check_block_view);
}

#[test]
fn odd_shape_33x40_blocks_11x8() {
    let mut r = Rng(7);
    let data = gen_data(&mut r, 33 * 40);
    let lay = Lay { pshape: vec![33, 40], shape: vec![33, 40], stride: vec![40, 1] };
    let p = Param::from_slice(&data, &[33, 40]).unwrap();
    let s = BlockSpec::new(View::from_param(&p), &[11, 8], None).unwrap();
    assert_eq!(s.grid_shape(), &[3, 5]);
    let rb = ref_blocks(&lay, &[11, 8]);
    let norms = s.norms(Norm::L2, None).unwrap();
    for (b, el) in rb.elems.iter().enumerate() {
        assert!(close(norms[b], ref_norm(&data, el, Norm::L2), 1e-5, 1e-6));
    }
    // Transposed view of the same param, blocks (8, 11): same blocks, transposed grid.
    let v = View::new(&p, &[40, 33], &[1, 40]).unwrap();
    let st = BlockSpec::new(v, &[8, 11], None).unwrap();
    let nt = st.norms(Norm::L2, None).unwrap();
    for g in 0..3 {
        for h in 0..5 {
            assert!(close(nt[h * 3 + g], norms[g * 5 + h] as f64, 1e-5, 1e-6));
        }
    }
    let scope = ScopeSpec::new(BlockNode::Spec(s), &[-1, -1], None).unwrap();
    scope.hard_threshold(HardBy::Sparsity(0.6), None).unwrap();
    let after = p.data().clone();
    let kept = rb.elems.iter().filter(|el| el.iter().any(|&o| after[o] != 0.0)).count();
    assert_eq!(kept, 6); // floor(0.4 * 15 + 0.5)
}

#[test]
fn aliasing_views_refuse_writes_but_read() {
    let data: Vec<f32> = (0..12).map(|i| i as f32 - 5.5).collect();
    let p = Param::from_slice(&data, &[3, 4]).unwrap();
    // stride 0 (a broadcast row) and overlapping windows (stride 1 over rows of 4)
    for (shape, stride) in [(vec![3i64, 4], vec![0i64, 1]), (vec![4, 4], vec![2, 1]), (vec![2, 3, 2], vec![4, 1, 1])] {
        let v = View::new(&p, &shape, &stride).unwrap();
        assert!(v.aliases(), "{shape:?} {stride:?}");
        let lay = Lay {
            pshape: vec![3, 4],
            shape: shape.iter().map(|&x| x as usize).collect(),
            stride: stride.iter().map(|&x| x as usize).collect(),
        };
        let block: Vec<usize> = vec![1; lay.shape.len()];
        let s = BlockSpec::new(v.clone(), &[], None).unwrap();
        let nb = s.numblk();
        // reads work and match the reference
        let norms = s.norms(Norm::L1, None).unwrap();
        let rb = ref_blocks(&lay, &block);
        for (b, el) in rb.elems.iter().enumerate() {
            assert!(close(norms[b], ref_norm(&data, el, Norm::L1), 1e-6, 0.0));
        }
        let vals = v.values().unwrap();
        assert_eq!(vals, lay.offsets().iter().map(|&o| data[o]).collect::<Vec<_>>());
        // every in-place op is refused, and nothing is written
        let errs = [
            s.apply_multiplier(&vec![2.0; nb]).unwrap_err(),
            s.apply_mask(&vec![0; nb]).unwrap_err(),
            s.hard_threshold(&vec![100.0; nb], None).unwrap_err(),
            s.soft_threshold(&vec![0.1; nb], None, SoftOptions::default()).unwrap_err(),
            s.soft_threshold(&vec![0.1; nb], Some(&[1.0; 12]), SoftOptions::default()).unwrap_err(),
            v.apply_multiplier(&vec![2.0; nb], &[]).unwrap_err(),
            ScopeSpec::new(BlockNode::Spec(s.clone()), &[], None).unwrap().hard_threshold(HardBy::Nnz(0), None).unwrap_err(),
        ];
        for e in errs {
            assert_eq!(e.kind(), ErrorKind::AliasedView, "{e}");
        }
        assert_eq!(*p.data(), data);
    }
    // a coupling with one aliasing spec writes to neither param
    let q = Param::from_slice(&[1.0; 4], &[4]).unwrap();
    let good = BlockSpec::new(View::from_param(&q), &[], None).unwrap();
    let bad = BlockSpec::new(View::new(&p, &[4], &[0]).unwrap(), &[], None).unwrap();
    let c = BlockCoupling::new(vec![good, bad], &[], None).unwrap();
    assert_eq!(c.apply_multiplier(&[0.0; 4]).unwrap_err().kind(), ErrorKind::AliasedView);
    assert_eq!(*q.data(), vec![1.0; 4]);
    assert_eq!(*p.data(), data);
}
