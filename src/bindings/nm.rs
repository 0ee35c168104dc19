//! N:M functions, the permutation search and `MagnitudeSearcher`.

use super::convert::*;
use super::param::RawParam;
use crate::block::Param;
use crate::nm;
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(js_name = getNmpruneInfo)]
pub fn get_nmprune_info(pattern: &str) -> JsValue {
    let (valid, m, n) = nm::get_nmprune_info(pattern);
    let o = Object::new();
    let _ = Reflect::set(&o, &"valid".into(), &valid.into());
    let _ = Reflect::set(&o, &"m".into(), &(m as f64).into());
    let _ = Reflect::set(&o, &"n".into(), &(n as f64).into());
    o.into()
}

#[wasm_bindgen(js_name = computeValid1dPatterns)]
pub fn compute_valid_1d_patterns(m: f64, n: f64) -> JsResult<Vec<u8>> {
    nm::compute_valid_1d_patterns(count(m, "m")?, count(n, "n")?).map_err(to_js)
}

// The 1-D masks and `fill` take the JS array itself and copy it into wasm memory a chunk at a
// time (`nm::mn_1d_best_streamed`): a weight-sized copy would grow wasm memory for good and pass
// over the weight once more; the mask is written into the returned array as it is formed.

#[wasm_bindgen(js_name = mn1dBest)]
pub fn mn_1d_best(values: &Float32Array, shape: &[f64], m: f64, n: f64, out: Option<Uint8Array>) -> JsResult<Uint8Array> {
    let (r, c) = rows_cols(shape)?;
    streamed_mask(values, r, c, count(m, "m")?, count(n, "n")?, out)
}

#[wasm_bindgen(js_name = m4n2_1d)]
pub fn m4n2_1d(values: &Float32Array, shape: &[f64], out: Option<Uint8Array>) -> JsResult<Uint8Array> {
    let (r, c) = rows_cols(shape)?;
    streamed_mask(values, r, c, 4, 2, out)
}

/// `out`: the caller's array (refused unless as long as `values`, before anything is written) or
/// a new one.
fn streamed_mask(values: &Float32Array, rows: usize, cols: usize, m: usize, n: usize, out: Option<Uint8Array>) -> JsResult<Uint8Array> {
    let len = values.length() as usize;
    let out = match out {
        Some(o) if o.length() == values.length() => o,
        Some(o) => {
            let msg = format!("out has {} elements, the mask needs {len}", o.length());
            return Err(to_js(crate::core::error::Error::new(crate::core::error::ErrorKind::ShapeMismatch, msg)));
        }
        None => Uint8Array::new_with_length(values.length()),
    };
    nm::mn_1d_best_streamed(len, rows, cols, m, n, js_f32_reader(values), js_u8_writer(&out)).map_err(to_js)?;
    Ok(out)
}

#[wasm_bindgen(js_name = createAspMask)]
pub fn create_asp_mask(values: &[f32], shape: &[f64], pattern: Option<String>) -> JsResult<Vec<u8>> {
    let s = sizes(shape, "shape").map_err(to_js)?;
    nm::create_asp_mask(values, &s, pattern.as_deref().unwrap_or("m4n2_1d")).map_err(to_js)
}

#[wasm_bindgen]
pub fn fill(values: &Float32Array) -> JsResult<f64> {
    nm::fill_streamed(values.length() as usize, js_f32_reader(values)).map_err(to_js)
}

#[wasm_bindgen(js_name = reshape1d)]
pub fn reshape_1d(values: &[f32], shape: &[f64], m: f64) -> JsResult<JsValue> {
    let (r, c) = rows_cols(shape)?;
    let (d, gs, ps) = nm::reshape_1d(values, r, c, count(m, "m")?).map_err(to_js)?;
    let o = shape_obj(Float32Array::from(d.as_slice()).into(), &gs);
    let _ = Reflect::set(&o, &"paddedShape".into(), &shape_array(&ps));
    Ok(o)
}

/// ASP-style input-channel permutation search for an m:n mask of a `(rows, cols)` weight.
#[wasm_bindgen(js_name = searchPermutation)]
pub fn search_permutation(values: &[f32], shape: &[f64], m: f64, n: f64, max_sweeps: Option<f64>) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let sweeps = nm::sweeps_from_f64(max_sweeps.unwrap_or(8.0)).map_err(to_js)?;
    let res = crate::nm::search_permutation(v, r, c, count(m, "m")?, count(n, "n")?, sweeps).map_err(to_js)?;
    let o = Object::new();
    let perm: Vec<u32> = res.perm.iter().map(|&p| p as u32).collect();
    set(&o, "perm", js_sys::Uint32Array::from(perm.as_slice()).into());
    set(&o, "keptBefore", res.kept_before.into());
    set(&o, "keptAfter", res.kept_after.into());
    set(&o, "swaps", (res.swaps as f64).into());
    Ok(o.into())
}

/// MagnitudeSearcher (docs/API.md, "N:M masks"): N:M masks for a set of params, applied in place.
#[wasm_bindgen]
pub struct RawMagnitudeSearcher {
    pub(super) inner: crate::nm::MagnitudeSearcher,
    pub(super) params: Vec<Param>,
}

#[wasm_bindgen]
impl RawMagnitudeSearcher {
    #[wasm_bindgen(constructor)]
    pub fn new(pattern: Option<String>) -> JsResult<RawMagnitudeSearcher> {
        let inner = crate::nm::MagnitudeSearcher::new(pattern.as_deref().unwrap_or("m4n2_1d")).map_err(to_js)?;
        Ok(RawMagnitudeSearcher { inner, params: vec![] })
    }
    pub fn pattern(&self) -> String {
        self.inner.pattern().to_string()
    }
    #[wasm_bindgen(js_name = addParam)]
    pub fn add_param(&mut self, p: &RawParam) {
        self.params.push(p.inner.clone());
    }
    #[wasm_bindgen(js_name = clearParams)]
    pub fn clear_params(&mut self) {
        self.params.clear();
    }
    fn masks(&self, on_progress: &Option<Function>) -> Result<Vec<Vec<u8>>, JsValue> {
        let datas: Vec<_> = self.params.iter().map(|p| p.data()).collect();
        let tensors: Vec<(&[f32], &[usize])> = datas.iter().zip(&self.params).map(|(d, p)| (d.as_slice(), p.shape())).collect();
        let mut prog = progress_fn(on_progress);
        self.inner.compute_masks(&tensors, &mut prog).map_err(to_js)
    }
    /// Keep-masks of the added params (param layout), without changing them.
    #[wasm_bindgen(js_name = computeMasks)]
    pub fn compute_masks(&self, on_progress: Option<Function>) -> JsResult<Array> {
        Ok(masks_array(self.masks(&on_progress)?))
    }
    /// Computes all masks first, then applies them in place; returns the masks.
    pub fn apply(&self, on_progress: Option<Function>) -> JsResult<Array> {
        let masks = self.masks(&on_progress)?;
        // One param at a time: the same param may have been added twice.
        for (p, m) in self.params.iter().zip(&masks) {
            nm::apply_mask(&mut p.data_mut(), m);
        }
        Ok(masks_array(masks))
    }
}
