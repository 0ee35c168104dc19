//! `ScopeSpec` and `ScopeCoupling` classes.

use super::block::{RawBlockCoupling, RawBlockSpec};
use super::convert::*;
use crate::core::error::{Error, ErrorKind};
use crate::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
pub struct RawScopeSpec {
    pub(super) inner: ScopeSpec,
}

/// Values of one scope: its node takes one array (spec) or one per spec (coupling).
pub(super) fn node_values(node: &BlockNode, v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, Error> {
    match node {
        BlockNode::Spec(_) => Ok(single(v, what)?.map(|x| vec![x])),
        BlockNode::Coupling(c) => list(v, what, c.specs().len()),
    }
}

#[wasm_bindgen]
impl RawScopeSpec {
    #[wasm_bindgen(js_name = fromSpec)]
    pub fn from_spec(spec: &RawBlockSpec, shape: &[f64], name: Option<String>) -> JsResult<RawScopeSpec> {
        let s = ints(shape, "scopeShape").map_err(to_js)?;
        Ok(RawScopeSpec { inner: ScopeSpec::new(BlockNode::Spec(spec.inner.clone()), &s, name_opt(name)).map_err(to_js)? })
    }
    #[wasm_bindgen(js_name = fromCoupling)]
    pub fn from_coupling(c: &RawBlockCoupling, shape: &[f64], name: Option<String>) -> JsResult<RawScopeSpec> {
        let s = ints(shape, "scopeShape").map_err(to_js)?;
        Ok(RawScopeSpec { inner: ScopeSpec::new(BlockNode::Coupling(c.inner.clone()), &s, name_opt(name)).map_err(to_js)? })
    }
    #[wasm_bindgen(js_name = gridShape)]
    pub fn grid_shape(&self) -> JsValue {
        shape_array(self.inner.grid_shape())
    }
    #[wasm_bindgen(js_name = scopeShape)]
    pub fn scope_shape(&self) -> JsValue {
        shape_array(self.inner.scope_shape())
    }
    #[wasm_bindgen(js_name = blockGridShape)]
    pub fn block_grid_shape(&self) -> JsValue {
        shape_array(self.inner.block_grid_shape())
    }
    #[wasm_bindgen(js_name = numblkPerScope)]
    pub fn numblk_per_scope(&self) -> usize {
        self.inner.numblk_per_scope()
    }
    #[wasm_bindgen(js_name = numelPerScope)]
    pub fn numel_per_scope(&self) -> usize {
        self.inner.numel_per_scope()
    }
    #[wasm_bindgen(js_name = numScopes)]
    pub fn num_scopes(&self) -> usize {
        self.inner.num_scopes()
    }
    #[wasm_bindgen(js_name = sparsityToNnz)]
    pub fn sparsity_to_nnz(&self, s: f64) -> JsResult<usize> {
        self.inner.sparsity_to_nnz(s).map_err(to_js)
    }
    fn vals(&self, v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, JsValue> {
        node_values(self.inner.block(), v, what).map_err(to_js)
    }
    #[wasm_bindgen(js_name = blockNorms)]
    pub fn block_norms(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = self.vals(&values, "values")?;
        self.inner.block_norms(refs(&v).as_deref()).map_err(to_js)
    }
    #[wasm_bindgen(js_name = kthLargest)]
    pub fn kth_largest(&self, scores: &[f32], nnz: f64) -> JsResult<Vec<f32>> {
        self.inner.kth_largest(scores, nnz_value(nnz).map_err(to_js)?).map_err(to_js)
    }
    #[wasm_bindgen(js_name = kthMid)]
    pub fn kth_mid(&self, scores: &[f32], nnz: f64, k_weight: f64) -> JsResult<Vec<f32>> {
        self.inner.kth_mid(scores, nnz_value(nnz).map_err(to_js)?, Some(k_weight)).map_err(to_js)
    }
    #[wasm_bindgen(js_name = hardThreshold)]
    pub fn hard_threshold(&self, opts: JsValue, thresholds: Option<Vec<f32>>, values: JsValue) -> JsResult<()> {
        let o: HardOpts = options(&opts, "hardThreshold options", HARD_KEYS).map_err(to_js)?;
        let by = hard_by(&o, thresholds.as_deref()).map_err(to_js)?;
        let v = self.vals(&values, "values")?;
        self.inner.hard_threshold(by, refs(&v).as_deref()).map_err(to_js)
    }
    /// Masks from nnz/sparsity (by `values` or `scores`), or directly from a block keep-mask.
    #[wasm_bindgen(js_name = getMasks)]
    pub fn get_masks(&self, opts: JsValue, values: JsValue, scores: Option<Vec<f32>>, block_mask: Option<Vec<u8>>) -> JsResult<Array> {
        let o: HardOpts = options(&opts, "getMasks options", HARD_KEYS).map_err(to_js)?;
        if let Some(m) = block_mask {
            if o.nnz.is_some() || o.sparsity.is_some() || scores.is_some() || !values.is_undefined() {
                return Err(arg_err("getMasks: blockMask excludes nnz, sparsity, values and blockScores"));
            }
            return Ok(masks_array(self.inner.masks_from_block_mask(&m).map_err(to_js)?));
        }
        let k = match hard_by(&o, None).map_err(to_js)? {
            HardBy::Nnz(k) => k,
            HardBy::Sparsity(s) => self.inner.sparsity_to_nnz(s).map_err(to_js)?,
            HardBy::Thresholds(_) => unreachable!("no thresholds passed"),
        };
        let v = self.vals(&values, "values")?;
        Ok(masks_array(self.inner.get_masks(k, refs(&v).as_deref(), scores.as_deref()).map_err(to_js)?))
    }
    #[wasm_bindgen(js_name = softThreshold)]
    pub fn soft_threshold(&self, t: &[f32], conditioners: JsValue, opts: JsValue) -> JsResult<()> {
        let o: SoftOpts = options(&opts, "softThreshold options", SOFT_KEYS).map_err(to_js)?;
        let c = self.vals(&conditioners, "conditioners")?;
        self.inner.soft_threshold(t, refs(&c).as_deref(), o.scale.unwrap_or(false), o.core().map_err(to_js)?).map_err(to_js)
    }
}

// ---------------------------------------------------------------- ScopeCoupling

#[wasm_bindgen]
pub struct RawScopeCoupling {
    pub(super) inner: ScopeCoupling,
}

#[wasm_bindgen]
impl RawScopeCoupling {
    #[wasm_bindgen(js_name = gridShape)]
    pub fn grid_shape(&self) -> JsValue {
        shape_array(self.inner.grid_shape())
    }
    pub fn orders(&self) -> JsValue {
        self.inner.orders().iter().map(|o| shape_array(o)).collect::<Array>().into()
    }
    #[wasm_bindgen(js_name = numblkPerScope)]
    pub fn numblk_per_scope(&self) -> usize {
        self.inner.numblk_per_scope()
    }
    #[wasm_bindgen(js_name = numelPerScope)]
    pub fn numel_per_scope(&self) -> usize {
        self.inner.numel_per_scope()
    }
    #[wasm_bindgen(js_name = numScopes)]
    pub fn num_scopes(&self) -> usize {
        self.inner.num_scopes()
    }
    #[wasm_bindgen(js_name = sparsityToNnz)]
    pub fn sparsity_to_nnz(&self, s: f64) -> JsResult<usize> {
        self.inner.sparsity_to_nnz(s).map_err(to_js)
    }

    /// Per-scope values: an array with one entry per scope (each as its scope takes it).
    fn vals(&self, v: &JsValue, what: &str) -> Result<Option<Vec<Vec<Vec<f32>>>>, JsValue> {
        if v.is_undefined() || v.is_null() {
            return Ok(None);
        }
        let arr = v
            .dyn_ref::<Array>()
            .ok_or_else(|| to_js(Error::new(ErrorKind::InvalidArguments, format!("{what} must be an array with one entry per scope"))))?;
        let n = self.inner.scopes().len();
        if arr.length() as usize != n {
            return Err(to_js(Error::new(
                ErrorKind::ShapeMismatch,
                format!("{what}: expected {n} entries (one per scope), got {}", arr.length()),
            )));
        }
        self.inner
            .scopes()
            .iter()
            .zip(arr.iter())
            .enumerate()
            .map(|(i, (s, x))| {
                node_values(s.block(), &x, &format!("{what}[{i}]"))
                    .and_then(|o| o.ok_or_else(|| Error::new(ErrorKind::InvalidArguments, format!("{what}[{i}] is missing"))))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
            .map_err(to_js)
    }

    #[wasm_bindgen(js_name = blockNorms)]
    pub fn block_norms(&self, values: JsValue) -> JsResult<Vec<f32>> {
        let v = self.vals(&values, "values")?;
        with_coupling_values(&v, |cv| self.inner.block_norms(cv)).map_err(to_js)
    }
    #[wasm_bindgen(js_name = hardThreshold)]
    pub fn hard_threshold(
        &self,
        opts: JsValue,
        thresholds: Option<Vec<f32>>,
        values: JsValue,
        on_progress: Option<Function>,
    ) -> JsResult<()> {
        let o: HardOpts = options(&opts, "hardThreshold options", HARD_KEYS).map_err(to_js)?;
        let by = hard_by(&o, thresholds.as_deref()).map_err(to_js)?;
        let v = self.vals(&values, "values")?;
        let mut p = progress_fn(&on_progress);
        with_coupling_values(&v, |cv| self.inner.hard_threshold(by, cv, &mut p)).map_err(to_js)
    }
    #[wasm_bindgen(js_name = getMasks)]
    pub fn get_masks(&self, opts: JsValue, values: JsValue, on_progress: Option<Function>) -> JsResult<Array> {
        let o: HardOpts = options(&opts, "getMasks options", HARD_KEYS).map_err(to_js)?;
        let by = hard_by(&o, None).map_err(to_js)?;
        let v = self.vals(&values, "values")?;
        let mut p = progress_fn(&on_progress);
        Ok(masks_array(with_coupling_values(&v, |cv| self.inner.get_masks(by, cv, &mut p)).map_err(to_js)?))
    }
    #[wasm_bindgen(js_name = softThreshold)]
    pub fn soft_threshold(&self, t: &[f32], conditioners: JsValue, opts: JsValue, on_progress: Option<Function>) -> JsResult<()> {
        let o: SoftOpts = options(&opts, "softThreshold options", SOFT_KEYS).map_err(to_js)?;
        let c = self.vals(&conditioners, "conditioners")?;
        let core = o.core().map_err(to_js)?;
        let mut p = progress_fn(&on_progress);
        with_coupling_values(&c, |cv| self.inner.soft_threshold(t, cv, o.scale.unwrap_or(false), core, &mut p)).map_err(to_js)
    }
}

/// Borrows owned per-scope value lists as the core's `&[&[&[f32]]]`.
pub(super) fn with_coupling_values<R>(v: &Option<Vec<Vec<Vec<f32>>>>, f: impl FnOnce(Option<&[&[&[f32]]]>) -> R) -> R {
    match v {
        None => f(None),
        Some(per) => {
            let inner: Vec<Vec<&[f32]>> = per.iter().map(|s| s.iter().map(|x| x.as_slice()).collect()).collect();
            let mid: Vec<&[&[f32]]> = inner.iter().map(|s| s.as_slice()).collect();
            f(Some(&mid))
        }
    }
}
