//! The benchmarked operations, shared by the native bench (`src/bin/native_bench.rs`) and the
//! bench-only wasm module (`bench/wasm`), so both measure exactly the same core calls.
//!
//! A [`Case`] owns one weight (`rows x cols` f32, deterministic pseudo-random data), a copy to
//! restore it between repetitions of in-place operations, and Adam-like conditioners.

#![allow(dead_code)]

use sparsekit_wasm::scope::NodeValues;
use sparsekit_wasm::{nm, BlockNode, BlockSpec, HardBy, Method, Norm, Param, ScopeSpec, SoftOptions, View};

/// `soft` = the Adam-conditioned soft threshold with the default method (Newton), `soft-bisection`
/// the same call with `method: 'bisection'` (the seed's loop).
pub const OPS: [&str; 5] = ["norms", "hard", "soft", "soft-bisection", "nm24"];
pub const BLOCKS: [&str; 5] = ["1x16", "4x4", "32x32", "128x1", "T4x4"];

pub struct Case {
    pub rows: usize,
    pub cols: usize,
    pub param: Param,
    pub backup: Vec<f32>,
    pub cond: Vec<f32>,
}

fn xorshift(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    ((*state >> 40) as f32) / ((1u64 << 24) as f32)
}

impl Case {
    pub fn new(rows: usize, cols: usize) -> Case {
        let n = rows * cols;
        let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ (n as u64);
        let w: Vec<f32> = (0..n).map(|_| 2.0 * xorshift(&mut s) - 1.0).collect();
        let cond: Vec<f32> = (0..n).map(|_| 0.5 + xorshift(&mut s)).collect();
        let param = Param::from_slice(&w, &[rows, cols]).expect("alloc");
        Case { rows, cols, param, backup: w, cond }
    }

    pub fn restore(&self) {
        self.param.data_mut().copy_from_slice(&self.backup);
    }

    /// The block spec of a block-shape name; `T..` is the transposed view `(cols, rows)`.
    pub fn spec(&self, block: &str) -> BlockSpec {
        let (view, b) = match block.strip_prefix('T') {
            Some(b) => (View::new(&self.param, &[self.cols as i64, self.rows as i64], &[1, self.cols as i64]).expect("view"), b),
            None => (View::from_param(&self.param), block),
        };
        let (bh, bw) = b.split_once('x').expect("block name");
        BlockSpec::new(view, &[bh.parse().unwrap(), bw.parse().unwrap()], None).expect("block spec")
    }

    /// True when the op mutates the weights (restore before the next repetition).
    pub fn mutates(op: &str) -> bool {
        matches!(op, "hard" | "soft" | "soft-bisection")
    }

    /// Runs one operation once; returns a checksum of its result (so nothing is optimized out).
    pub fn run(&self, op: &str, block: &str) -> f64 {
        match op {
            "norms" => {
                let n = self.spec(block).norms(Norm::L2, None).expect("norms");
                // A sample, like the plain-JS baseline's result: the checksum is not the op.
                n.iter().step_by(4097).map(|&x| x as f64).sum()
            }
            "hard" => {
                // hardThreshold by sparsity 0.5 in 1 x N scopes (one row of the block grid each).
                let scope = ScopeSpec::new(BlockNode::Spec(self.spec(block)), &[1, -1], None).expect("scope");
                let none: NodeValues = None;
                scope.hard_threshold(HardBy::Sparsity(0.5), none).expect("hard");
                self.param.data()[0] as f64
            }
            "soft" | "soft-bisection" => {
                // Adam-conditioned soft threshold, 20 iterations with atol = 0 (the bisection runs
                // all 20; Newton returns the same iterate after its few evaluations).
                let spec = self.spec(block);
                let t = vec![0.3 * (spec.numel_per_block() as f32 / 3.0).sqrt(); spec.numblk()];
                let method = if op == "soft" { Method::Newton } else { Method::Bisection };
                let opts = SoftOptions { max_iter: 20, atol: 0.0, method, ..SoftOptions::default() };
                spec.soft_threshold(&t, Some(&self.cond), opts).expect("soft");
                self.param.data()[0] as f64
            }
            "nm24" => {
                let m = nm::m4n2_1d(&self.param.data(), self.rows, self.cols).expect("nm24");
                m.iter().step_by(4097).map(|&x| x as f64).sum()
            }
            _ => panic!("unknown op {op}"),
        }
    }

    /// A bit-level digest of the weights and of an op's outputs (for the threads-vs-sequential check).
    pub fn digest(&self, op: &str, block: &str) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |x: u32| {
            h ^= x as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        };
        match op {
            "norms" => self.spec(block).norms(Norm::L2, None).unwrap().iter().for_each(|x| eat(x.to_bits())),
            "nm24" => nm::m4n2_1d(&self.param.data(), self.rows, self.cols).unwrap().iter().for_each(|&x| eat(x as u32)),
            _ => {
                self.run(op, block);
                self.param.data().iter().for_each(|x| eat(x.to_bits()));
                self.restore();
            }
        }
        h
    }
}

/// Sum of `a` with 16 independent accumulators (a memory-read bandwidth probe; the compiler
/// vectorizes it).
pub fn sum_multi(a: &[f32]) -> f32 {
    let mut acc = [0.0f32; 16];
    for c in a.chunks_exact(16) {
        for i in 0..16 {
            acc[i] += c[i];
        }
    }
    acc.iter().sum()
}
