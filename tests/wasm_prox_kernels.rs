//! The Adam-conditioned soft threshold's kernels (bisection, Newton search, the in-place run,
//! the final write): SIMD128 against the scalar oracle, bit for bit (NaN: any NaN on both sides).
//! Only meaningful on wasm32 with simd128 (run by scripts/test.sh with `wasm-pack test`, see
//! `tests/wasm_kernels.rs`).
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

#[path = "support/wasm_inputs.rs"]
mod wasm_inputs;

use sparsekit_wasm::test_support::{scalar, simd, BlockRun, ProxLanes, ProxStop, QuadSearch, RootLanes, RootStart};
use wasm_bindgen_test::*;
use wasm_inputs::{inputs, same};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn prox_kernels_bit_exact() {
    let lanes_same = |a: &ProxLanes, b: &ProxLanes| {
        (0..4).all(|k| {
            same(a.lo[k], b.lo[k]) && same(a.hi[k], b.hi[k]) && same(a.mu[k], b.mu[k]) && a.iters[k] == b.iters[k] && a.go[k] == b.go[k]
        })
    };
    for n in [4usize, 8, 16, 64, 128] {
        for seed in [3u64, 5, 9] {
            let hx = inputs(4 * n, seed);
            // Conditioners: mostly positive, with the awkward values of `inputs` (0, -0, NaN, inf).
            let h: Vec<f32> = inputs(4 * n, seed + 100).iter().map(|v| if *v == 0.5 { 0.0 } else { v.abs() + 0.125 }).collect();
            let x = inputs(4 * n, seed + 200);
            let (mut p1, mut p2, mut q1, mut q2) = (vec![0.0; 4 * n], vec![0.0; 4 * n], vec![0.0; 4 * n], vec![0.0; 4 * n]);
            scalar::prox_pack4(&x, &h, &mut p1, &mut p2);
            simd::prox_pack4(&x, &h, &mut q1, &mut q2);
            for i in 0..4 * n {
                assert!(same(p1[i], q1[i]) && same(p2[i], q2[i]), "pack n {n} seed {seed} at {i}");
                assert!(same(p1[i], x[(i % 4) * n + i / 4] * h[(i % 4) * n + i / 4]), "pack layout n {n} at {i}");
            }
            let [a, b] = [scalar::prox_stats4(&hx, &h), simd::prox_stats4(&hx, &h)];
            for (r, (p, q)) in a.iter().zip(&b).enumerate() {
                for k in 0..4 {
                    assert!(same(p[k], q[k]), "stats {r} n {n} seed {seed} lane {k}: {p:?} vs {q:?}");
                }
            }
            let start = ProxLanes {
                lo: [0.0, 0.0, 1e-3, f32::NAN],
                hi: [0.0, 2.0, 5.0, 3.0],
                mu: [0.0, 1.0, 2.5005, f32::NAN],
                t: [0.7, 1.3, 0.05, 2.0],
                iters: [0, 3, 0, 1],
                go: [u32::MAX, u32::MAX, u32::MAX, 0],
            };
            for stop in [ProxStop::Converged { max_iter: 9, atol: 1e-3 }, ProxStop::Converged { max_iter: 30, atol: 0.0 }, ProxStop::At(12)]
            {
                let (mut p, mut q) = (start, start);
                for step in 0..40 {
                    let (gp, gq) = (scalar::prox_step4(&hx, &h, &mut p, stop), simd::prox_step4(&hx, &h, &mut q, stop));
                    assert!(gp == gq && lanes_same(&p, &q), "step {step} n {n} seed {seed} {stop:?}: {p:?} vs {q:?}");
                    if !gp {
                        break;
                    }
                }
            }
        }
    }
}

