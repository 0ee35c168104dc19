//! `Param`: a weight tensor owned by the library (in wasm linear memory when compiled to wasm).
//!
//! Views, block specs and scopes hold a cheap handle (`Rc`) to the same storage, so every
//! in-place operation writes through to the one buffer that JS sees as a `Float32Array`.
//! The buffer is allocated once and never resized, so its address stays valid for JS views
//! until the param is freed.

use crate::bail;
use crate::core::alloc::try_alloc;
use crate::core::error::{Error, Result};
use crate::core::shape::checked_numel;
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
            bail!(
                ReentrantCall,
                "the param {:?} is in use by a running operation (a call from a progress callback?); retry after it returns",
                self.0.shape
            );
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
