//! Property tests of BlockCoupling: specs whose grids are permutations of one aligned grid give
//! the reference's joint norms, `block_view`, masks and multipliers; fixed cases of a 4-D conv
//! weight coupled through a transposed view, and of a joint block too large to count.
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
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeSpec};
use sparsekit_wasm::BlockCoupling;
use sparsekit_wasm::ErrorKind;
use sparsekit_wasm::Param;
use sparsekit_wasm::View;

/// A coupling of 1-3 specs whose grids are permutations of one aligned grid.
struct CCase {
    params: Vec<Param>,
    datas: Vec<Vec<f32>>,
    lays: Vec<Lay>,
    blocks: Vec<Vec<usize>>,
    orders: Vec<Vec<usize>>,
    aligned: Vec<usize>,
    coupling: BlockCoupling,
}

fn gen_coupling(r: &mut Rng) -> CCase {
    let rank = r.range(1, 3);
    let aligned: Vec<usize> = (0..rank).map(|_| r.range(1, 3)).collect();
    let k = r.range(1, 3);
    let mut c = CCase {
        params: vec![],
        datas: vec![],
        lays: vec![],
        blocks: vec![],
        orders: vec![],
        aligned: aligned.clone(),
        coupling: unsafe_placeholder(),
    };
    let mut specs = Vec::new();
    for i in 0..k {
        let order = if i == 0 && r.coin() { (0..rank).collect() } else { r.perm(rank) };
        let mut grid = vec![0; rank];
        for d in 0..rank {
            grid[order[d]] = aligned[d];
        }
        let block: Vec<usize> = (0..rank).map(|_| r.range(1, 3)).collect();
        let shape: Vec<usize> = grid.iter().zip(&block).map(|(g, b)| g * b).collect();
        let lay = gen_layout(r, &shape);
        let data = gen_data(r, numel(&lay.pshape));
        let p = Param::from_slice(&data, &lay.pshape).unwrap();
        let v = View::new(&p, &to_i64(&lay.shape), &to_i64(&lay.stride)).unwrap();
        specs.push(BlockSpec::new(v, &to_i64(&block), None).unwrap());
        c.params.push(p);
        c.datas.push(data);
        c.lays.push(lay);
        c.blocks.push(block);
        c.orders.push(order);
    }
    let orders: Vec<Vec<i64>> = c.orders.iter().map(|o| to_i64(o)).collect();
    c.coupling = BlockCoupling::new(specs, &orders, None).unwrap();
    c
}

fn unsafe_placeholder() -> BlockCoupling {
    let p = Param::from_slice(&[0.0], &[1]).unwrap();
    BlockCoupling::new(vec![BlockSpec::new(View::from_param(&p), &[], None).unwrap()], &[], None).unwrap()
}

impl CCase {
    /// Storage offsets of aligned block `a` in spec `i` (row-major inside the block).
    fn elems(&self, i: usize, a: usize) -> Vec<usize> {
        let ai = unravel(a, &self.aligned);
        let mut gi = vec![0; ai.len()];
        for d in 0..ai.len() {
            gi[self.orders[i][d]] = ai[d];
        }
        let b = &self.blocks[i];
        (0..numel(b))
            .map(|e| {
                let ei = unravel(e, b);
                let idx: Vec<usize> = (0..b.len()).map(|d| gi[d] * b[d] + ei[d]).collect();
                self.lays[i].offset(&idx)
            })
            .collect()
    }
}

