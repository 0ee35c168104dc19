//! An independent f64 reference: direct-loop convolutions, ReLU and the mean, for central
//! finite differences of the loss w.r.t. every weight and bias.

use crate::net::NetSpec;

fn forward(spec: &NetSpec, x: &[f64], ws: &[Vec<f64>], bs: &[Vec<f64>]) -> f64 {
    let [n, _, mut h, mut w] = spec.input;
    let mut cur = x.to_vec();
    for (li, l) in spec.layers.iter().enumerate() {
        let oh = (h + 2 * l.pad - l.k) / l.stride + 1;
        let ow = (w + 2 * l.pad - l.k) / l.stride + 1;
        let (cg, og) = (l.cin / l.group, l.cout / l.group);
        let mut out = vec![0.0; n * l.cout * oh * ow];
        for b in 0..n {
            for co in 0..l.cout {
                let g = co / og;
                for oy in 0..oh {
                    for ox in 0..ow {
                        let mut s = bs[li][co];
                        for ci in 0..cg {
                            for ky in 0..l.k {
                                for kx in 0..l.k {
                                    let iy = (oy * l.stride + ky) as isize - l.pad as isize;
                                    let ix = (ox * l.stride + kx) as isize - l.pad as isize;
                                    if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                                        continue;
                                    }
                                    let xv = cur[((b * l.cin + g * cg + ci) * h + iy as usize) * w + ix as usize];
                                    s += xv * ws[li][((co * cg + ci) * l.k + ky) * l.k + kx];
                                }
                            }
                        }
                        out[((b * l.cout + co) * oh + oy) * ow + ox] = if l.relu { s.max(0.0) } else { s };
                    }
                }
            }
        }
        cur = out;
        (h, w) = (oh, ow);
    }
    cur.iter().sum::<f64>() / cur.len() as f64
}

/// Central differences (step `eps`) of the mean loss w.r.t. every weight and bias.
pub fn finite_differences(spec: &NetSpec, x: &[f32], ws: &[Vec<f32>], bs: &[Vec<f32>], eps: f64) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let x: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut w: Vec<Vec<f64>> = ws.iter().map(|v| v.iter().map(|&a| a as f64).collect()).collect();
    let mut b: Vec<Vec<f64>> = bs.iter().map(|v| v.iter().map(|&a| a as f64).collect()).collect();
    let mut gw = Vec::new();
    for li in 0..w.len() {
        let mut g = Vec::new();
        for i in 0..w[li].len() {
            let v = w[li][i];
            w[li][i] = v + eps;
            let p = forward(spec, &x, &w, &b);
            w[li][i] = v - eps;
            let m = forward(spec, &x, &w, &b);
            w[li][i] = v;
            g.push((p - m) / (2.0 * eps));
        }
        gw.push(g);
    }
    let mut gb = Vec::new();
    for li in 0..b.len() {
        let mut g = Vec::new();
        for i in 0..b[li].len() {
            let v = b[li][i];
            b[li][i] = v + eps;
            let p = forward(spec, &x, &w, &b);
            b[li][i] = v - eps;
            let m = forward(spec, &x, &w, &b);
            b[li][i] = v;
            g.push((p - m) / (2.0 * eps));
        }
        gb.push(g);
    }
    (gw, gb)
}

/// Largest `|a - r| / max(|r|, floor)` over all entries.
pub fn max_rel_err(a: &[Vec<f32>], r: &[Vec<f64>], floor: f64) -> f64 {
    let mut e: f64 = 0.0;
    for (x, y) in a.iter().zip(r) {
        for (&p, &q) in x.iter().zip(y) {
            e = e.max((p as f64 - q).abs() / q.abs().max(floor));
        }
    }
    e
}
