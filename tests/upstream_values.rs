//! Published values of the group-lasso proximal steps (Euclidean and Adam-conditioned), for
//! single blocks and couplings, plus the optimality condition of the Adam step on random data.
//!
//! Tolerances: results are float32; the Euclidean step divides by `norm + eps` with the f32
//! machine eps (1.19e-7), which moves a factor by about `eps * t / norm^2`, far below 1e-6 here.
//! The Adam step is exact where the conditioner is constant over a block (the bracket collapses
//! to the root); elsewhere it is a bisection, so those checks use the bracket width.
#![cfg(not(target_arch = "wasm32"))]

use sparsekit_wasm::{BlockCoupling, BlockSpec, Method, Param, SoftOptions, View};

fn spec(data: &[f32], shape: &[usize], block: &[i64]) -> (Param, BlockSpec) {
    let p = Param::from_slice(data, shape).unwrap();
    let s = BlockSpec::new(View::from_param(&p), block, None).unwrap();
    (p, s)
}

fn whole(data: &[f32], shape: &[usize]) -> (Param, BlockSpec) {
    spec(data, shape, &vec![-1; shape.len()])
}

fn assert_all_close(got: &[f32], want: &[f64], rtol: f64, atol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(((g as f64) - w).abs() <= atol + rtol * w.abs(), "{what}: element {i} is {g}, expected {w} (rtol {rtol}, atol {atol})");
    }
}

fn opts(max_iter: usize) -> SoftOptions {
    SoftOptions { max_iter, ..SoftOptions::default() }
}

/// Adam step on a single whole-tensor block.
fn adam_whole(x: &[f32], shape: &[usize], h: &[f32], lambda: f32, max_iter: usize) -> Vec<f32> {
    let (p, s) = whole(x, shape);
    s.soft_threshold(&[lambda], Some(h), opts(max_iter)).unwrap();
    let out = p.data().clone();
    out
}

#[test]
fn ones_2x2_constant_conditioner() {
    let x = [1.0f32; 4];
    // H = 1, lambda = 0.5 -> 0.75 (mu = 1/3); H = 2, lambda = 1 -> 0.75 (mu = 2/3).
    assert_all_close(&adam_whole(&x, &[2, 2], &[1.0; 4], 0.5, 20), &[0.75; 4], 1e-6, 1e-7, "H=1 l=0.5");
    assert_all_close(&adam_whole(&x, &[2, 2], &[2.0; 4], 1.0, 20), &[0.75; 4], 1e-6, 1e-7, "H=2 l=1");
    // lambda = 3 >= ||H x|| = 2: the block dies.
    assert_all_close(&adam_whole(&x, &[2, 2], &[1.0; 4], 3.0, 20), &[0.0; 4], 0.0, 0.0, "H=1 l=3");
    // lambda = 0.9, H = 1 -> 1 / (1 + 0.9/1.1).
    let want = 1.0 / (1.0 + 0.9 / 1.1);
    assert_all_close(&adam_whole(&x, &[2, 2], &[1.0; 4], 0.9, 20), &[want; 4], 1e-6, 1e-7, "H=1 l=0.9");
    // The Euclidean step agrees where H = 1: 1 - 0.5 / 2.
    let (p, s) = whole(&x, &[2, 2]);
    s.soft_threshold(&[0.5], None, SoftOptions::default()).unwrap();
    assert_all_close(&p.data(), &[0.75; 4], 1e-6, 1e-7, "euclid l=0.5");
}

/// `x = H v / (H + mu)` for a published `mu`.
fn expected_from_mu(h: &[f64], v: f64, mu: f64) -> Vec<f64> {
    h.iter().map(|&h| h * v / (h + mu)).collect()
}

