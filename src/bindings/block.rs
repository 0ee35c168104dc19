//! `BlockSpec` and `BlockCoupling` classes.

use super::convert::*;
use super::param::RawView;
use crate::block::{BlockCoupling, BlockSpec, Norm};
use crate::core::error::Error;
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

pub(super) fn norm_p(p: Option<f64>) -> Result<Norm, Error> {
    Norm::from_p(p.unwrap_or(2.0))
}

#[wasm_bindgen]
pub struct RawBlockSpec {
    pub(super) inner: BlockSpec,
}

#[wasm_bindgen]
impl RawBlockSpec {
    #[wasm_bindgen(constructor)]
    pub fn new(view: &RawView, block: &[f64], name: Option<String>) -> JsResult<RawBlockSpec> {
        let b = ints(block, "blockShape").map_err(to_js)?;
        Ok(RawBlockSpec { inner: BlockSpec::new(view.inner.clone(), &b, name_opt(name)).map_err(to_js)? })
    }
    pub fn view(&self) -> RawView {
        RawView { inner: self.inner.view().clone() }
    }
    pub fn shape(&self) -> JsValue {
        shape_array(self.inner.shape())
    }
    #[wasm_bindgen(js_name = gridShape)]
    pub fn grid_shape(&self) -> JsValue {
        shape_array(self.inner.grid_shape())
    }
    pub fn numblk(&self) -> usize {
        self.inner.numblk()
    }
    pub fn numel(&self) -> usize {
        self.inner.numel()
    }
    #[wasm_bindgen(js_name = numelPerBlock)]
    pub fn numel_per_block(&self) -> usize {
        self.inner.numel_per_block()
    }
    pub fn nnz(&self, eps: f64) -> JsResult<usize> {
        self.inner.nnz(eps).map_err(to_js)
    }
    pub fn norms(&self, p: Option<f64>, values: JsValue) -> JsResult<Vec<f32>> {
        let v = single(&values, "values").map_err(to_js)?;
        self.inner.norms(norm_p(p).map_err(to_js)?, v.as_deref()).map_err(to_js)
    }
    pub fn min(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = single(&values, "values").map_err(to_js)?;
        self.inner.min(v.as_deref()).map_err(to_js)
    }
    pub fn max(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = single(&values, "values").map_err(to_js)?;
        self.inner.max(v.as_deref()).map_err(to_js)
    }
    #[wasm_bindgen(js_name = applyMask)]
    pub fn apply_mask(&self, keep: &[u8]) -> JsResult<()> {
        self.inner.apply_mask(keep).map_err(to_js)
    }
    #[wasm_bindgen(js_name = applyMultiplier)]
    pub fn apply_multiplier(&self, m: &[f32]) -> JsResult<()> {
        self.inner.apply_multiplier(m).map_err(to_js)
    }
    #[wasm_bindgen(js_name = hardThreshold)]
    pub fn hard_threshold(&self, t: &[f32], values: JsValue) -> JsResult<()> {
        let v = single(&values, "values").map_err(to_js)?;
        self.inner.hard_threshold(t, v.as_deref()).map_err(to_js)
    }
    #[wasm_bindgen(js_name = softThreshold)]
    pub fn soft_threshold(&self, t: &[f32], conditioners: JsValue, opts: JsValue) -> JsResult<()> {
        let c = single(&conditioners, "conditioners").map_err(to_js)?;
        let o: SoftOpts = options(&opts, "softThreshold options", SOFT_KEYS).map_err(to_js)?;
        if o.scale.is_some() {
            return Err(arg_err("softThreshold options: `scale` applies to scopes only"));
        }
        self.inner.soft_threshold(t, c.as_deref(), o.core().map_err(to_js)?).map_err(to_js)
    }
    #[wasm_bindgen(js_name = getMasks)]
    pub fn get_masks(&self, keep: &[u8]) -> JsResult<Array> {
        Ok(masks_array(vec![self.inner.get_masks(keep).map_err(to_js)?]))
    }
    #[wasm_bindgen(js_name = blockView)]
    pub fn block_view(&self, values: JsValue, reorder: bool, merge: bool) -> JsResult<JsValue> {
        let v = single(&values, "values").map_err(to_js)?;
        let (d, s) = self.inner.block_view(v.as_deref(), reorder, merge).map_err(to_js)?;
        Ok(shape_obj(Float32Array::from(d.as_slice()).into(), &s))
    }
}

