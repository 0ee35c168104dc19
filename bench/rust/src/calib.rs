//! The benchmarked calibration operations (shared by the bench-only wasm module): Hessian
//! accumulation over `nvec` calibration vectors, SparseGPT (sparsity 0.5, block 128,
//! percDamp 0.01) on a `rows x cols` weight, the shapes of `bench/calib/calib_ref.py`, and GPTQ
//! (4 bits, groups of 128, the same solver) on the same weight.

#![allow(dead_code)]

use sparsekit_wasm::calib::{gptq, sparse_gpt, GptqOptions, Hessian, SparseGptOptions};
use sparsekit_wasm::{Param, View};

pub struct CalibCase {
    pub rows: usize,
    pub cols: usize,
    pub nvec: usize,
    pub x: Vec<f32>,
    pub param: Param,
    pub backup: Vec<f32>,
    pub h: Hessian,
}

fn xorshift(state: &mut u64) -> f32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    ((*state >> 40) as f32) / ((1u64 << 24) as f32) * 2.0 - 1.0
}

impl CalibCase {
    /// Weights uniform in [-1, 1); inputs correlated (8 latent factors mixed, plus noise) so that
    /// H is far from diagonal, as calib_ref.py makes them.
    pub fn new(rows: usize, cols: usize, nvec: usize) -> CalibCase {
        let mut s = 0x2545_f491_4f6c_dd1du64 ^ ((rows * 31 + cols) as u64);
        let w: Vec<f32> = (0..rows * cols).map(|_| xorshift(&mut s)).collect();
        let k = 8;
        let mix: Vec<f32> = (0..k * cols).map(|_| xorshift(&mut s)).collect();
        let mut x = vec![0.0f32; nvec * cols];
        for v in 0..nvec {
            let lat: Vec<f32> = (0..k).map(|_| xorshift(&mut s)).collect();
            for j in 0..cols {
                let mut a = 0.5 * xorshift(&mut s);
                for (t, l) in lat.iter().enumerate() {
                    a += l * mix[t * cols + j];
                }
                x[v * cols + j] = a;
            }
        }
        let param = Param::from_slice(&w, &[rows, cols]).expect("alloc");
        let mut h = Hessian::new(cols).expect("hessian");
        h.add_rows(&x, nvec).expect("add_rows");
        CalibCase { rows, cols, nvec, x, param, backup: w, h }
    }

    /// Accumulates a fresh Hessian from the calibration vectors; returns a checksum.
    pub fn hessian(&self) -> f64 {
        let mut h = Hessian::new(self.cols).expect("hessian");
        h.add_rows(&self.x, self.nvec).expect("add_rows");
        h.input_norms()[0] as f64
    }

    /// SparseGPT at sparsity 0.5 (weights restored first, outside the caller's timing if it
    /// calls [`Self::restore`] itself); returns a checksum.
    pub fn sparse_gpt(&self) -> f64 {
        let opts = SparseGptOptions { sparsity: Some(0.5), block_size: Some(128), perc_damp: Some(0.01), ..Default::default() };
        let m = sparse_gpt(&View::from_param(&self.param), &self.h, &opts).expect("sparseGpt");
        m.iter().step_by(4097).map(|&x| x as f64).sum::<f64>() + self.param.data()[0] as f64
    }

    /// GPTQ at 4 bits, groups of 128 along the inputs (weights restored by the caller); a checksum.
    pub fn gptq(&self) -> f64 {
        let opts = GptqOptions { bits: 4, group: Some(128), block_size: Some(128), perc_damp: Some(0.01), ..Default::default() };
        let q = gptq(&View::from_param(&self.param), &self.h, &opts).expect("gptq");
        q.codes.iter().step_by(4097).map(|&x| x as f64).sum::<f64>() + self.param.data()[0] as f64
    }

    pub fn restore(&self) {
        self.param.data_mut().copy_from_slice(&self.backup);
    }

    /// Bit digest of the Hessian matrix and of the weights after SparseGPT and after GPTQ
    /// (compare variants).
    pub fn digest(&self) -> u64 {
        let mut d = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |x: u32| {
            d ^= x as u64;
            d = d.wrapping_mul(0x100_0000_01b3);
        };
        self.h.matrix().expect("matrix").iter().for_each(|x| eat(x.to_bits()));
        self.restore();
        self.sparse_gpt();
        self.param.data().iter().for_each(|x| eat(x.to_bits()));
        self.restore();
        self.gptq();
        self.param.data().iter().for_each(|x| eat(x.to_bits()));
        self.restore();
        d
    }
}
