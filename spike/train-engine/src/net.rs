//! The measured network: a PaddleOCR-det-like block (MobileNetV3 style: a strided 3x3 stem, a
//! depthwise 3x3, a pointwise 1x1, a dense 3x3), each conv with bias, ReLU between, loss =
//! mean of the last activation. Same weights in both engines.

#[derive(Debug, Clone)]
pub struct Layer {
    pub cin: usize,
    pub cout: usize,
    pub k: usize,
    pub stride: usize,
    pub pad: usize,
    pub group: usize,
    pub relu: bool,
}

#[derive(Debug, Clone)]
pub struct NetSpec {
    pub input: [usize; 4],
    pub layers: Vec<Layer>,
}

impl NetSpec {
    pub fn det_block(n: usize, hw: usize) -> NetSpec {
        let l = |cin, cout, k, stride, pad, group, relu| Layer { cin, cout, k, stride, pad, group, relu };
        NetSpec {
            input: [n, 3, hw, hw],
            layers: vec![
                l(3, 16, 3, 2, 1, 1, true),
                l(16, 16, 3, 1, 1, 16, true),
                l(16, 32, 1, 1, 0, 1, true),
                l(32, 32, 3, 1, 1, 1, false),
            ],
        }
    }

    /// A tiny version for the finite-difference check (conv -> relu -> conv -> mean).
    pub fn tiny() -> NetSpec {
        let l = |cin, cout, k, stride, pad, group, relu| Layer { cin, cout, k, stride, pad, group, relu };
        NetSpec { input: [2, 2, 6, 6], layers: vec![l(2, 3, 3, 1, 1, 1, true), l(3, 2, 3, 2, 1, 1, false)] }
    }

    /// Multiply-adds of one forward pass.
    pub fn forward_macs(&self) -> f64 {
        let [n, _, mut h, mut w] = self.input;
        let mut macs = 0.0;
        for l in &self.layers {
            h = (h + 2 * l.pad - l.k) / l.stride + 1;
            w = (w + 2 * l.pad - l.k) / l.stride + 1;
            macs += (n * l.cout * h * w * (l.cin / l.group) * l.k * l.k) as f64;
        }
        macs
    }

    /// FLOPs of a training step: forward (2 per MAC) + backward (dX and dW, 2 x forward).
    pub fn step_flops(&self) -> f64 {
        6.0 * self.forward_macs()
    }

    /// Deterministic input, weights and biases (xorshift, uniform in [-a, a]).
    pub fn init(&self, seed: u64) -> (Vec<f32>, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let mut s = seed | 1;
        let mut r = move |a: f32| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * a
        };
        let x = (0..self.input.iter().product::<usize>()).map(|_| r(1.0)).collect();
        let mut ws = Vec::new();
        let mut bs = Vec::new();
        for l in &self.layers {
            let fan = (l.cin / l.group * l.k * l.k) as f32;
            ws.push((0..l.cout * l.cin / l.group * l.k * l.k).map(|_| r(1.0 / fan.sqrt())).collect());
            bs.push((0..l.cout).map(|_| r(0.1)).collect());
        }
        (x, ws, bs)
    }
}
