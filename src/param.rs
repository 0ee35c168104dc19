//! `Param`: a weight tensor owned by the library (in wasm linear memory when compiled to wasm).
//!
//! Views, block specs and scopes hold a cheap handle (`Rc`) to the same storage, so every
//! in-place operation writes through to the one buffer that JS sees as a `Float32Array`.
//! The buffer is allocated once and never resized, so its address stays valid for JS views
//! until the param is freed.

use crate::bail;
use crate::error::{Error, ErrorKind, Result};
use std::cell::{Ref, RefCell, RefMut};
use std::rc::Rc;

#[derive(Debug)]
struct Inner {
    data: RefCell<Vec<f32>>,
    shape: Vec<usize>,
}

/// A shared handle to a contiguous row-major f32 tensor.
#[derive(Debug, Clone)]
pub struct Param(Rc<Inner>);

impl Param {
    /// Takes ownership of `data`, which must hold `prod(shape)` elements.
    pub fn new(data: Vec<f32>, shape: &[usize]) -> Result<Param> {
        let n = checked_numel(shape)?;
        if n != data.len() {
            return Err(Error::length_mismatch("Param data", shape, n, data.len()));
        }
        Ok(Param(Rc::new(Inner { data: RefCell::new(data), shape: shape.to_vec() })))
    }

    /// Copies `data` into fresh storage, reporting an allocation failure as an error.
    pub fn from_slice(data: &[f32], shape: &[usize]) -> Result<Param> {
        let mut v = try_alloc(data.len(), 0.0)?;
        v.copy_from_slice(data);
        Param::new(v, shape)
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    pub fn numel(&self) -> usize {
        self.0.shape.iter().product()
    }

    pub fn data(&self) -> Ref<'_, Vec<f32>> {
        self.0.data.borrow()
    }

    pub fn data_mut(&self) -> RefMut<'_, Vec<f32>> {
        self.0.data.borrow_mut()
    }

    /// Refuses a write while the storage is borrowed by a running operation (possible only
    /// from a progress callback that calls back into the library): `reentrant_call`, never a
    /// `RefCell` panic.
    pub fn check_not_busy(&self) -> Result<()> {
        if self.0.data.try_borrow_mut().is_err() {
            bail!(ReentrantCall, "the param {:?} is in use by a running operation (a call from a progress callback?); retry after it returns", self.0.shape);
        }
        Ok(())
    }

    /// Address of the first element (for zero-copy `Float32Array` views from JS).
    pub fn as_ptr(&self) -> *const f32 {
        self.0.data.borrow().as_ptr()
    }

    /// True when both handles share one storage.
    pub fn same_storage(&self, other: &Param) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// `prod(shape)` with overflow reported as an error rather than a wrap-around. The product of
/// the non-zero sizes must fit too (an empty `[0, 2^40, 2^40]` still has row-major strides that
/// would overflow).
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    let overflow = || Error::new(ErrorKind::OutOfMemory, format!("shape {shape:?} has more elements than fit in memory"));
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s.max(1))).ok_or_else(overflow)?;
    shape.iter().try_fold(1usize, |acc, &s| acc.checked_mul(s)).ok_or_else(overflow)
}

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
