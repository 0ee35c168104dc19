//! Aligning the grids of coupled members by axis orders: the aligned grid and each member's
//! index map. One implementation for `BlockCoupling` and `ScopeCoupling`.

use crate::bail;
use crate::core::alloc::try_collect;
use crate::core::error::{Error, ErrorKind, Result};
use crate::core::shape::{contiguous_strides, unravel};

/// Validates `order` as a permutation of `0..n` (negative axes count from the end).
pub fn normalize_order(order: &[i64], n: usize, what: &str) -> Result<Vec<usize>> {
    let bad = || Error::new(ErrorKind::InvalidOrders, format!("{what}: order {order:?} is not a permutation of 0..{n}"));
    if order.len() != n {
        return Err(bad());
    }
    let mut seen = vec![false; n];
    let mut out = Vec::with_capacity(n);
    for &o in order {
        let o = if o < 0 { o + n as i64 } else { o };
        if o < 0 || o >= n as i64 || seen[o as usize] {
            return Err(bad());
        }
        seen[o as usize] = true;
        out.push(o as usize);
    }
    Ok(out)
}

/// For each aligned flat index, the flat index in `grid` (the un-permuted grid) it comes from,
/// where `aligned[d] = grid[order[d]]`.
pub fn permutation_map(grid: &[usize], order: &[usize]) -> Result<Vec<usize>> {
    let aligned: Vec<usize> = order.iter().map(|&o| grid[o]).collect();
    let gstride = contiguous_strides(grid);
    let n: usize = aligned.iter().product();
    let mut idx = vec![0usize; aligned.len()];
    try_collect((0..n).map(|a| {
        unravel(a, &aligned, &mut idx);
        idx.iter().zip(order).map(|(&i, &o)| i * gstride[o]).sum()
    }))
}

/// Grids of coupled members aligned by `orders`: the normalised orders, the aligned grid (the
/// first member's grid permuted by its order) and each member's index map (see
/// [`permutation_map`]). Shared by [`BlockCoupling`] and `ScopeCoupling`.
pub(crate) struct Alignment {
    pub orders: Vec<Vec<usize>>,
    pub grid: Vec<usize>,
    pub maps: Vec<Vec<usize>>,
}

impl Alignment {
    /// `orders` empty means the identity for every member; `labels` name the members in errors.
    pub fn new(orders: &[Vec<i64>], grids: &[&[usize]], labels: &[String], kind: &str) -> Result<Alignment> {
        let orders: Vec<Vec<usize>> = if orders.is_empty() {
            grids.iter().map(|g| (0..g.len()).collect()).collect()
        } else {
            if orders.len() != grids.len() {
                bail!(InvalidOrders, "orders must match number of members: {} orders for {} {kind} grids", orders.len(), grids.len());
            }
            orders
                .iter()
                .zip(grids)
                .enumerate()
                .map(|(i, (o, g))| normalize_order(o, g.len(), &format!("orders[{i}]")))
                .collect::<Result<_>>()?
        };
        let grid: Vec<usize> = orders[0].iter().map(|&o| grids[0][o]).collect();
        for ((g, o), label) in grids.iter().zip(&orders).zip(labels) {
            let permuted: Vec<usize> = o.iter().map(|&i| g[i]).collect();
            if permuted != grid {
                bail!(IncompatibleCoupling, "Incompatible {kind} grid shapes after order: {permuted:?} vs {grid:?} ({label})");
            }
        }
        let maps = grids.iter().zip(&orders).map(|(g, o)| permutation_map(g, o)).collect::<Result<_>>()?;
        Ok(Alignment { orders, grid, maps })
    }
}
