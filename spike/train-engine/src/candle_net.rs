//! (b) The same network and loss on candle-core's CPU backend and its autodiff.

use crate::net::{Layer, NetSpec};
use candle_core::{Device, Tensor, Var};

pub struct CandleNet {
    spec: NetSpec,
    x: Tensor,
    ws: Vec<Var>,
    bs: Vec<Var>,
}

impl CandleNet {
    pub fn new(spec: &NetSpec, x: &[f32], ws: &[Vec<f32>], bs: &[Vec<f32>]) -> CandleNet {
        let dev = Device::Cpu;
        let [n, c, h, w] = spec.input;
        let x = Tensor::from_slice(x, (n, c, h, w), &dev).unwrap();
        let mut wv = Vec::new();
        let mut bv = Vec::new();
        for (i, l) in spec.layers.iter().enumerate() {
            wv.push(Var::from_tensor(&Tensor::from_slice(&ws[i], (l.cout, l.cin / l.group, l.k, l.k), &dev).unwrap()).unwrap());
            bv.push(Var::from_tensor(&Tensor::from_slice(&bs[i], (1, l.cout, 1, 1), &dev).unwrap()).unwrap());
        }
        CandleNet { spec: spec.clone(), x, ws: wv, bs: bv }
    }

    fn layer(&self, h: &Tensor, i: usize, l: &Layer) -> Tensor {
        let y = h.conv2d(self.ws[i].as_tensor(), l.pad, l.stride, 1, l.group).unwrap();
        let y = y.broadcast_add(self.bs[i].as_tensor()).unwrap();
        if l.relu {
            y.relu().unwrap()
        } else {
            y
        }
    }

    /// Loss and the gradients of every weight and bias (flattened).
    pub fn step(&self) -> (f32, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let mut h = self.x.clone();
        for (i, l) in self.spec.layers.iter().enumerate() {
            h = self.layer(&h, i, l);
        }
        let loss = h.mean_all().unwrap();
        let grads = loss.backward().unwrap();
        let flat = |v: &Var| grads.get(v.as_tensor()).unwrap().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        (loss.to_scalar::<f32>().unwrap(), self.ws.iter().map(flat).collect(), self.bs.iter().map(flat).collect())
    }
}
