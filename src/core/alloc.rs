//! Fallible allocation: sizes that callers control (shapes, counts, decoded headers) must give
//! `out_of_memory`, never an abort or a wasm trap.

use crate::bail;
use crate::core::error::Result;

/// Collects an exact-size iterator into fresh storage, returning `out_of_memory` instead of
/// aborting when the allocation does not fit.
pub fn try_collect<T>(it: impl ExactSizeIterator<Item = T>) -> Result<Vec<T>> {
    let mut v = Vec::new();
    let n = it.len();
    if v.try_reserve_exact(n).is_err() {
        bail!(OutOfMemory, "cannot allocate {n} elements ({} bytes)", n.saturating_mul(std::mem::size_of::<T>()));
    }
    v.extend(it);
    Ok(v)
}

/// Allocates `n` copies of `fill`, returning `out_of_memory` instead of aborting.
pub fn try_alloc<T: Clone>(n: usize, fill: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        bail!(OutOfMemory, "cannot allocate {n} elements ({} bytes)", n.saturating_mul(std::mem::size_of::<T>()));
    }
    v.resize(n, fill);
    Ok(v)
}

/// An empty vector with room for `n` elements, or `out_of_memory`.
pub fn try_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(n).is_err() {
        bail!(OutOfMemory, "cannot allocate {n} elements ({} bytes)", n.saturating_mul(std::mem::size_of::<T>()));
    }
    Ok(v)
}
