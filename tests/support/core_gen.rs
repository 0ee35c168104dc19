//! The generator and the naive reference shared by the core's property tests (`tests/core_*.rs`).
//!
//! Each property draws one `u64` from proptest and derives the structure and data from it with
//! the small deterministic generator here ([`Rng`]), so a failure prints a seed that reproduces it
//! exactly. The reference is written with plain loops over multi-indices (f64 sums), on random
//! views (transposed, permuted, sub-range, interleaved, over params of another rank) and random
//! dividing block shapes. Case counts are set per property ([`run_prop`]) to keep each file
//! under a minute in debug builds.
#![allow(dead_code)]

use proptest::prelude::*;
use sparsekit_wasm::block::{BlockSpec, Norm};
use sparsekit_wasm::Param;
use sparsekit_wasm::View;
use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn normal_ish(&mut self) -> f32 {
        ((self.unit() + self.unit() + self.unit() - 1.5) * 2.0) as f32
    }
    pub fn perm(&mut self, n: usize) -> Vec<usize> {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i + 1);
            p.swap(i, j);
        }
        p
    }
    pub fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
    idx
}

pub fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &s)| acc * s + i)
}

/// A random view: its param and `(shape, stride)`.
#[derive(Debug, Clone)]
pub struct Lay {
    pub pshape: Vec<usize>,
    pub shape: Vec<usize>,
    pub stride: Vec<usize>,
}

impl Lay {
    pub fn offset(&self, idx: &[usize]) -> usize {
        idx.iter().zip(&self.stride).map(|(i, s)| i * s).sum()
    }
    /// Storage offsets of every view element, row-major.
    pub fn offsets(&self) -> Vec<usize> {
        (0..numel(&self.shape)).map(|f| self.offset(&unravel(f, &self.shape))).collect()
    }
}

/// A non-aliasing view of `shape` inside a param: the dims are laid out in a random order
/// (transposes, interleavings like fused QKV), with random steps (every other row/column) and
/// padding (sub-ranges), over a param of the same numel and another rank.
pub fn gen_layout(r: &mut Rng, shape: &[usize]) -> Lay {
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

pub fn gen_shape(r: &mut Rng, max_rank: usize, max_dim: usize) -> Vec<usize> {
    let n = r.range(1, max_rank);
    (0..n).map(|_| r.range(1, max_dim)).collect()
}

pub fn divisors(n: usize) -> Vec<usize> {
    (1..=n).filter(|d| n.is_multiple_of(*d)).collect()
}

/// A random block shape dividing `shape`, in the API's form (may use -1 or be empty), and its
/// normalised form.
pub fn gen_block(r: &mut Rng, shape: &[usize]) -> (Vec<i64>, Vec<usize>) {
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

pub fn gen_data(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| r.normal_ish()).collect()
}

/// Reference block structure: for each block (row-major over the grid), the view elements
/// (row-major inside the block) as view multi-indices.
pub struct RefBlocks {
    pub grid: Vec<usize>,
    /// per block: storage offsets of its elements, row-major inside the block
    pub elems: Vec<Vec<usize>>,
}

pub fn ref_blocks(l: &Lay, block: &[usize]) -> RefBlocks {
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

pub fn ref_norm(data: &[f32], elems: &[usize], p: Norm) -> f64 {
    match p {
        Norm::L1 => elems.iter().map(|&o| (data[o] as f64).abs()).sum(),
        Norm::L2 => elems.iter().map(|&o| (data[o] as f64).powi(2)).sum::<f64>().sqrt(),
        Norm::Inf => elems.iter().map(|&o| (data[o] as f64).abs()).fold(0.0, f64::max),
    }
}

pub fn close(got: f32, want: f64, rtol: f64, atol: f64) -> bool {
    ((got as f64) - want).abs() <= atol + rtol * want.abs()
}

/// One random BlockSpec over a random view of a random param.
pub struct Case {
    pub lay: Lay,
    pub param: Param,
    pub data: Vec<f32>,
    pub spec: BlockSpec,
    pub block: Vec<usize>,
    pub rb: RefBlocks,
}

pub fn gen_case(r: &mut Rng, max_rank: usize, max_dim: usize) -> Case {
    let shape = gen_shape(r, max_rank, max_dim);
    gen_case_with(r, &shape)
}

pub fn gen_case_with(r: &mut Rng, shape: &[usize]) -> Case {
    let lay = gen_layout(r, shape);
    let data = gen_data(r, numel(&lay.pshape));
    let param = Param::from_slice(&data, &lay.pshape).unwrap();
    let view = View::new(&param, &to_i64(&lay.shape), &to_i64(&lay.stride)).unwrap();
    let (api, block) = gen_block(r, shape);
    let spec = BlockSpec::new(view, &api, None).unwrap();
    let rb = ref_blocks(&lay, &block);
    Case { lay, param, data, spec, block, rb }
}

pub fn to_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

pub fn snapshot(p: &Param) -> Vec<u32> {
    p.data().iter().map(|x| x.to_bits()).collect()
}

pub fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

pub fn run_prop(name: &str, cases: u32, f: impl Fn(u64) -> Result<(), TestCaseError>) {
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
