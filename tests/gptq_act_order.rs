//! GPTQ's act-order with static groups (docs/API.md, "Quantization"; IST-DASLab/gptq `gptq.py`,
//! `--act-order --static-groups`): on inputs whose energy varies strongly from input to input,
//! processing the strongest first lowers the output error below the natural order's; the groups
//! stay the original blocks of consecutive inputs, with scales from the uncompensated weights;
//! the order is exactly a permutation of the natural-order solver (an equal diagonal is the
//! identity; a permuted problem solved in natural order gives the same weights); dead inputs come
//! last and end at 0; a keep-mask's zeros stay exact; the scale search keeps every value on its grid.

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use sparsekit_wasm::calib::{gptq, rel_recon_error, GptqOptions, Hessian, QuantGrid, Quantized};
use sparsekit_wasm::{Param, View};

#[path = "support/calib_data.rs"]
mod calib_data;
use calib_data::{hessian_of, rand_vec};

/// Correlated inputs (a shared component plus mixed noise) whose columns are scaled by
/// `scale(j)`: the Hessian's diagonal follows `scale(j)^2`.
fn scaled_inputs(cols: usize, n: usize, seed: u64, scale: impl Fn(usize) -> f32) -> Vec<f32> {
    let z = rand_vec(seed, n * cols);
    let common = rand_vec(seed + 200, n);
    let mut x = vec![0.0f32; n * cols];
    for r in 0..n {
        for j in 0..cols {
            let mix = z[r * cols + j] + 0.5 * z[r * cols + (j * 7 + 3) % cols];
            x[r * cols + j] = scale(j) * (1.5 * common[r] + mix);
        }
    }
    x
}

fn run(w0: &[f32], rows: usize, cols: usize, h: &Hessian, opts: &GptqOptions) -> (Vec<f32>, Quantized) {
    let p = Param::from_slice(w0, &[rows, cols]).unwrap();
    let q = gptq(&View::from_param(&p), h, opts).unwrap();
    let v = p.data().to_vec();
    (v, q)
}

