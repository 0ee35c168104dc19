//! Property tests: the core's operations against a naive reference written here with plain
//! loops over multi-indices (f64 sums), on random views (transposed, permuted, sub-range,
//! interleaved, over params of another rank), random dividing block shapes, scope shapes and
//! coupling orders.
//!
//! Each property draws one `u64` from proptest and derives the structure and data from it with a
//! small deterministic generator, so a failure prints a seed that reproduces it exactly. Case
//! counts are set per property (see `cfg`) to keep the file under a minute in debug builds.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sparsekit_wasm::block::{BlockSpec, Norm, SoftOptions};
use sparsekit_wasm::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
use sparsekit_wasm::BlockCoupling;
use sparsekit_wasm::ErrorKind;
use sparsekit_wasm::Param;
use sparsekit_wasm::View;
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};

// ---------------------------------------------------------------------------------------------
// Deterministic generator

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal_ish(&mut self) -> f32 {
        ((self.unit() + self.unit() + self.unit() - 1.5) * 2.0) as f32
    }
    fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i + 1);
            p.swap(i, j);
        }
        p
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

// ---------------------------------------------------------------------------------------------
// Naive reference

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
    idx
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i)
}

/// A random view: its param and `(shape, stride)`.
#[derive(Debug, Clone)]
struct Lay {
    pshape: Vec<usize>,
    shape: Vec<usize>,
    stride: Vec<usize>,
}

impl Lay {
    fn offset(&self, idx: &[usize]) -> usize {
        idx.iter().zip(&self.stride).map(|(i, s)| i * s).sum()
    }
    /// Storage offsets of every view element, row-major.
    fn offsets(&self) -> Vec<usize> {
        (0..numel(&self.shape)).map(|f| self.offset(&unravel(f, &self.shape))).collect()
    }
}

/// A non-aliasing view of `shape` inside a param: the dims are laid out in a random order
/// (transposes, interleavings like fused QKV), with random steps (every other row/column) and
/// padding (sub-ranges), over a param of the same numel and another rank.
fn gen_layout(r: &mut Rng, shape: &[usize]) -> Lay {
    let n = shape.len();
    let order = r.perm(n); // order[j]: the view dim at position j of the storage layout
    let step: Vec<usize> = (0..n).map(|_| if r.below(4) == 0 { 2 } else { 1 }).collect();
    let pad: Vec<usize> = (0..n).map(|_| if r.below(4) == 0 { 1 } else { 0 }).collect();
    let base: Vec<usize> = order.iter().map(|&d| shape[d] * step[d] + pad[d]).collect();
    let mut bstride = vec![1usize; n];
    for j in (0..n.saturating_sub(1)).rev() {
        bstride[j] = bstride[j + 1] * base[j + 1];
    }
    let mut stride = vec![0usize; n];
    for (j, &d) in order.iter().enumerate() {
        stride[d] = bstride[j] * step[d];
    }
    let total = numel(&base);
    let pshape = match r.below(3) {
        0 => base.clone(),
        1 => vec![total],
        _ => {
            // 2-D split at a random point of the base shape
            let k = r.below(n + 1);
            vec![numel(&base[..k]), numel(&base[k..])]
        }
    };
    Lay { pshape, shape: shape.to_vec(), stride }
}

fn gen_shape(r: &mut Rng, max_rank: usize, max_dim: usize) -> Vec<usize> {
    let n = r.range(1, max_rank);
    (0..n).map(|_| r.range(1, max_dim)).collect()
}

fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

/// A random block shape dividing `shape`, in the API's form (may use -1 or be empty), and its
/// normalised form.
fn gen_block(r: &mut Rng, shape: &[usize]) -> (Vec<i64>, Vec<usize>) {
    if r.below(8) == 0 {
        return (vec![], vec![1; shape.len()]);
    }
    let mut api = Vec::new();
    let mut norm = Vec::new();
    for &s in shape {
        let ds = divisors(s);
        let b = ds[r.below(ds.len())];
        if b == s && r.coin() {
            api.push(-1);
        } else {
            api.push(b as i64);
        }
        norm.push(b);
    }
    (api, norm)
}

fn gen_data(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| r.normal_ish()).collect()
}