/// The Newton method's kernels: the per-block sums (every length, so every tail) and the
/// four-lane search step, SIMD against scalar, on real-looking blocks and the awkward values.
#[wasm_bindgen_test]
fn root_kernels_bit_exact() {
    let same_lanes = |a: &RootLanes, b: &RootLanes| {
        (0..4).all(|k| {
            same(a.lo[k], b.lo[k])
                && same(a.hi[k], b.hi[k])
                && same(a.mu[k], b.mu[k])
                && same(a.prev[k], b.prev[k])
                && same(a.newt[k], b.newt[k])
                && (a.lo_open[k], a.hi_open[k], a.evals[k], a.go[k]) == (b.lo_open[k], b.hi_open[k], b.evals[k], b.go[k])
        })
    };
    for n in 0..40usize {
        let hx = inputs(n, 31 + n as u64);
        let h: Vec<f32> = inputs(n, 37 + n as u64).iter().map(|v| v.abs() + 0.25).collect();
        for mu in [0.0f32, 0.3, 7.5, f32::NAN] {
            let (a, b) = (scalar::root_sums_hx(&hx, &h, mu), simd::root_sums_hx(&hx, &h, mu));
            assert!((0..3).all(|i| same(a[i], b[i])), "sums n {n} mu {mu}: {a:?} vs {b:?}");
        }
    }
    // The four-lane bracket and start: plain lanes, and each way a lane can fail to be one.
    let v = inputs(400, 41);
    for i in 0..100 {
        let pick = |j: usize| v[(4 * i + j) % v.len()];
        // [sum w, min h, max h, sum w h, sum w h²]: moments that give a start inside the
        // bracket, outside it (midpoint), a negative variance (rounding) and NaN.
        let stats = [
            [4.0, pick(0).abs() * 9.0, 2.5, 1.0],
            [0.5, 0.25, pick(1), 1e-3],
            [1.5, 0.75, pick(2).abs() + 0.5, 2.0],
            [4.0, pick(4).abs() * 9.0, 2.5 * pick(5).abs(), 1.0],
            [4.2, pick(6).abs() * 9.0 * pick(7).abs(), 0.5, f32::NAN],
        ];
        let t = [0.5, pick(3), 1.0, if i % 3 == 0 { 0.0 } else { 0.01 }];
        for c in [
            RootStart { eps: f32::EPSILON, coupling: false, halvings: 1.0 / (1u32 << 21) as f32, atol: 1e-8 },
            RootStart { eps: 1e-3, coupling: true, halvings: 0.25, atol: 0.0 },
        ] {
            let (a, b) = (scalar::root_start4(&stats, t, &c), simd::root_start4(&stats, t, &c));
            let bits = |x: Option<[[f32; 4]; 4]>| x.map(|r| r.map(|l| l.map(f32::to_bits)));
            assert_eq!(bits(a), bits(b), "root_start4 {stats:?} {t:?} {c:?}");
        }
    }
    let mut certified_first = 0;
    for n in [4usize, 16, 64] {
        for (seed, awkward) in [(3u64, false), (5, false), (9, true), (11, false), (13, false)] {
            // Weights in (-1, 1) and conditioners in [0.5, 1.5): every lane searches for a real
            // root; the awkward seed mixes in zeros, NaN and infinities.
            let raw = inputs(8 * n, seed);
            let x: Vec<f32> = raw[..4 * n].iter().map(|v| if awkward { *v } else { (v * 0.37).fract() }).collect();
            let h: Vec<f32> = raw[4 * n..].iter().map(|v| if awkward { v.abs() } else { 0.5 + (v.abs() * 0.61).fract() }).collect();
            let (mut hxt, mut ht) = (vec![0.0; 4 * n], vec![0.0; 4 * n]);
            scalar::prox_pack4(&x, &h, &mut hxt, &mut ht);
            let mut start = RootLanes { t: [0.3, 0.05, 1.1, 0.7], ..RootLanes::default() };
            for k in 0..4 {
                let [hi, tol] = [[4.0, 1e-6], [0.5, 1e-7], [9.0, 1e-3], [2.0, 0.0]][k];
                let hk = &h[k * n..(k + 1) * n];
                let (h_min, h_max) = (hk.iter().copied().fold(f32::INFINITY, f32::min), hk.iter().copied().fold(0.0, f32::max));
                start.search(k, 1e-3, hi, hi / 2.0, start.t[k], tol, h_min, h_max);
                if k == 2 && awkward {
                    start.go[k] = 0;
                }
            }
            // From the midpoint-like start above, and from the real start (moments and bracket
            // of the quad), where most searches are certified after their first evaluation.
            let stats = scalar::prox_stats4(&hxt, &ht);
            let c = RootStart { eps: f32::EPSILON, coupling: false, halvings: 1.0 / (1u32 << 21) as f32, atol: 0.0 };
            let real = scalar::root_start4(&stats, start.t, &c).map(|st| RootLanes::quad(&st, start.t, &stats));
            for (from, init) in [Some(start), real].into_iter().flatten().enumerate() {
                for max_evals in [1u32, 3, 20] {
                    let (mut p, mut q) = (init, init);
                    for step in 0..25 {
                        let (gp, gq) = (scalar::prox_root4(&hxt, &ht, &mut p, max_evals), simd::prox_root4(&hxt, &ht, &mut q, max_evals));
                        let case = format!("start {from} step {step} n {n} seed {seed} max_evals {max_evals}");
                        assert!(gp == gq && same_lanes(&p, &q), "{case}: {p:?} vs {q:?}");
                        if step == 0 && from == 1 && max_evals > 1 && !gp {
                            certified_first += 1;
                        }
                        if !gp {
                            break;
                        }
                    }
                }
            }
        }
    }
    // The SIMD step's shortcut (every searching lane certified) was taken, and agreed.
    assert!(certified_first >= 6, "quads certified after one evaluation: {certified_first}");
}

