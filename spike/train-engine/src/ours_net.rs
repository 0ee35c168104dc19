//! (a) The network on our own engine: the same layers as an ONNX-style node list run by
//! `sparsekit_wasm::train::Graph` (reverse-mode tape over NCHW f32, convs as im2col + the
//! kernels layer's GEMM).

use crate::net::NetSpec;
use sparsekit_wasm::train::{Attr, Graph, GraphSpec, InitSpec, NodeSpec, Tensor};

pub struct OursNet {
    graph: Graph,
    x: Tensor,
}

impl OursNet {
    pub fn new(spec: &NetSpec, x: &[f32], ws: &[Vec<f32>], bs: &[Vec<f32>]) -> OursNet {
        let mut nodes = Vec::new();
        let mut inits = Vec::new();
        let mut cur = "x".to_string();
        for (i, l) in spec.layers.iter().enumerate() {
            let (w, b, y) = (format!("w{i}"), format!("b{i}"), format!("c{i}"));
            let p = l.pad as i64;
            let attrs = [
                ("kernel_shape", Attr::Ints(vec![l.k as i64; 2])),
                ("strides", Attr::Ints(vec![l.stride as i64; 2])),
                ("pads", Attr::Ints(vec![p; 4])),
                ("group", Attr::Int(l.group as i64)),
            ];
            nodes.push(NodeSpec::new("Conv", &[&cur, &w, &b], &[&y], &attrs));
            inits.push(InitSpec { name: w, dims: vec![l.cout, l.cin / l.group, l.k, l.k], floats: Some(ws[i].clone()), ints: None });
            inits.push(InitSpec { name: b, dims: vec![l.cout], floats: Some(bs[i].clone()), ints: None });
            cur = y;
            if l.relu {
                let r = format!("r{i}");
                nodes.push(NodeSpec::new("Relu", &[&cur], &[&r], &[]));
                cur = r;
            }
        }
        let gs = GraphSpec { nodes, inputs: vec!["x".into()], outputs: vec![cur], frozen: vec![] };
        let graph = Graph::new(&gs, inits).expect("graph builds");
        OursNet { graph, x: Tensor::new(spec.input.to_vec(), x.to_vec()).unwrap() }
    }

    /// Loss (mean of the output) and the gradients of the weights and biases, in layer order.
    pub fn step(&mut self) -> (f32, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let y = self.graph.forward(vec![self.x.clone()]).unwrap().remove(0);
        let n = y.len() as f64;
        let loss = (y.data.iter().map(|&v| v as f64).sum::<f64>() / n) as f32;
        let g = Tensor { shape: y.shape.clone(), data: vec![(1.0 / n) as f32; y.len()] };
        let grads = self.graph.backward(vec![g]).unwrap();
        let (mut ws, mut bs) = (Vec::new(), Vec::new());
        for (i, g) in grads.into_iter().enumerate() {
            if i % 2 == 0 {
                ws.push(g.data)
            } else {
                bs.push(g.data)
            }
        }
        (loss, ws, bs)
    }
}