// ---------------------------------------------------------------- BlockCoupling

#[wasm_bindgen]
pub struct RawBlockCoupling {
    pub(super) inner: BlockCoupling,
}

#[wasm_bindgen]
impl RawBlockCoupling {
    #[wasm_bindgen(js_name = gridShape)]
    pub fn grid_shape(&self) -> JsValue {
        shape_array(self.inner.grid_shape())
    }
    pub fn orders(&self) -> JsValue {
        self.inner.orders().iter().map(|o| shape_array(o)).collect::<Array>().into()
    }
    pub fn numblk(&self) -> usize {
        self.inner.numblk()
    }
    pub fn numel(&self) -> usize {
        self.inner.numel()
    }
    #[wasm_bindgen(js_name = numelPerBlock)]
    pub fn numel_per_block(&self) -> usize {
        self.inner.numel_per_block()
    }
    pub fn nnz(&self, eps: f64) -> JsResult<usize> {
        self.inner.nnz(eps).map_err(to_js)
    }
    fn vals(&self, v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, JsValue> {
        list(v, what, self.inner.specs().len()).map_err(to_js)
    }
    pub fn norms(&self, p: Option<f64>, values: JsValue) -> JsResult<Vec<f32>> {
        let v = self.vals(&values, "values")?;
        self.inner.norms(norm_p(p).map_err(to_js)?, refs(&v).as_deref()).map_err(to_js)
    }
    pub fn min(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = self.vals(&values, "values")?;
        self.inner.min(refs(&v).as_deref()).map_err(to_js)
    }
    pub fn max(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = self.vals(&values, "values")?;
        self.inner.max(refs(&v).as_deref()).map_err(to_js)
    }
    #[wasm_bindgen(js_name = applyMask)]
    pub fn apply_mask(&self, keep: &[u8]) -> JsResult<()> {
        self.inner.apply_mask(keep).map_err(to_js)
    }
    #[wasm_bindgen(js_name = applyMultiplier)]
    pub fn apply_multiplier(&self, m: &[f32]) -> JsResult<()> {
        self.inner.apply_multiplier(m).map_err(to_js)
    }
    #[wasm_bindgen(js_name = hardThreshold)]
    pub fn hard_threshold(&self, t: &[f32], values: JsValue) -> JsResult<()> {
        let v = self.vals(&values, "values")?;
        self.inner.hard_threshold(t, refs(&v).as_deref()).map_err(to_js)
    }
    #[wasm_bindgen(js_name = softThreshold)]
    pub fn soft_threshold(&self, t: &[f32], conditioners: JsValue, opts: JsValue) -> JsResult<()> {
        let c = self.vals(&conditioners, "conditioners")?;
        let o: SoftOpts = options(&opts, "softThreshold options", SOFT_KEYS).map_err(to_js)?;
        if o.scale.is_some() {
            return Err(arg_err("softThreshold options: `scale` applies to scopes only"));
        }
        self.inner.soft_threshold(t, refs(&c).as_deref(), o.core().map_err(to_js)?).map_err(to_js)
    }
    #[wasm_bindgen(js_name = getMasks)]
    pub fn get_masks(&self, keep: &[u8]) -> JsResult<Array> {
        Ok(masks_array(self.inner.get_masks(keep).map_err(to_js)?))
    }
    #[wasm_bindgen(js_name = blockView)]
    pub fn block_view(&self, values: JsValue) -> JsResult<JsValue> {
        let v = self.vals(&values, "values")?;
        let (d, s) = self.inner.block_view(refs(&v).as_deref()).map_err(to_js)?;
        Ok(shape_obj(Float32Array::from(d.as_slice()).into(), &s))
    }
}