fn check_coupling(seed: u64) -> Result<(), TestCaseError> {
    let mut r = Rng(seed);
    let c = gen_coupling(&mut r);
    let na = numel(&c.aligned);
    prop_assert_eq!(c.coupling.grid_shape(), &c.aligned[..]);
    let norms = c.coupling.norms(Norm::L2, None).unwrap();
    let mut want_norms = vec![0.0f64; na];
    for a in 0..na {
        let ss: f64 = (0..c.params.len())
            .flat_map(|i| c.elems(i, a).into_iter().map(move |o| (i, o)))
            .map(|(i, o)| (c.datas[i][o] as f64).powi(2))
            .sum();
        want_norms[a] = ss.sqrt();
        prop_assert!(close(norms[a], want_norms[a], 1e-5, 1e-6));
    }
    // block_view: concatenation of every spec's block in spec order.
    let (bv, shape) = c.coupling.block_view(None).unwrap();
    prop_assert_eq!(&shape[..shape.len() - 1], &c.aligned[..]);
    let npb = c.coupling.numel_per_block();
    for a in 0..na {
        let want: Vec<u32> = (0..c.params.len())
            .flat_map(|i| c.elems(i, a).into_iter().map(move |o| (i, o)))
            .map(|(i, o)| c.datas[i][o].to_bits())
            .collect();
        let got: Vec<u32> = bv[a * npb..(a + 1) * npb].iter().map(|x| x.to_bits()).collect();
        prop_assert_eq!(got, want);
    }
    // get_masks + apply_multiplier
    let keep: Vec<u8> = (0..na).map(|_| r.coin() as u8).collect();
    let masks = c.coupling.get_masks(&keep).unwrap();
    let m = gen_data(&mut r, na);
    c.coupling.apply_multiplier(&m).unwrap();
    #[allow(clippy::needless_range_loop)] // i indexes five parallel vectors
    for i in 0..c.params.len() {
        let mut want = c.datas[i].clone();
        let mut want_mask = vec![9u8; numel(&c.lays[i].shape)];
        let offs = c.lays[i].offsets();
        for a in 0..na {
            for o in c.elems(i, a) {
                want[o] *= m[a];
                want_mask[offs.iter().position(|&x| x == o).unwrap()] = keep[a];
            }
        }
        prop_assert_eq!(snapshot(&c.params[i]), want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        prop_assert_eq!(&masks[i], &want_mask);
    }
    Ok(())
}

#[test]
fn prop_coupling_matches_reference() {
    run_prop("coupling (norms, block_view, get_masks, apply_multiplier)", 1536, check_coupling);
}

#[test]
fn four_d_conv_weight_with_transposing_coupling() {
    // conv (O, I, kh, kw) = (4, 6, 3, 3), output-channel blocks coupled with the next layer's
    // input channels (6?, 4, 1, 1) seen through a transposed view.
    let mut r = Rng(11);
    let w1 = gen_data(&mut r, 4 * 6 * 3 * 3);
    let w2 = gen_data(&mut r, 5 * 4);
    let p1 = Param::from_slice(&w1, &[4, 6, 3, 3]).unwrap();
    let p2 = Param::from_slice(&w2, &[5, 4]).unwrap();
    let s1 = BlockSpec::new(View::from_param(&p1), &[1, -1, -1, -1], None).unwrap(); // grid (4,1,1,1)
    let v2 = View::new(&p2, &[4, 5, 1, 1], &[1, 4, 0, 0]).unwrap(); // (I, O, 1, 1) view
    let s2 = BlockSpec::new(v2, &[1, -1, 1, 1], None).unwrap(); // grid (4,1,1,1)
    let c = BlockCoupling::new(vec![s1, s2], &[vec![0, 1, 2, 3], vec![0, 2, 3, 1]], None).unwrap();
    assert_eq!(c.grid_shape(), &[4, 1, 1, 1]);
    let norms = c.norms(Norm::L2, None).unwrap();
    for o in 0..4 {
        let a: f64 = (0..54).map(|e| (w1[o * 54 + e] as f64).powi(2)).sum();
        let b: f64 = (0..5).map(|j| (w2[j * 4 + o] as f64).powi(2)).sum();
        assert!(close(norms[o], (a + b).sqrt(), 1e-5, 1e-6));
    }
    let scope = ScopeSpec::new(BlockNode::Coupling(c), &[], None).unwrap();
    scope.hard_threshold(HardBy::Nnz(2), None).unwrap();
    let mut order: Vec<usize> = (0..4).collect();
    order.sort_by(|&a, &b| norms[b].partial_cmp(&norms[a]).unwrap());
    let (d1, d2) = (p1.data().clone(), p2.data().clone());
    for (rank, &o) in order.iter().enumerate() {
        let kept = rank < 2;
        assert_eq!((0..54).all(|e| d1[o * 54 + e] == w1[o * 54 + e]), kept);
        assert!((0..5).all(|j| d2[j * 4 + o] == if kept { w2[j * 4 + o] } else { 0.0 }));
    }
}

/// Zero-size dimensions accept any block size, so each spec's block may count up to usize::MAX
/// elements; a coupling whose joint block would count more is refused (found by the fuzzer: the
/// sum over the specs overflowed), as a ScopeCoupling of too many blocks is.
#[test]
fn coupling_of_huge_empty_blocks_is_refused() {
    let p = Param::from_slice(&[], &[0, 4]).unwrap();
    let huge = (usize::MAX / 4) as i64;
    let s = || BlockSpec::new(View::from_param(&p), &[huge, 4], None).unwrap();
    assert_eq!(s().numel_per_block(), (usize::MAX / 4) * 4);
    let err = BlockCoupling::new(vec![s(), s()], &[], None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidBlockShape, "{err:?}");
    // One such spec alone is a valid (empty) coupling.
    let c = BlockCoupling::new(vec![s()], &[], None).unwrap();
    assert_eq!((c.numblk(), c.numel()), (0, 0));
}
