//! `Param` and `View` classes.

use super::convert::*;
use crate::block::{self as view, Param, View};
use crate::core::error::Error;
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct RawParam {
    pub(super) inner: Param,
}

#[wasm_bindgen]
impl RawParam {
    /// Copies `data` (row-major, `prod(shape)` long) into wasm memory.
    #[wasm_bindgen(constructor)]
    pub fn new(data: &[f32], shape: &[f64]) -> JsResult<RawParam> {
        let shape = sizes(shape, "Param shape").map_err(to_js)?;
        Ok(RawParam { inner: Param::from_slice(data, &shape).map_err(to_js)? })
    }
    /// Address of the data in wasm memory (for the live `Float32Array`).
    pub fn ptr(&self) -> usize {
        self.inner.as_ptr() as usize
    }
    #[allow(clippy::len_without_is_empty)] // a JS-facing element count, not a collection API
    pub fn len(&self) -> usize {
        self.inner.numel()
    }
    pub fn shape(&self) -> JsValue {
        shape_array(self.inner.shape())
    }
    #[wasm_bindgen(js_name = toArray)]
    pub fn to_array(&self) -> Float32Array {
        Float32Array::from(self.inner.data().as_slice())
    }
    /// Overwrites the weights (same length).
    #[wasm_bindgen(js_name = setData)]
    pub fn set_data(&self, data: &[f32]) -> JsResult<()> {
        self.inner.check_not_busy().map_err(to_js)?;
        let mut d = self.inner.data_mut();
        if d.len() != data.len() {
            return Err(to_js(Error::length_mismatch("Param.set", self.inner.shape(), d.len(), data.len())));
        }
        d.copy_from_slice(data);
        Ok(())
    }
}

#[wasm_bindgen]
pub struct RawView {
    pub(super) inner: View,
}

#[wasm_bindgen]
impl RawView {
    #[wasm_bindgen(constructor)]
    pub fn new(param: &RawParam, shape: &[f64], stride: &[f64]) -> JsResult<RawView> {
        let shape = ints(shape, "View shape").map_err(to_js)?;
        let stride = ints(stride, "View stride").map_err(to_js)?;
        Ok(RawView { inner: View::new(&param.inner, &shape, &stride).map_err(to_js)? })
    }
    #[wasm_bindgen(js_name = fromParam)]
    pub fn from_param(param: &RawParam) -> RawView {
        RawView { inner: View::from_param(&param.inner) }
    }
    pub fn param(&self) -> RawParam {
        RawParam { inner: self.inner.param().clone() }
    }
    pub fn shape(&self) -> JsValue {
        shape_array(self.inner.shape())
    }
    pub fn stride(&self) -> JsValue {
        shape_array(self.inner.stride())
    }
    pub fn cosize(&self) -> usize {
        self.inner.cosize()
    }
    pub fn numel(&self) -> usize {
        self.inner.numel()
    }
    pub fn values(&self) -> JsResult<Float32Array> {
        Ok(Float32Array::from(self.inner.values().map_err(to_js)?.as_slice()))
    }
    #[wasm_bindgen(js_name = linearOffset)]
    pub fn linear_offset(&self, idx: &[i32]) -> JsResult<Vec<i32>> {
        let idx: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        let off = self.inner.linear_offset(&idx).map_err(to_js)?;
        off.into_iter().map(|o| i32::try_from(o).map_err(|_| arg_err("offset exceeds Int32 range"))).collect()
    }
    #[wasm_bindgen(js_name = toParamRc)]
    pub fn to_param_rc(&self, idx: &[i32]) -> JsResult<JsValue> {
        let idx: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
        let (r, c) = self.inner.to_param_rc(&idx).map_err(to_js)?;
        let o = Object::new();
        let conv = |v: Vec<i64>| js_sys::Int32Array::from(v.iter().map(|&x| x as i32).collect::<Vec<_>>().as_slice());
        let _ = Reflect::set(&o, &"rows".into(), &conv(r));
        let _ = Reflect::set(&o, &"cols".into(), &conv(c));
        Ok(o.into())
    }
    #[wasm_bindgen(js_name = applyMultiplier)]
    pub fn apply_multiplier(&self, m: &[f32], block: &[f64]) -> JsResult<()> {
        let b = ints(block, "blockShape").map_err(to_js)?;
        self.inner.apply_multiplier(m, &b).map_err(to_js)
    }
    #[wasm_bindgen(js_name = applyMask)]
    pub fn apply_mask(&self, keep: &[u8], block: &[f64]) -> JsResult<()> {
        let b = ints(block, "blockShape").map_err(to_js)?;
        self.inner.apply_mask(keep, &b).map_err(to_js)
    }
    #[wasm_bindgen(js_name = blockViewOf)]
    pub fn block_view_of(t: &[f32], shape: &[f64], block: &[f64], reorder: bool, merge: bool) -> JsResult<JsValue> {
        let shape = sizes(shape, "shape").map_err(to_js)?;
        let block = ints(block, "blockShape").map_err(to_js)?;
        let (d, s) = view::block_view_of(t, &shape, &block, reorder, merge).map_err(to_js)?;
        Ok(shape_obj(Float32Array::from(d.as_slice()).into(), &s))
    }
    #[wasm_bindgen(js_name = broadcastBlockToElement)]
    pub fn broadcast_block_to_element(values: &[f32], grid: &[f64], block: &[f64], fake: bool) -> JsResult<JsValue> {
        let grid = sizes(grid, "gridShape").map_err(to_js)?;
        let block = sizes(block, "blockShape").map_err(to_js)?;
        let (d, s) = view::broadcast_block_to_element(values, &grid, &block, fake).map_err(to_js)?;
        Ok(shape_obj(Float32Array::from(d.as_slice()).into(), &s))
    }
}
