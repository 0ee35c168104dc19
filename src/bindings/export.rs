//! Sparse storage exports (CSR, BSR, 2:4) and their decoders.

use super::convert::*;
use crate::export;
#[allow(unused_imports)]
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

/// CSR arrays of a 2-D weight: `{indptr, indices, values, shape, bytes}`.
#[wasm_bindgen(js_name = toCsr)]
pub fn to_csr(values: &[f32], shape: &[f64]) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let m = export::to_csr(v, r, c).map_err(to_js)?;
    let o = Object::new();
    set(&o, "indptr", js_sys::Uint32Array::from(m.indptr.as_slice()).into());
    set(&o, "indices", js_sys::Uint32Array::from(m.indices.as_slice()).into());
    set(&o, "values", Float32Array::from(m.values.as_slice()).into());
    set(&o, "shape", shape_array(&[r, c]));
    set(&o, "bytes", (m.byte_size() as f64).into());
    Ok(o.into())
}

/// Block-CSR arrays of a 2-D weight with `[bh, bw]` blocks (dense blocks, row-major inside).
#[wasm_bindgen(js_name = toBsr)]
pub fn to_bsr(values: &[f32], shape: &[f64], block: &[f64]) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let b = sizes(block, "blockShape").map_err(to_js)?;
    let [bh, bw] = b[..] else { return Err(arg_err("blockShape must be [bh, bw]")) };
    let m = export::to_bsr(v, r, c, bh, bw).map_err(to_js)?;
    let o = Object::new();
    set(&o, "indptr", js_sys::Uint32Array::from(m.indptr.as_slice()).into());
    set(&o, "indices", js_sys::Uint32Array::from(m.indices.as_slice()).into());
    set(&o, "values", Float32Array::from(m.values.as_slice()).into());
    set(&o, "shape", shape_array(&[r, c]));
    set(&o, "blockShape", shape_array(&[bh, bw]));
    set(&o, "bytes", (m.byte_size() as f64).into());
    Ok(o.into())
}

/// The 2:4 compressed form: `cols/2` values per row and 2-bit positions packed in `meta`.
#[wasm_bindgen(js_name = toNm24)]
pub fn to_nm24(values: &[f32], shape: &[f64]) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let m = export::to_nm24(v, r, c).map_err(to_js)?;
    let o = Object::new();
    set(&o, "values", Float32Array::from(m.values.as_slice()).into());
    set(&o, "meta", Uint8Array::from(m.meta.as_slice()).into());
    set(&o, "shape", shape_array(&[r, c]));
    set(&o, "bytes", (m.byte_size() as f64).into());
    Ok(o.into())
}

pub(super) fn dense_from(o: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(o, &key.into()).map_err(|_| arg_err(format!("missing `{key}`")))
}

/// Decodes a CSR / BSR / 2:4 object (as returned by `toCsr`/`toBsr`/`toNm24`) to dense.
#[wasm_bindgen(js_name = sparseToDense)]
pub fn sparse_to_dense(o: JsValue) -> JsResult<Float32Array> {
    let shape: Vec<f64> = serde_wasm_bindgen::from_value(dense_from(&o, "shape")?).map_err(|e| arg_err(format!("shape: {e}")))?;
    let (r, c) = rows_cols(&shape)?;
    let u32s = |k: &str| -> Result<Vec<u32>, JsValue> {
        dense_from(&o, k)?
            .dyn_ref::<js_sys::Uint32Array>()
            .map(|a| a.to_vec())
            .ok_or_else(|| arg_err(format!("`{k}` must be a Uint32Array")))
    };
    let values = f32_array(&dense_from(&o, "values")?, "values").map_err(to_js)?;
    let meta = dense_from(&o, "meta")?;
    let block = dense_from(&o, "blockShape")?;
    let dense = if let Some(meta) = meta.dyn_ref::<Uint8Array>() {
        export::nm24_to_dense(&export::Nm24 { rows: r, cols: c, values, meta: meta.to_vec() })
    } else if !block.is_undefined() {
        let b: Vec<f64> = serde_wasm_bindgen::from_value(block).map_err(|e| arg_err(format!("blockShape: {e}")))?;
        let b = sizes(&b, "blockShape").map_err(to_js)?;
        let [bh, bw] = b[..] else { return Err(arg_err("blockShape must be [bh, bw]")) };
        export::bsr_to_dense(&export::Bsr { rows: r, cols: c, bh, bw, indptr: u32s("indptr")?, indices: u32s("indices")?, values })
    } else {
        export::csr_to_dense(&export::Csr { rows: r, cols: c, indptr: u32s("indptr")?, indices: u32s("indices")?, values })
    };
    Ok(Float32Array::from(dense.map_err(to_js)?.as_slice()))
}

/// Byte sizes of a pruned 2-D weight stored dense / CSR / BSR (`[bh, bw]`) / 2:4 compressed.
#[wasm_bindgen(js_name = sparseBytes)]
pub fn sparse_bytes(values: &[f32], shape: &[f64], block: &[f64]) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let b = sizes(block, "blockShape").map_err(to_js)?;
    let [bh, bw] = b[..] else { return Err(arg_err("blockShape must be [bh, bw]")) };
    let sb = export::sparse_bytes(v, r, c, bh, bw).map_err(to_js)?;
    let o = Object::new();
    set(&o, "dense", (sb.dense as f64).into());
    set(&o, "csr", (sb.csr as f64).into());
    set(&o, "bsr", (sb.bsr as f64).into());
    set(&o, "nm24", sb.nm24.map_or(JsValue::NULL, |b| (b as f64).into()));
    Ok(o.into())
}
