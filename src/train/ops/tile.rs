//! Tile: the input repeated along each axis (`repeats[a]` copies of axis `a`). A separable index
//! map (output index `o` of axis `a` reads input index `o mod d`), so its backward is the map's
//! scatter-add: every copy's gradient summed back onto the element it copied.

use super::{fin, iin_opt, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::train::gather::SepMap;
use crate::train::tensor::{strides, Tensor, Value, MAX_ELEMS};

pub struct Tile;

fn map(ins: &[Option<&Value>], x: &Tensor) -> Result<SepMap> {
    let reps = iin_opt(ins, 1, "Tile")?.ok_or_else(|| Error::new(ErrorKind::InvalidArguments, "Tile: input 1 (repeats) is missing"))?.data;
    if reps.len() != x.rank() || reps.iter().any(|&r| r < 0) {
        return Err(Error::new(ErrorKind::ShapeMismatch, format!("Tile: repeats {reps:?} for an input of shape {:?}", x.shape)));
    }
    let out: Option<usize> = x.shape.iter().zip(&reps).try_fold(1usize, |n, (&d, &r)| n.checked_mul(d)?.checked_mul(r as usize));
    if out.is_none_or(|n| n > MAX_ELEMS) {
        return Err(Error::new(ErrorKind::OutOfMemory, format!("Tile: {:?} repeated {reps:?} is too large", x.shape)));
    }
    let st = strides(&x.shape);
    let maps: Vec<Vec<Option<usize>>> =
        x.shape.iter().zip(&reps).zip(&st).map(|((&d, &r), &s)| (0..d * r as usize).map(|o| Some((o % d) * s)).collect()).collect();
    Ok(SepMap { out_shape: maps.iter().map(|m| m.len()).collect(), maps })
}

impl Kernel for Tile {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let x = fin(ins, 0, "Tile")?;
        Ok(vec![Value::F(map(ins, x)?.gather(x, 0.0)?)])
    }

    fn backward(&self, ins: &[Option<&Value>], _o: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let x = fin(ins, 0, "Tile")?;
        let mut dx = Tensor::zeros(&x.shape)?;
        if let Some(g) = gouts.first().copied().flatten() {
            map(ins, x)?.scatter_add(g, &mut dx);
        }
        Ok(vec![Some(dx), None])
    }
}
