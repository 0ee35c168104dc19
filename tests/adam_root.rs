//! The two root finders of the Adam-conditioned soft threshold (`method: 'newton'`, the default,
//! and `'bisection'`, the defining loop of docs/API.md, "The soft threshold") against the exact root on random blocks: `mu` solving
//! `mu ||H x0 / (H + mu)|| = t` found in f64 by bisection to machine precision.
//!
//! Both methods return the defining bisection's iterate, so with the default 20 iterations the
//! Newton result must be as close to the exact prox as the bisection's (up to float32 rounding of
//! the root, `eps32 ||H x0|| / D` relative, D = ||H x0|| - t), and with 60 iterations (atol 0)
//! both must reach the root itself to that resolution. Unknown methods are refused.
#![cfg(not(target_arch = "wasm32"))]

use sparsekit_wasm::{BlockSpec, ErrorKind, Method, Param, SoftOptions, View};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The exact root in f64 (the bisection on `[0, t max H / D]` run to machine precision).
fn exact_mu(x: &[f32], h: &[f32], t: f64) -> f64 {
    let a: Vec<f64> = x.iter().zip(h).map(|(&x, &h)| f64::from(x) * f64::from(h)).collect();
    let zeta = |mu: f64| mu * a.iter().zip(h).map(|(a, &h)| (a / (f64::from(h) + mu)).powi(2)).sum::<f64>().sqrt();
    let norm = a.iter().map(|a| a * a).sum::<f64>().sqrt();
    let (mut lo, mut hi) = (0.0, t * h.iter().map(|&h| f64::from(h)).fold(0.0, f64::max) / (norm - t) * 2.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if zeta(mid) < t {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn run(x: &[f32], h: &[f32], shape: [usize; 2], block: [usize; 2], t: &[f32], max_iter: usize, method: Method) -> Vec<f32> {
    let p = Param::from_slice(x, &shape).unwrap();
    let s = BlockSpec::new(View::from_param(&p), &[block[0] as i64, block[1] as i64], None).unwrap();
    s.soft_threshold(t, Some(h), SoftOptions { max_iter, atol: 0.0, method, ..SoftOptions::default() }).unwrap();
    let out = p.data().clone();
    out
}

#[test]
fn both_methods_reach_the_exact_root_on_random_blocks() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut searched, mut dead) = (0, 0);
    for (shape, block) in [([16, 32], [4, 4]), ([15, 20], [3, 5]), ([8, 64], [1, 16]), ([64, 64], [32, 32]), ([12, 12], [2, 6])] {
        for conditioner in 0..3 {
            let n = shape[0] * shape[1];
            let x: Vec<f32> = (0..n).map(|_| (2.0 * rng.next() - 1.0) as f32).collect();
            // Adam-like spreads: uniform [0.5, 1.5], log-uniform over 4 decades, nearly constant.
            let h: Vec<f32> = (0..n)
                .map(|_| match conditioner {
                    0 => 0.5 + rng.next(),
                    1 => 10f64.powf(-4.0 * rng.next()),
                    _ => 1.0 + 1e-3 * rng.next(),
                } as f32)
                .collect();
            let (gc, bn) = (shape[1] / block[1], block[0] * block[1]);
            let nb = n / bn;
            let elems = |b: usize| -> Vec<usize> {
                let (r0, c0) = ((b / gc) * block[0], (b % gc) * block[1]);
                (0..bn).map(|i| (r0 + i / block[1]) * shape[1] + c0 + i % block[1]).collect()
            };
            let norms: Vec<f64> =
                (0..nb).map(|b| elems(b).iter().map(|&e| (f64::from(x[e]) * f64::from(h[e])).powi(2)).sum::<f64>().sqrt()).collect();
            // Thresholds from 5 % to 120 % of each block's ||H x0||: survivors and dead blocks.
            let t: Vec<f32> = norms.iter().map(|&nrm| (nrm * (0.05 + 1.15 * rng.next())) as f32).collect();
            for max_iter in [20, 60] {
                let newton = run(&x, &h, shape, block, &t, max_iter, Method::Newton);
                let bisection = run(&x, &h, shape, block, &t, max_iter, Method::Bisection);
                for b in 0..nb {
                    let els = elems(b);
                    let tb = f64::from(t[b]);
                    if norms[b] <= tb * (1.0 + 1e-6) {
                        dead += 1;
                        assert!(els.iter().all(|&e| newton[e] == 0.0 && bisection[e] == 0.0), "block {b}: dead block not zeroed");
                        continue;
                    }
                    if norms[b] < tb * (1.0 + 1e-4) {
                        continue; // D at float32 resolution: the root itself is not determined
                    }
                    searched += 1;
                    let (xb, hb): (Vec<f32>, Vec<f32>) = els.iter().map(|&e| (x[e], h[e])).unzip();
                    let mu = exact_mu(&xb, &hb, tb);
                    let exact: Vec<f64> = els.iter().map(|&e| f64::from(h[e]) * f64::from(x[e]) / (f64::from(h[e]) + mu)).collect();
                    let scale = exact.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                    let err = |got: &[f32]| els.iter().zip(&exact).map(|(&e, w)| (f64::from(got[e]) - w).abs()).fold(0.0, f64::max);
                    let (en, eb) = (err(&newton), err(&bisection));
                    // float32 resolution of the root, relative: eps32 ||H x0|| / D (a few ulps).
                    let resolution = 16.0 * f64::from(f32::EPSILON) * norms[b] / (norms[b] - tb) * scale;
                    let what =
                        format!("{shape:?} {block:?} H#{conditioner} max_iter {max_iter} block {b}: newton {en:e}, bisection {eb:e}");
                    assert!(en <= eb + resolution, "{what}: Newton farther from the exact prox than the bisection");
                    if max_iter == 60 {
                        assert!(en <= resolution && eb <= resolution, "{what}: not at the root (resolution {resolution:e})");
                    }
                    // The conformance tolerance of conditioned soft thresholds, between the methods.
                    for &e in &els {
                        let (g, w) = (f64::from(newton[e]), f64::from(bisection[e]));
                        assert!((g - w).abs() <= 1e-5 + 1e-3 * w.abs(), "{what}: element {e}: {g} vs {w}");
                    }
                }
            }
        }
    }
    assert!(searched > 500 && dead > 50, "searched {searched}, dead {dead}");
}

#[test]
fn unknown_method_is_invalid_arguments() {
    for bad in ["Newton", "secant", ""] {
        let e = SoftOptions::new(None, None, None, Some(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArguments, "{bad:?}");
    }
    assert_eq!(SoftOptions::new(None, None, None, Some("bisection")).unwrap().method, Method::Bisection);
    assert_eq!(SoftOptions::new(None, None, None, None).unwrap().method, Method::Newton);
}

/// The certified stop of the Newton search ([`kernels::scalar::certified_root`]): a search that
/// stops after its first evaluation (certified, or already within `tol`) has its root within
/// `tol` of the exact one, on conditioners of every spread; and on Adam-like conditioners
/// (uniform in [0.5, 1.5), the bench's) the start from the quad's moments is close enough that
/// almost every search stops there.
#[test]
fn one_evaluation_stops_are_within_tolerance() {
    use sparsekit_wasm::test_support::{scalar, RootLanes, RootStart};
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let c = RootStart { eps: f32::EPSILON, coupling: false, halvings: 0.5f32.powi(21), atol: 0.0 };
    for spread in 0..4 {
        let (mut searched, mut first) = (0usize, 0usize);
        for n in [4usize, 16, 64] {
            for _ in 0..600 {
                let x: Vec<f32> = (0..4 * n).map(|_| (2.0 * rng.next() - 1.0) as f32).collect();
                let h: Vec<f32> = (0..4 * n)
                    .map(|_| match spread {
                        0 => 0.5 + rng.next(),
                        1 => 10f64.powf(-4.0 * rng.next()),
                        2 => 1.0 + 1e-3 * rng.next(),
                        _ => [1e-3, 1.0][(rng.next() * 2.0) as usize],
                    } as f32)
                    .collect();
                let norm = |k: usize| (k * n..(k + 1) * n).map(|i| (f64::from(x[i]) * f64::from(h[i])).powi(2)).sum::<f64>().sqrt();
                let t: [f32; 4] = std::array::from_fn(|k| (norm(k) * (0.05 + 0.9 * rng.next())) as f32);
                let (mut hxt, mut ht) = (vec![0.0; 4 * n], vec![0.0; 4 * n]);
                scalar::prox_pack4(&x, &h, &mut hxt, &mut ht);
                let stats = scalar::prox_stats4(&hxt, &ht);
                let Some(start) = scalar::root_start4(&stats, t, &c) else { continue };
                let mut rl = RootLanes::quad(&start, t, &stats);
                while scalar::prox_root4(&hxt, &ht, &mut rl, 20) {}
                for (k, &tk) in t.iter().enumerate() {
                    searched += 1;
                    if rl.evals[k] != 1 {
                        continue;
                    }
                    first += 1;
                    let span = k * n..(k + 1) * n;
                    let exact = exact_mu(&x[span.clone()], &h[span], f64::from(tk));
                    let err = (f64::from(rl.mu[k]) - exact).abs();
                    // The f32 rounding of the evaluation is part of tol (its resolution term);
                    // a few ulps of mu on top for the root's own rounding.
                    let allowed = f64::from(rl.tol[k]) + 4.0 * f64::from(f32::EPSILON) * exact;
                    assert!(err <= allowed, "spread {spread} n {n} lane {k}: mu {} exact {exact:e} err {err:e} > {allowed:e}", rl.mu[k]);
                }
            }
        }
        assert!(searched > 2000, "spread {spread}: only {searched} searches");
        if spread == 0 {
            assert!(first * 100 >= searched * 90, "Adam-like spread: {first} of {searched} searches stopped after one evaluation");
        }
        eprintln!("spread {spread}: {first} of {searched} searches stopped after one evaluation");
    }
}