#[test]
fn varying_conditioner_published_mu() {
    // H = [[.25, .5], [1, 2]], v = 1, lambda = 1 -> mu = 1.1691705341.
    let h = [0.25f64, 0.5, 1.0, 2.0];
    let hf: Vec<f32> = h.iter().map(|&x| x as f32).collect();
    let want = expected_from_mu(&h, 1.0, 1.1691705341);
    // 20 steps narrow the initial bracket (width ~1.3) to ~1.3e-6, i.e. a relative error of ~1e-6.
    assert_all_close(&adam_whole(&[1.0; 4], &[2, 2], &hf, 1.0, 20), &want, 1e-5, 1e-7, "2x2 H, 20 iters");
    assert_all_close(&adam_whole(&[1.0; 4], &[2, 2], &hf, 1.0, 60), &want, 2e-6, 1e-7, "2x2 H, 60 iters");

    // H = [0.49671415, 0.1382643, 0.64768854, 1.52302986], v = 1, lambda = 1 -> mu = 1.6383774184.
    let h = [0.49671415f64, 0.1382643, 0.64768854, 1.52302986];
    let hf: Vec<f32> = h.iter().map(|&x| x as f32).collect();
    let want = expected_from_mu(&h, 1.0, 1.6383774184);
    assert_all_close(&adam_whole(&[1.0; 4], &[4], &hf, 1.0, 20), &want, 1e-5, 1e-7, "1-D H, 20 iters");
    assert_all_close(&adam_whole(&[1.0; 4], &[4], &hf, 1.0, 60), &want, 2e-6, 1e-7, "1-D H, 60 iters");

    // H = 0.5, v = 0.9 (x4), lambda = 1: ||H v|| = 0.9 <= 1 -> zero.
    assert_all_close(&adam_whole(&[0.9; 4], &[4], &[0.5; 4], 1.0, 20), &[0.0; 4], 0.0, 0.0, "dead block");
}

fn coupling(parts: &[(&[f32], &[usize], &[i64])], orders: &[Vec<i64>]) -> (Vec<Param>, BlockCoupling) {
    let mut ps = Vec::new();
    let mut specs = Vec::new();
    for (d, shape, block) in parts {
        let (p, s) = spec(d, shape, block);
        ps.push(p);
        specs.push(s);
    }
    (ps, BlockCoupling::new(specs, orders, None).unwrap())
}

#[test]
fn coupled_scalars() {
    let run = |h: f32, lambda: f32, cond: bool| -> (f32, f32) {
        let (ps, c) = coupling(&[(&[3.0], &[1, 1], &[]), (&[4.0], &[1, 1], &[])], &[]);
        let (h0, h1) = ([h], [h]);
        let hs: [&[f32]; 2] = [&h0, &h1];
        c.soft_threshold(&[lambda], if cond { Some(&hs) } else { None }, SoftOptions::default()).unwrap();
        let out = (ps[0].data()[0], ps[1].data()[0]);
        out
    };
    for (h, lambda, want) in [(1.0, 2.5, (1.5, 2.0)), (2.0, 5.0, (1.5, 2.0)), (1.0, 6.0, (0.0, 0.0))] {
        let (a, b) = run(h, lambda, true);
        assert_all_close(&[a, b], &[want.0, want.1], 1e-6, 1e-7, &format!("adam H={h} l={lambda}"));
    }
    // Euclidean: ||(3, 4)|| = 5; lambda = 2.5 halves it, lambda = 6 kills it.
    let (a, b) = run(1.0, 2.5, false);
    assert_all_close(&[a, b], &[1.5, 2.0], 1e-6, 1e-7, "euclid l=2.5");
    let (a, b) = run(1.0, 6.0, false);
    assert_all_close(&[a, b], &[0.0, 0.0], 0.0, 0.0, "euclid l=6");
}

#[test]
fn coupled_2x2_with_1x4() {
    let (ps, c) = coupling(&[(&[1.0; 4], &[2, 2], &[-1, -1]), (&[1.0; 4], &[1, 4], &[-1, -1])], &[]);
    c.soft_threshold(&[1.0], None, SoftOptions::default()).unwrap();
    let k = 1.0 - 1.0 / 8f64.sqrt();
    assert_all_close(&ps[0].data(), &[k; 4], 1e-6, 1e-7, "(2,2)");
    assert_all_close(&ps[1].data(), &[k; 4], 1e-6, 1e-7, "(1,4)");
}

