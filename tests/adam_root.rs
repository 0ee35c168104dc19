//! The two root finders of the Adam-conditioned soft threshold (`method: 'newton'`, the default,
//! and `'bisection'`, the seed's loop) against the exact root on random blocks: `mu` solving
//! `mu ||H x0 / (H + mu)|| = t` found in f64 by bisection to machine precision.
//!
//! Both methods return the seed's bisection iterate, so with the default 20 iterations the
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