/// Reference block structure: for each block (row-major over the grid), the view elements
/// (row-major inside the block) as view multi-indices.
struct RefBlocks {
    grid: Vec<usize>,
    /// per block: storage offsets of its elements, row-major inside the block
    elems: Vec<Vec<usize>>,
}

fn ref_blocks(l: &Lay, block: &[usize]) -> RefBlocks {
    let grid: Vec<usize> = l.shape.iter().zip(block).map(|(s, b)| s / b).collect();
    let elems = (0..numel(&grid))
        .map(|g| {
            let gi = unravel(g, &grid);
            (0..numel(block))
                .map(|e| {
                    let ei = unravel(e, block);
                    let idx: Vec<usize> = (0..block.len()).map(|d| gi[d] * block[d] + ei[d]).collect();
                    l.offset(&idx)
                })
                .collect()
        })
        .collect();
    RefBlocks { grid, elems }
}

fn ref_norm(data: &[f32], elems: &[usize], p: Norm) -> f64 {
    match p {
        Norm::L1 => elems.iter().map(|&o| (data[o] as f64).abs()).sum(),
        Norm::L2 => elems.iter().map(|&o| (data[o] as f64).powi(2)).sum::<f64>().sqrt(),
        Norm::Inf => elems.iter().map(|&o| (data[o] as f64).abs()).fold(0.0, f64::max),
    }
}

fn close(got: f32, want: f64, rtol: f64, atol: f64) -> bool {
    ((got as f64) - want).abs() <= atol + rtol * want.abs()
}

/// One random BlockSpec over a random view of a random param.
struct Case {
    lay: Lay,
    param: Param,
    data: Vec<f32>,
    spec: BlockSpec,
    block: Vec<usize>,
    rb: RefBlocks,
}

fn gen_case(r: &mut Rng, max_rank: usize, max_dim: usize) -> Case {
    let shape = gen_shape(r, max_rank, max_dim);
    gen_case_with(r, &shape)
}

fn gen_case_with(r: &mut Rng, shape: &[usize]) -> Case {
    let lay = gen_layout(r, shape);
    let data = gen_data(r, numel(&lay.pshape));
    let param = Param::from_slice(&data, &lay.pshape).unwrap();
    let view = View::new(&param, &to_i64(&lay.shape), &to_i64(&lay.stride)).unwrap();
    let (api, block) = gen_block(r, shape);
    let spec = BlockSpec::new(view, &api, None).unwrap();
    let rb = ref_blocks(&lay, &block);
    Case { lay, param, data, spec, block, rb }
}

fn to_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

fn snapshot(p: &Param) -> Vec<u32> {
    p.data().iter().map(|x| x.to_bits()).collect()
}

// ---------------------------------------------------------------------------------------------
// Runner

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------------
// Properties

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

fn run_prop(name: &str, cases: u32, f: impl Fn(u64) -> Result<(), TestCaseError>) {
    let n = AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(cfg(cases));
    let res = runner.run(&any::<u64>(), |seed| {
        n.fetch_add(1, AtOrd::Relaxed);
        f(seed)
    });
    println!("{name}: {} cases run (incl. rejected by prop_assume)", n.load(AtOrd::Relaxed));
    if let Err(e) = res {
        panic!("{name}: {e}");
    }
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
fn prop_block_view_matches_reference() {
    run_prop("block_view", 1024, check_block_view);
}
#[test]
fn prop_coupling_matches_reference() {
    run_prop("coupling (norms, block_view, get_masks, apply_multiplier)", 1536, check_coupling);
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
fn prop_refusals_write_nothing() {
    run_prop("refusals", 1024, check_refusals);
}
#[test]
fn prop_adam_matches_converged_prox() {
    run_prop("adam prox", 768, check_adam);
}

// ---------------------------------------------------------------------------------------------
// Fixed cases

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
    // hard_threshold by thresholds keeps a NaN norm (as the seed does)
    s_hard_keeps_nan(&p);
}

fn s_hard_keeps_nan(p: &Param) {
    let s = BlockSpec::new(View::from_param(p), &[1, 4], None).unwrap();
    s.hard_threshold(&[1e9; 8], None).unwrap();
    let d = p.data();
    assert!(d[5].is_nan() && d[4] != 0.0);
    assert!(d.iter().enumerate().all(|(i, &x)| (4..8).contains(&i) || x == 0.0));
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