fn bits_of(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Every value is its code on its original group's scale (symmetric), and that scale is the
/// grid's own for the group's original weights (dead inputs as 0): found before any compensation.
fn check_static_groups(
    w0: &[f32],
    v: &[f32],
    q: &Quantized,
    rows: usize,
    cols: usize,
    grid: QuantGrid,
    dead: &[bool],
) -> Result<(), TestCaseError> {
    let g = q.group;
    let ng = cols.div_ceil(g);
    prop_assert_eq!(q.scales.len(), rows * ng);
    let half = 1i32 << (grid.bits - 1);
    for r in 0..rows {
        for k in 0..ng {
            let cs = k * g..((k + 1) * g).min(cols);
            let want = grid.params(cs.map(|c| if dead[c] { 0.0 } else { w0[r * cols + c] }));
            prop_assert_eq!(q.scales[r * ng + k], want.scale, "row {} group {}", r, k);
        }
        for c in 0..cols {
            let code = q.codes[r * cols + c] as i32;
            prop_assert!((-half..half).contains(&code));
            let want = code as f32 * q.scales[r * ng + c / g] + 0.0;
            prop_assert_eq!(v[r * cols + c].to_bits(), want.to_bits(), "[{}, {}]", r, c);
        }
    }
    Ok(())
}

/// Inputs growing 1.12x from one to the next (their energy spans about 10^5, the last ones
/// strongest, the worst natural order): act-order's output error is below the natural order's,
/// with dynamic or static groups, on every seed and grid (observed when written: act-order /
/// natural (the better of its dynamic and static groups) between 0.64 and 0.78 over these 18
/// cases; the bar cannot be passed by noise).
#[test]
fn act_order_beats_natural_order_on_rising_energy() {
    let (rows, cols, n) = (32, 96, 768);
    for seed in 0..6u64 {
        let x = scaled_inputs(cols, n, seed, |j| 1.12f32.powi(j as i32) * 0.05);
        let h = hessian_of(&x, cols);
        let w0 = rand_vec(seed + 31, rows * cols);
        for (bits, group) in [(4, None), (4, Some(32)), (3, Some(16))] {
            let base = GptqOptions { bits, group, full_range: Some(bits == 4), ..Default::default() };
            let err = |o: &GptqOptions| rel_recon_error(&w0, &run(&w0, rows, cols, &h, o).0, &h).unwrap();
            let natural = err(&base);
            let natural_static = err(&GptqOptions { static_groups: Some(true), ..base.clone() });
            let act = err(&GptqOptions { act_order: Some(true), ..base.clone() });
            assert!(
                act < ACT_BAR * natural.min(natural_static),
                "seed {seed} bits {bits} group {group:?}: act-order {act:.5} vs natural {natural:.5} / static {natural_static:.5}"
            );
        }
    }
}

/// Act-order's output error over the natural order's that every case must stay under.
const ACT_BAR: f64 = 0.85;

/// Refused: act-order with a selection made in the original order, and with dynamic groups.
#[test]
fn act_order_refusals() {
    let (rows, cols) = (3, 8);
    let h = hessian_of(&scaled_inputs(cols, 40, 3, |j| 1.0 + j as f32), cols);
    let w0 = rand_vec(4, rows * cols);
    let base = GptqOptions { bits: 4, act_order: Some(true), ..Default::default() };
    for opts in [
        GptqOptions { sparsity: Some(0.5), ..base.clone() },
        GptqOptions { nm: Some((2, 4)), ..base.clone() },
        GptqOptions { static_groups: Some(false), group: Some(4), ..base.clone() },
    ] {
        let p = Param::from_slice(&w0, &[rows, cols]).unwrap();
        let e = gptq(&View::from_param(&p), &h, &opts).unwrap_err();
        assert_eq!(e.code(), "invalid_arguments", "{opts:?}");
        assert_eq!(p.data().as_slice(), w0.as_slice());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]

    /// Scales of the original groups from the uncompensated weights, every value on its grid,
    /// whatever the order; dead inputs (never seen nonzero) end at code 0.
    #[test]
    fn static_groups_on_the_original_blocks(rows in 1usize..6, cols in 2usize..40, g in 1usize..12, bits in 2i64..9, full: bool, act: bool, dead_at in 0usize..40, seed in 0u64..1000) {
        let mut x = scaled_inputs(cols, 3 * cols, seed, |j| 0.2 + ((j * 5) % 7) as f32);
        let dead: Vec<bool> = (0..cols).map(|j| j == dead_at % cols && cols > 2).collect();
        for (i, v) in x.iter_mut().enumerate() {
            if dead[i % cols] { *v = 0.0; }
        }
        let h = hessian_of(&x, cols);
        let w0 = rand_vec(seed + 1, rows * cols);
        let grid = QuantGrid::new(bits, Some(g as i64), true, full, "t").unwrap();
        let opts = GptqOptions { bits, group: Some(g as i64), full_range: Some(full), act_order: Some(act), static_groups: Some(true), ..Default::default() };
        let (v, q) = run(&w0, rows, cols, &h, &opts);
        check_static_groups(&w0, &v, &q, rows, cols, grid, &dead)?;
        for r in 0..rows {
            for c in (0..cols).filter(|&c| dead[c]) {
                prop_assert_eq!(v[r * cols + c].to_bits(), 0.0f32.to_bits());
            }
        }
    }

    /// An equal diagonal (inputs of ±1) orders nothing: act-order gives natural order's static
    /// groups bit for bit.
    #[test]
    fn equal_diagonal_is_natural_order(rows in 1usize..6, cols in 1usize..40, g in 1usize..12, bits in 2i64..9, seed in 0u64..1000) {
        let x: Vec<f32> = rand_vec(seed, 4 * cols * cols.max(8)).iter().map(|&v| if v < 0.0 { -1.0 } else { 1.0 }).collect();
        let h = hessian_of(&x, cols);
        let w0 = rand_vec(seed + 1, rows * cols);
        let base = GptqOptions { bits, group: Some(g as i64), full_range: Some(true), ..Default::default() };
        let (va, qa) = run(&w0, rows, cols, &h, &GptqOptions { act_order: Some(true), ..base.clone() });
        let (vs, qs) = run(&w0, rows, cols, &h, &GptqOptions { static_groups: Some(true), ..base });
        prop_assert_eq!(bits_of(&va), bits_of(&vs));
        prop_assert_eq!(qa, qs);
    }

    /// The order is a permutation and nothing else: with one scale per row (which no order
    /// changes), act-order on (W, H) is natural order on the permuted problem (W's columns and
    /// the inputs in descending diag(H)), its weights and codes put back in place.
    #[test]
    fn act_order_is_the_permuted_problem(rows in 1usize..6, cols in 2usize..40, bits in 2i64..9, seed in 0u64..1000) {
        let n = 3 * cols;
        let x = scaled_inputs(cols, n, seed, |j| 0.1 + ((j * 11) % 13) as f32);
        let h = hessian_of(&x, cols);
        let diag = h.diag_f64();
        let mut perm: Vec<usize> = (0..cols).collect();
        perm.sort_by(|&a, &b| diag[b].total_cmp(&diag[a]));
        let xp: Vec<f32> = (0..n * cols).map(|i| x[(i / cols) * cols + perm[i % cols]]).collect();
        let hp = hessian_of(&xp, cols);
        let w0 = rand_vec(seed + 1, rows * cols);
        let wp: Vec<f32> = (0..rows * cols).map(|i| w0[(i / cols) * cols + perm[i % cols]]).collect();
        let base = GptqOptions { bits, full_range: Some(true), ..Default::default() };
        let (va, qa) = run(&w0, rows, cols, &h, &GptqOptions { act_order: Some(true), ..base.clone() });
        let (vp, qp) = run(&wp, rows, cols, &hp, &base);
        prop_assert_eq!(&qa.scales, &qp.scales);
        for r in 0..rows {
            for (i, &c) in perm.iter().enumerate() {
                prop_assert_eq!(va[r * cols + c].to_bits(), vp[r * cols + i].to_bits(), "[{}, {}]", r, c);
                prop_assert_eq!(qa.codes[r * cols + c], qp.codes[r * cols + i]);
            }
        }
    }

    /// A keep-mask is followed in any order: its zeros stay exactly 0 (code 0), the kept values on
    /// their static group's grid; with the scale search too, whose scales only shrink the range's.
    #[test]
    fn keep_mask_and_scale_search(rows in 1usize..6, cols in 2usize..40, g in 1usize..12, bits in 2i64..9, search: bool, seed in 0u64..1000) {
        let x = scaled_inputs(cols, 3 * cols, seed, |j| 0.3 + ((j * 3) % 5) as f32);
        let h = hessian_of(&x, cols);
        let w0 = rand_vec(seed + 1, rows * cols);
        let keep: Vec<u8> = rand_vec(seed + 2, rows * cols).iter().map(|&v| (v > -0.3) as u8).collect();
        let opts = GptqOptions { bits, group: Some(g as i64), full_range: Some(true), keep: Some(keep.clone()), act_order: Some(true), scale_search: Some(search), ..Default::default() };
        let (v, q) = run(&w0, rows, cols, &h, &opts);
        let grid = QuantGrid::new(bits, Some(g as i64), true, true, "t").unwrap();
        let ng = cols.div_ceil(g);
        for r in 0..rows {
            for k in 0..ng {
                let own = grid.params((k * g..((k + 1) * g).min(cols)).map(|c| w0[r * cols + c])).scale;
                let s = q.scales[r * ng + k];
                prop_assert!(if search { s.abs() <= own.abs() && s.signum() == own.signum() } else { s == own }, "row {} group {}: {} vs {}", r, k, s, own);
            }
            for c in 0..cols {
                let i = r * cols + c;
                let want = q.codes[i] as f32 * q.scales[r * ng + c / g] + 0.0;
                prop_assert_eq!(v[i].to_bits(), want.to_bits());
                if keep[i] == 0 {
                    prop_assert_eq!((q.codes[i], v[i].to_bits()), (0, 0.0f32.to_bits()));
                }
            }
        }
    }
}
