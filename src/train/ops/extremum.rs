//! Max and Min of one or more operands, element-wise with numpy broadcasting. The gradient
//! goes to the operand that was chosen, the first one on a tie (as `torch.max` along a
//! dimension picks one index), so the sum of the operands' gradients is the output gradient.

use super::select::bcast_index;
use super::{fin, gout0, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::tensor::{broadcast_shape, reduce_owned, Tensor, Value};

/// The output shape, each operand's index map, and per output element the operand chosen.
struct Choice {
    out: Vec<usize>,
    maps: Vec<Vec<usize>>,
    pick: Vec<usize>,
}

pub struct Extremum {
    max: bool,
}

impl Extremum {
    pub fn new(a: &Attrs) -> Result<Extremum> {
        Ok(Extremum { max: a.op == "Max" })
    }

    fn choose(&self, ins: &[Option<&Value>]) -> Result<Choice> {
        let op = if self.max { "Max" } else { "Min" };
        if ins.is_empty() {
            return Err(Error::new(ErrorKind::InvalidArguments, format!("{op}: no inputs")));
        }
        let ts = (0..ins.len()).map(|i| fin(ins, i, op)).collect::<Result<Vec<_>>>()?;
        let mut out = ts[0].shape.clone();
        for t in &ts[1..] {
            out = broadcast_shape(&out, &t.shape, op)?;
        }
        let maps: Vec<Vec<usize>> = ts.iter().map(|t| bcast_index(&t.shape, &out)).collect();
        let n = maps[0].len();
        let mut pick = vec![0usize; n];
        for (o, p) in pick.iter_mut().enumerate() {
            let mut best = ts[0].data[maps[0][o]];
            for k in 1..ts.len() {
                let v = ts[k].data[maps[k][o]];
                // NaN propagates (onnxruntime's Max / Min return NaN when an operand is)
                let better = if self.max { v > best } else { v < best } || (v.is_nan() && !best.is_nan());
                if better {
                    best = v;
                    *p = k;
                }
            }
        }
        Ok(Choice { out, maps, pick })
    }
}

impl Kernel for Extremum {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let Choice { out, maps, pick } = self.choose(ins)?;
        let mut y = Tensor::zeros(&out)?;
        for (o, v) in y.data.iter_mut().enumerate() {
            let k = pick[o];
            *v = fin(ins, k, "Max/Min")?.data[maps[k][o]];
        }
        Ok(vec![Value::F(y)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let Choice { out, pick, .. } = self.choose(ins)?;
        let g = gout0(gouts, &out)?;
        let _ = outs;
        (0..ins.len())
            .map(|k| {
                let mut gk = g.clone();
                gk.data.iter_mut().zip(&pick).for_each(|(v, &p)| {
                    if p != k {
                        *v = 0.0;
                    }
                });
                Ok(Some(reduce_owned(gk, &fin(ins, k, "Max/Min")?.shape)?))
            })
            .collect()
    }
}
