//! Grid values broadcast back to one value per element.

use super::Tiling;
use crate::core::alloc::try_alloc;
use crate::core::error::Result;
use crate::layout::strided::Strided;

impl Tiling {
    /// Grid-shaped (row-major) values broadcast to one value per element of the layout's
    /// shape, row-major.
    pub fn broadcast(&self, grid_values: &[f32]) -> Result<Vec<f32>> {
        let shape: Vec<usize> = self.grid.iter().zip(&self.block).map(|(g, b)| g * b).collect();
        let n: usize = shape.iter().product();
        let mut out = try_alloc(n, 0.0f32)?;
        let c = Strided::contiguous(&shape);
        let mut i = 0;
        self.walk_rows(&c, &[], |offs, gbase| {
            let _ = offs;
            let (k, chunk, _, step) = self.row_params(&c);
            for j in 0..k {
                out[i + j] = grid_values[gbase + (j / chunk) * step];
            }
            i += k;
        });
        Ok(out)
    }
}
