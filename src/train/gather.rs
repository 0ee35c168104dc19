//! Separable index maps: an output element reads the input at the sum of one offset per output
//! axis, or a fill value where any axis maps outside. Transpose, Slice, Pad, Split, Concat and
//! nearest Resize are all such maps; their backward is the matching scatter-add.

use super::tensor::{numel, Tensor};
use crate::core::error::Result;

/// Per output axis, the input offset each index contributes (`None`: outside the input).
pub struct SepMap {
    pub out_shape: Vec<usize>,
    pub maps: Vec<Vec<Option<usize>>>,
}

impl SepMap {
    /// Calls `f(out_index, Some(in_offset) | None)` in row-major output order.
    fn walk(&self, mut f: impl FnMut(usize, Option<usize>)) {
        let r = self.out_shape.len();
        if r == 0 {
            return f(0, Some(0));
        }
        if self.out_shape.contains(&0) {
            return;
        }
        let mut idx = vec![0usize; r];
        let mut o = 0;
        loop {
            // offset of the outer axes
            let mut base = Some(0usize);
            for (a, &i) in idx.iter().enumerate().take(r - 1) {
                base = match (base, self.maps[a][i]) {
                    (Some(b), Some(c)) => Some(b + c),
                    _ => None,
                };
            }
            for m in &self.maps[r - 1] {
                f(o, base.and_then(|b| m.map(|c| b + c)));
                o += 1;
            }
            let mut ax = r - 1;
            loop {
                if ax == 0 {
                    return;
                }
                ax -= 1;
                idx[ax] += 1;
                if idx[ax] < self.out_shape[ax] {
                    break;
                }
                idx[ax] = 0;
            }
        }
    }

    pub fn gather(&self, src: &Tensor, fill: f32) -> Result<Tensor> {
        let mut y = Tensor::zeros(&self.out_shape)?;
        self.walk(|o, i| y.data[o] = i.map_or(fill, |i| src.data[i]));
        Ok(y)
    }

    /// `dst[in] += g[out]` for every mapped element.
    pub fn scatter_add(&self, g: &Tensor, dst: &mut Tensor) {
        self.walk(|o, i| {
            if let Some(i) = i {
                dst.data[i] += g.data[o]
            }
        });
    }

    /// The plain map of a whole input axis range `start..start+len` with stride `s`.
    pub fn axis(start: usize, len: usize, stride: usize) -> Vec<Option<usize>> {
        (0..len).map(|k| Some((start + k) * stride)).collect()
    }

    pub fn numel(&self) -> Result<usize> {
        numel(&self.out_shape)
    }
}
