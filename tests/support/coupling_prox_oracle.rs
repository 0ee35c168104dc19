//! An independent float64 oracle for the Adam-conditioned soft threshold of a BlockCoupling (the
//! case README's definition, step for step), so that the one case the API must accept although
//! its case file expects an error (conditioners in param layout, pub-0583) is compared by numbers.
//! The JS twin is `coupling-prox-oracle.mjs`.

/// One spec of the coupling: its param (param layout), view geometry and block shape as given.
pub struct OracleSpec {
    pub param: Vec<f64>,
    pub view_shape: Vec<usize>,
    pub view_stride: Vec<usize>,
    pub block_shape: Vec<i64>,
}

/// Every multi-index of `shape`, row-major.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|i| {
            let mut idx = vec![0; shape.len()];
            let mut r = i;
            for d in (0..shape.len()).rev() {
                idx[d] = r % shape[d];
                r /= shape[d];
            }
            idx
        })
        .collect()
}

/// The params after `soft_threshold(thresholds, conditioners, max_iter, atol, eps)` on the
/// coupling; `conditioners` are in param layout, `orders` empty for the identity. Elements outside
/// the views keep their values.
pub fn coupling_adam_prox(
    specs: &[OracleSpec],
    orders: &[Vec<usize>],
    thresholds: &[f64],
    conditioners: &[Vec<f64>],
    max_iter: usize,
    atol: f64,
    eps: f64,
) -> Vec<Vec<f64>> {
    let ndim = specs[0].view_shape.len();
    let ords: Vec<Vec<usize>> = if orders.is_empty() { vec![(0..ndim).collect(); specs.len()] } else { orders.to_vec() };
    let blocks_of: Vec<Vec<usize>> = specs
        .iter()
        .map(|s| {
            if s.block_shape.is_empty() {
                vec![1; ndim]
            } else {
                s.block_shape.iter().zip(&s.view_shape).map(|(&b, &n)| if b <= 0 { n } else { b as usize }).collect()
            }
        })
        .collect();
    let grid0: Vec<usize> = specs[0].view_shape.iter().zip(&blocks_of[0]).map(|(n, b)| n / b).collect();
    let aligned: Vec<usize> = ords[0].iter().map(|&k| grid0[k]).collect();
    // (spec, param offset) of every element of every joint block, aligned row-major, spec after spec.
    let blocks: Vec<Vec<(usize, usize)>> = indices(&aligned)
        .iter()
        .map(|a| {
            let mut els = Vec::new();
            for (i, s) in specs.iter().enumerate() {
                let mut b = vec![0; ndim];
                for (j, &k) in ords[i].iter().enumerate() {
                    b[k] = a[j];
                }
                for e in indices(&blocks_of[i]) {
                    let off = (0..ndim).map(|d| (b[d] * blocks_of[i][d] + e[d]) * s.view_stride[d]).sum();
                    els.push((i, off));
                }
            }
            els
        })
        .collect();
    let x0 = |&(i, o): &(usize, usize)| specs[i].param[o];
    let h = |&(i, o): &(usize, usize)| conditioners[i][o];
    let norm = |blk: &[(usize, usize)], f: &dyn Fn(&(usize, usize)) -> f64| blk.iter().map(|e| f(e).powi(2)).sum::<f64>().sqrt();
    let d: Vec<f64> = blocks.iter().zip(thresholds).map(|(b, &t)| norm(b, &|e| h(e) * x0(e)) - t).collect();
    let hmin = |b: &[(usize, usize)]| b.iter().map(h).fold(f64::INFINITY, f64::min);
    let hmax = |b: &[(usize, usize)]| b.iter().map(h).fold(f64::NEG_INFINITY, f64::max);
    let mut lo: Vec<f64> = (0..blocks.len()).map(|g| (thresholds[g] * hmin(&blocks[g]) / d[g].max(eps)).max(0.0)).collect();
    let mut hi: Vec<f64> = (0..blocks.len()).map(|g| (thresholds[g] * hmax(&blocks[g]) / d[g].max(eps)).max(0.0)).collect();
    let mut mu: Vec<f64> = lo.iter().zip(&hi).map(|(l, h)| (l + h) / 2.0).collect();
    for _ in 0..max_iter {
        for g in 0..blocks.len() {
            let m = mu[g];
            let zeta = m * norm(&blocks[g], &|e| h(e) * x0(e) / (h(e) + m));
            if zeta < thresholds[g] {
                lo[g] = m;
            } else {
                hi[g] = m;
            }
            mu[g] = (lo[g] + hi[g]) / 2.0;
        }
        if lo.iter().zip(&hi).map(|(l, h)| (l - h).abs()).fold(0.0, f64::max) < atol {
            break;
        }
    }
    let mut out: Vec<Vec<f64>> = specs.iter().map(|s| s.param.clone()).collect();
    for (g, blk) in blocks.iter().enumerate() {
        let keep = if d[g] <= 0.0 { 0.0 } else { 1.0 };
        for e in blk {
            out[e.0][e.1] = x0(e) * h(e) / (h(e) + mu[g]) * keep;
        }
    }
    out
}