#[test]
fn coupled_3d_with_transposing_order() {
    let p1 = vec![1.0f32; 4 * 5 * 8];
    let p2 = vec![0.5f32; 8 * 4 * 5];
    let (ps, c) = coupling(&[(&p1, &[4, 5, 8], &[2, 1, 2]), (&p2, &[8, 4, 5], &[2, 2, 1])], &[vec![0, 1, 2], vec![1, 2, 0]]);
    assert_eq!(c.grid_shape(), &[2, 5, 4]);
    assert_eq!(c.numel_per_block(), 8);
    let t = vec![1.0f32; c.numblk()];
    c.soft_threshold(&t, None, SoftOptions::default()).unwrap();
    let k = 1.0 - 1.0 / 5f64.sqrt();
    assert_all_close(&ps[0].data(), &vec![k; p1.len()], 1e-6, 1e-7, "p1");
    assert_all_close(&ps[1].data(), &vec![0.5 * k; p2.len()], 1e-6, 1e-7, "p2");
}

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift), so the test needs no RNG crate.
fn rand_vec(n: usize, seed: &mut u64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            ((*seed >> 40) as f64 / (1u64 << 24) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

#[test]
fn scalar_blocks_are_elementwise_soft_threshold() {
    let mut seed = 0x9e3779b97f4a7c15;
    let x: Vec<f32> = rand_vec(48, &mut seed).iter().map(|v| v * 3.0).collect();
    let (p, s) = spec(&x, &[6, 8], &[]);
    assert_eq!(s.numel_per_block(), 1);
    let lambda = 0.7f32;
    s.soft_threshold(&[lambda; 48], None, SoftOptions::default()).unwrap();
    let want: Vec<f64> = x.iter().map(|&v| (v as f64).signum() * ((v as f64).abs() - lambda as f64).max(0.0)).collect();
    // x * (1 - l / (|x| + eps)) differs from sign(x)(|x| - l) by about l * eps / |x|.
    assert_all_close(&p.data(), &want, 1e-6, 2e-6, "scalar blocks");
}

#[test]
fn block_1x2_euclid() {
    let (p, s) = spec(&[3.0, 4.0, 0.05, 0.0], &[1, 4], &[1, 2]);
    s.soft_threshold(&[0.1, 0.1], None, SoftOptions::default()).unwrap();
    assert_all_close(&p.data(), &[2.94, 3.92, 0.0, 0.0], 1e-6, 1e-7, "block (1,2)");
}

#[test]
fn conditioned_pair() {
    // H = 2, x = [3, 4], lambda = 1 -> mu = 2/9, x = [2.7, 3.6].
    assert_all_close(&adam_whole(&[3.0, 4.0], &[2], &[2.0, 2.0], 1.0, 20), &[2.7, 3.6], 1e-6, 1e-7, "H=2 pair");
}

/// The prox optimality condition: for each surviving block, `mu * ||H v / (H + mu)|| = lambda`
/// with the `mu` recovered from the result; dead blocks (`||H v|| <= lambda`) are zero.
#[test]
fn adam_step_optimality_on_random_data() {
    let mut seed = 0x2545f4914f6cdd1d;
    let (rows, cols, br, bc) = (12usize, 16usize, 3usize, 4usize);
    for trial in 0..6 {
        let v = rand_vec(rows * cols, &mut seed);
        let h: Vec<f32> = rand_vec(rows * cols, &mut seed).iter().map(|u| 0.5 + 0.75 * (u + 1.0)).collect(); // [0.5, 2)
        let (p, s) = spec(&v, &[rows, cols], &[br as i64, bc as i64]);
        let nb = s.numblk();
        // Thresholds between 0.1 and 1.3 times each block's ||H v||: both survivors and dead blocks.
        let scales = rand_vec(nb, &mut seed);
        let mut t = vec![0.0f32; nb];
        let mut hv_norm = vec![0.0f64; nb];
        for b in 0..nb {
            let (gr, gc) = (b / (cols / bc), b % (cols / bc));
            let mut acc = 0.0f64;
            for i in 0..br {
                for j in 0..bc {
                    let e = (gr * br + i) * cols + gc * bc + j;
                    acc += (h[e] as f64 * v[e] as f64).powi(2);
                }
            }
            hv_norm[b] = acc.sqrt();
            t[b] = (hv_norm[b] * (0.7 + 0.6 * scales[b] as f64)) as f32;
        }
        // Both methods: the bisection to (nearly) its limit, and the default Newton search.
        let method = if trial % 2 == 0 { Method::Newton } else { Method::Bisection };
        s.soft_threshold(&t, Some(&h), SoftOptions { max_iter: 60, atol: 0.0, eps: None, method }).unwrap();
        let x = p.data().clone();
        let (mut alive, mut dead) = (0, 0);
        for b in 0..nb {
            let (gr, gc) = (b / (cols / bc), b % (cols / bc));
            let elems: Vec<usize> = (0..br).flat_map(|i| (0..bc).map(move |j| (gr * br + i) * cols + gc * bc + j)).collect();
            if hv_norm[b] <= t[b] as f64 * (1.0 + 1e-6) {
                dead += 1;
                assert!(elems.iter().all(|&e| x[e] == 0.0), "trial {trial} block {b}: dead block not zeroed");
                continue;
            }
            alive += 1;
            // Recover mu from the element with the largest |v| (best conditioned).
            let e = *elems.iter().max_by(|&&a, &&b| v[a].abs().total_cmp(&v[b].abs())).unwrap();
            let mu = h[e] as f64 * (v[e] as f64 / x[e] as f64 - 1.0);
            assert!(mu > 0.0, "trial {trial} block {b}: recovered mu {mu} <= 0");
            let norm: f64 = elems.iter().map(|&e| (h[e] as f64 * v[e] as f64 / (h[e] as f64 + mu)).powi(2)).sum::<f64>().sqrt();
            let lhs = mu * norm;
            assert!((lhs - t[b] as f64).abs() <= 2e-4 * t[b] as f64, "trial {trial} block {b}: mu*||x|| = {lhs}, threshold {}", t[b]);
            // Every element follows the same mu.
            for &e in &elems {
                let want = h[e] as f64 * v[e] as f64 / (h[e] as f64 + mu);
                assert!((x[e] as f64 - want).abs() <= 1e-5 * want.abs() + 1e-6, "trial {trial} block {b} element {e}");
            }
        }
        assert!(alive > 0 && dead > 0, "trial {trial}: alive {alive}, dead {dead}");
    }
}

/// Both methods step blocks of one length (a multiple of 4) four at a time; with `atol = 0`
/// every block's steps depend on that block alone (the bisection runs exactly `max_iter`), so
/// the result over the whole grid must equal, bit for bit, each block thresholded on its own
/// (one block: the one-at-a-time path).
#[test]
fn adam_four_blocks_per_step_matches_one_block_at_a_time() {
    for method in [Method::Bisection, Method::Newton] {
        four_blocks_vs_one(method);
    }
}

fn four_blocks_vs_one(method: Method) {
    let (rows, cols, bh, bw) = (8usize, 24usize, 4usize, 4usize);
    let mut seed = 7u32;
    let mut rnd = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let x: Vec<f32> = (0..rows * cols).map(|_| rnd() * 2.0 - 1.0).collect();
    let h: Vec<f32> = (0..rows * cols).map(|_| rnd() + 0.05).collect();
    let nblocks = (rows / bh) * (cols / bw);
    let t: Vec<f32> = (0..nblocks).map(|_| rnd() * 3.0).collect();
    let opts = SoftOptions { max_iter: 20, atol: 0.0, eps: None, method };
    let (p, s) = spec(&x, &[rows, cols], &[bh as i64, bw as i64]);
    s.soft_threshold(&t, Some(&h), opts).unwrap();
    let together = p.data().clone();
    let gc = cols / bw;
    for (b, &tb) in t.iter().enumerate() {
        let (r0, c0) = ((b / gc) * bh, (b % gc) * bw);
        let pick = |v: &[f32]| -> Vec<f32> { (0..bh * bw).map(|i| v[(r0 + i / bw) * cols + c0 + i % bw]).collect() };
        let (pb, sb) = spec(&pick(&x), &[bh, bw], &[-1, -1]);
        sb.soft_threshold(&[tb], Some(&pick(&h)), opts).unwrap();
        let alone = pb.data().clone();
        let got = pick(&together);
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            alone.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{method:?} block {b}"
        );
    }
}

/// The defining whole-tensor bisection (docs/API.md, "The soft threshold") written plainly (every block stepped each iteration, one
/// global stop once every bracket is below `atol`), with the library's summation order
/// (`kernels::scalar`), then the BlockSpec write `(H / (H + mu)) * x` and the survivor zeroing.
#[allow(clippy::too_many_arguments)] // the definition's parameters, one to one
fn adam_reference(x: &[f32], h: &[f32], shape: [usize; 2], block: [usize; 2], t: &[f32], max_iter: usize, atol: f32, eps: f32) -> Vec<f32> {
    use sparsekit_wasm::test_support::{nan_max, scalar, Reduction};
    let (gr, gc) = (shape[0] / block[0], shape[1] / block[1]);
    let elems = |b: usize| -> Vec<usize> {
        let (r0, c0) = ((b / gc) * block[0], (b % gc) * block[1]);
        (0..block[0] * block[1]).map(|i| (r0 + i / block[1]) * shape[1] + c0 + i % block[1]).collect()
    };
    let nb = gr * gc;
    let hx: Vec<Vec<f32>> = (0..nb).map(|b| elems(b).iter().map(|&e| h[e] * x[e]).collect()).collect();
    let hb: Vec<Vec<f32>> = (0..nb).map(|b| elems(b).iter().map(|&e| h[e]).collect()).collect();
    let (mut lo, mut hi, mut keep) = (vec![0f32; nb], vec![0f32; nb], vec![1f32; nb]);
    for b in 0..nb {
        let d = scalar::reduce_chunk(Reduction::SumSq, &hx[b]).sqrt() - t[b];
        let den = nan_max(d, 0.0) + eps;
        lo[b] = nan_max(t[b] * scalar::reduce_chunk(Reduction::Min, &hb[b]) / den, 0.0);
        hi[b] = nan_max(t[b] * scalar::reduce_chunk(Reduction::Max, &hb[b]) / den, 0.0);
        if d <= 0.0 && t[b] != 0.0 {
            keep[b] = 0.0;
        }
    }
    let mut mu: Vec<f32> = (0..nb).map(|b| (lo[b] + hi[b]) / 2.0).collect();
    for _ in 0..max_iter {
        for b in 0..nb {
            let zeta = if mu[b] == 0.0 { 0.0 } else { mu[b] * scalar::cond_sumsq_hx(&hx[b], &hb[b], mu[b]).sqrt() };
            if zeta < t[b] {
                lo[b] = mu[b];
            } else {
                hi[b] = mu[b];
            }
            mu[b] = (lo[b] + hi[b]) / 2.0;
        }
        if (0..nb).all(|b| (lo[b] - hi[b]).abs() < atol) {
            break;
        }
    }
    let mut out = x.to_vec();
    for b in 0..nb {
        for &e in &elems(b) {
            let d = h[e] + mu[b];
            let v = if d == 0.0 { x[e] } else { (h[e] / d) * x[e] };
            out[e] = v * keep[b];
        }
    }
    out
}

/// The batched path of `method: 'bisection'` (blocks gathered in runs, four blocks per SIMD
/// step, many quads stepped in turn, phase 2 for early-converged blocks, leftovers one at a time)
/// against the plain whole-tensor loop, bit for bit, over block lengths that take each path,
/// tolerances that stop blocks at different iterations, NaN, zero and huge thresholds, zero
/// conditioners. The Newton method on the same inputs: the same NaNs and zeros (bit for bit:
/// signs included) and the same numbers within the conformance tolerance of conditioned soft
/// thresholds (rtol 1e-3, atol 1e-5) where the bisection has converged (20 or more steps), the
/// bisection's own numbers with `maxIter: 0` (no evaluation: the bracket midpoint).
#[test]
fn adam_batched_path_matches_the_whole_tensor_loop() {
    let mut seed = 99u32;
    let mut rnd = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut checked = 0;
    for (shape, block) in
        [([12, 40], [4, 4]), ([8, 36], [2, 2]), ([9, 20], [3, 5]), ([64, 48], [1, 16]), ([256, 6], [128, 1]), ([30, 30], [6, 6])]
    {
        let n = shape[0] * shape[1];
        let nb = n / (block[0] * block[1]);
        for trial in 0..4 {
            let mut x: Vec<f32> = (0..n).map(|_| rnd() * 2.0 - 1.0).collect();
            let mut h: Vec<f32> = (0..n).map(|_| rnd() + 0.05).collect();
            let mut t: Vec<f32> = (0..nb).map(|_| rnd() * (block[0] * block[1]) as f32 * 0.3).collect();
            if trial > 0 {
                x[5] = f32::NAN;
                h[n - 3] = 0.0;
                t[1] = 0.0;
                t[nb - 1] = 1e6;
            }
            for (max_iter, atol) in [(0usize, 0.0f32), (1, 0.0), (7, 1e-2), (20, 1e-4), (20, 0.0), (40, 1e-6)] {
                let want = adam_reference(&x, &h, shape, block, &t, max_iter, atol, 1e-8);
                let run = |method| {
                    let (p, s) = spec(&x, &shape, &[block[0] as i64, block[1] as i64]);
                    s.soft_threshold(&t, Some(&h), SoftOptions { max_iter, atol, eps: Some(1e-8), method }).unwrap();
                    let out = p.data().clone();
                    out
                };
                let got = run(Method::Bisection);
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                        "{shape:?} {block:?} trial {trial} max_iter {max_iter} atol {atol}: element {i}: {g} vs {w}"
                    );
                }
                let newton = run(Method::Newton);
                for (i, (g, w)) in newton.iter().zip(&want).enumerate() {
                    let exact = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
                    let close = (max_iter >= 20 || atol == 0.0 && max_iter > 0)
                        && *g != 0.0
                        && *w != 0.0
                        && ((g - w).abs() as f64) <= 1e-5 + 1e-3 * (w.abs() as f64);
                    // Below 20 steps the bisection has not converged: only NaNs and zeros agree.
                    let loose = max_iter > 0 && max_iter < 20 && !g.is_nan() && !w.is_nan() && *g != 0.0 && *w != 0.0;
                    assert!(
                        exact || close || loose,
                        "newton {shape:?} {block:?} trial {trial} max_iter {max_iter} atol {atol}: element {i}: {g} vs bisection {w}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 6 * 4 * 6);
}