/// The in-place run kernel (statistics, start, Newton search, bisection read-off, write on
/// blocks where they lie, quads stepped iteration-outer) against the scalar composition of the
/// packed kernels, bit for bit: block shapes 1x4 .. 5x8 (the constant-shape and the generic
/// paths), runs of 1 .. 13 blocks (partial last quads), strided rows, every global stop regime,
/// thresholds that make some quads not plain searches (refused on both sides, nothing written).
#[wasm_bindgen_test]
fn adam_run_bit_exact() {
    let (mut searched, mut refused, mut zeroed) = (0, 0, 0);
    for (rows, vecs) in [(1usize, 1usize), (2, 1), (4, 1), (5, 1), (1, 2), (3, 2), (4, 2)] {
        let w = 4 * vecs;
        for blocks in [1usize, 3, 4, 6, 13] {
            let (xs, hs) = (blocks * w + 3, blocks * w + 1);
            for seed in 0..5u64 {
                let raw = inputs(rows * (xs + hs) + 8, 101 + seed * 7 + (rows * vecs * blocks) as u64);
                let x0: Vec<f32> = raw[..rows * xs].iter().map(|v| (v * 0.37).fract()).collect();
                let h: Vec<f32> = raw[rows * xs..rows * (xs + hs)]
                    .iter()
                    .map(|v| 0.25 + (v.abs() * 0.61).fract() * [1.0, 8.0, 0.01, 1.0, 1.0][seed as usize])
                    .collect();
                let scale = ((rows * w) as f32).sqrt() * 0.12;
                let mut t: Vec<f32> = (0..blocks).map(|b| scale * [0.4, 0.9, 0.05, 0.7][b % 4]).collect();
                if seed == 3 {
                    // A zero threshold: that quad is refused.
                    t[blocks / 2] = 0.0;
                }
                if seed == 4 {
                    // Thresholds beyond the norms: zeroed blocks, done in place beside searches.
                    for b in (0..blocks).step_by(3) {
                        t[b] = 1e6;
                    }
                }
                let run = BlockRun { x_at: 2, h_at: 1, x_stride: xs, h_stride: hs, rows, vecs, blocks };
                for (max_evals, k_stop, atol) in [(20u32, 20usize, 1e-8f32), (3, 3, 0.0), (20, 0, 1e-8), (60, 60, 0.0), (20, 11, 1e-3)] {
                    let halvings = 0.5f32.powi(max_evals as i32 + 1);
                    let s = QuadSearch {
                        start: RootStart { eps: f32::EPSILON, coupling: seed % 2 == 1, halvings, atol },
                        max_evals,
                        k_stop,
                        cells: 2f64.powi(k_stop.min(64) as i32),
                    };
                    let (mut a, mut b) = (x0.clone(), x0.clone());
                    let (mut oa, mut ob) = (vec![false; run.quads()], vec![false; run.quads()]);
                    scalar::adam_run(&mut a, &h, &run, &t, &s, &mut oa);
                    simd::adam_run(&mut b, &h, &run, &t, &s, &mut ob);
                    let case = format!("rows {rows} vecs {vecs} blocks {blocks} seed {seed} k {k_stop}");
                    assert_eq!(oa, ob, "{case}");
                    for i in 0..a.len() {
                        assert!(same(a[i], b[i]), "{case} at {i}: {} vs {}", a[i], b[i]);
                    }
                    for (q, &done) in oa.iter().enumerate() {
                        // The elements of quad q's blocks (first row is enough to tell).
                        let cols = 2 + 4 * q * w..2 + (4 * q + run.lanes(q)) * w;
                        let changed = cols.clone().any(|i| !same(a[i], x0[i]));
                        if done {
                            searched += 1;
                            assert!(changed, "{case}: quad {q} searched but not written");
                            for b in (4 * q..4 * q + run.lanes(q)).filter(|&b| t[b] == 1e6) {
                                zeroed += 1;
                                assert!(
                                    (0..rows).all(|r| (0..w).all(|c| a[2 + r * xs + b * w + c] == 0.0)),
                                    "{case}: block {b} not zeroed"
                                );
                            }
                        } else {
                            refused += 1;
                            assert!(!changed, "{case}: quad {q} refused but written");
                        }
                    }
                }
            }
        }
    }
    assert!(searched >= 300 && refused >= 50 && zeroed >= 100, "searched {searched}, refused {refused}, zeroed {zeroed}");
}

#[wasm_bindgen_test]
fn prox_write_bit_exact() {
    let x = inputs(4 * 3 * 5 * 8, 21);
    // Conditioners with zeros of both signs (H + mu == 0 where mu == 0), NaN and infinities.
    let h: Vec<f32> = inputs(x.len(), 23).iter().map(|v| v.abs()).collect();
    let mk: Vec<(f32, f32)> = [(0.0f32, 1.0f32), (0.0, 0.0), (0.37, 1.0), (0.37, 0.0), (-0.5, 1.0), (f32::NAN, 1.0), (2.5, -0.0)]
        .into_iter()
        .cycle()
        .take(x.len())
        .collect();
    for chunk in [1usize, 3, 4, 8, 12, 16, 20] {
        let n = x.len() / chunk * chunk;
        for step in [1usize, 2] {
            if (n / chunk) * step > mk.len() {
                continue;
            }
            let (mut a, mut b) = (x[..n].to_vec(), x[..n].to_vec());
            scalar::prox_write(&mut a, &h[..n], chunk, &mk, step);
            simd::prox_write(&mut b, &h[..n], chunk, &mk, step);
            for i in 0..n {
                assert!(same(a[i], b[i]), "prox_write chunk {chunk} step {step} at {i}: {} vs {}", a[i], b[i]);
            }
        }
    }
}
