//! JS value <-> core conversions shared by every binding: typed errors to JS `Error`s with a
//! `.code`, integer and size arrays, `Float32Array` lists, options objects with unknown keys refused.

use crate::core::error::{Error, ErrorKind};
use crate::scope::HardBy;
use crate::SoftOptions;
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

pub(super) type JsResult<T> = Result<T, JsValue>;

/// A JS `Error` with `.name` (the class to rethrow as) and `.code` (the stable code).
pub(super) fn to_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.message());
    err.set_name(e.kind().class_name());
    let _ = Reflect::set(&err, &"code".into(), &e.kind().code().into());
    err.into()
}

pub(super) fn arg_err(msg: impl Into<String>) -> JsValue {
    to_js(Error::new(ErrorKind::InvalidArguments, msg))
}

/// Integers from JS numbers (shapes, strides, block shapes, orders, indices).
pub(super) fn ints(v: &[f64], what: &str) -> Result<Vec<i64>, Error> {
    v.iter()
        .map(|&x| {
            if x.is_finite() && x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 {
                Ok(x as i64)
            } else {
                Err(Error::new(ErrorKind::InvalidArguments, format!("{what} must hold integers, got {v:?}")))
            }
        })
        .collect()
}

pub(super) fn sizes(v: &[f64], what: &str) -> Result<Vec<usize>, Error> {
    ints(v, what)?
        .into_iter()
        .map(|x| usize::try_from(x).map_err(|_| Error::new(ErrorKind::InvalidArguments, format!("{what} must be non-negative, got {v:?}"))))
        .collect()
}

pub(super) fn f32_array(v: &JsValue, what: &str) -> Result<Vec<f32>, Error> {
    v.dyn_ref::<Float32Array>()
        .map(|a| a.to_vec())
        .ok_or_else(|| Error::new(ErrorKind::InvalidArguments, format!("{what} must be a Float32Array")))
}

/// Reads `values[start..start + buf.len()]` of a JS array into `buf`: the source of the streamed
/// N:M functions, which copy a large JS array into wasm memory one chunk at a time.
pub(super) fn js_f32_reader(values: &js_sys::Float32Array) -> impl FnMut(usize, &mut [f32]) + '_ {
    move |start, buf| values.subarray(start as u32, (start + buf.len()) as u32).copy_to(buf)
}

/// Writes `bytes` into `out[start..]`: the sink of the streamed N:M masks.
pub(super) fn js_u8_writer(out: &js_sys::Uint8Array) -> impl FnMut(usize, &[u8]) + '_ {
    move |start, bytes| out.subarray(start as u32, (start + bytes.len()) as u32).copy_from(bytes)
}

/// `undefined`/`null` -> None; a Float32Array -> one array; an Array of Float32Array -> several.
pub(super) fn value_list(v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, Error> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    if let Some(a) = v.dyn_ref::<Float32Array>() {
        return Ok(Some(vec![a.to_vec()]));
    }
    if let Some(arr) = v.dyn_ref::<Array>() {
        return arr.iter().enumerate().map(|(i, x)| f32_array(&x, &format!("{what}[{i}]"))).collect::<Result<Vec<_>, _>>().map(Some);
    }
    Err(Error::new(ErrorKind::InvalidArguments, format!("{what} must be a Float32Array (or an array of them for a coupling)")))
}

pub(super) fn refs(v: &Option<Vec<Vec<f32>>>) -> Option<Vec<&[f32]>> {
    v.as_ref().map(|l| l.iter().map(|x| x.as_slice()).collect())
}

pub(super) fn single(v: &JsValue, what: &str) -> Result<Option<Vec<f32>>, Error> {
    match value_list(v, what)? {
        None => Ok(None),
        Some(mut l) if l.len() == 1 && v.is_instance_of::<Float32Array>() => Ok(l.pop()),
        Some(_) => Err(Error::new(ErrorKind::ShapeMismatch, format!("{what}: a BlockSpec takes one Float32Array"))),
    }
}

pub(super) fn shape_obj(data: JsValue, shape: &[usize]) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"data".into(), &data);
    let _ = Reflect::set(&o, &"shape".into(), &shape_array(shape));
    o.into()
}

pub(super) fn shape_array(shape: &[usize]) -> JsValue {
    shape.iter().map(|&s| JsValue::from(s as f64)).collect::<Array>().into()
}

pub(super) fn masks_array(masks: Vec<Vec<u8>>) -> Array {
    masks.into_iter().map(|m| JsValue::from(Uint8Array::from(m.as_slice()))).collect()
}

/// Deserializes an options object, refusing unknown keys (serde-wasm-bindgen only reads the
/// fields it knows, so `deny_unknown_fields` alone would never see them) and wrong types.
pub(super) fn options<T: for<'de> Deserialize<'de> + Default>(v: &JsValue, what: &str, allowed: &[&str]) -> Result<T, Error> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    let obj = v
        .dyn_ref::<Object>()
        .filter(|_| !Array::is_array(v))
        .ok_or_else(|| Error::new(ErrorKind::InvalidArguments, format!("{what} must be an object")))?;
    for key in Object::keys(obj).iter() {
        let k = key.as_string().unwrap_or_default();
        let val = Reflect::get(obj, &key).unwrap_or(JsValue::UNDEFINED);
        if !allowed.contains(&k.as_str()) && !val.is_undefined() {
            return Err(Error::new(
                ErrorKind::InvalidArguments,
                format!("{what}: unknown option `{k}`, expected one of {}", allowed.join(", ")),
            ));
        }
    }
    serde_wasm_bindgen::from_value(v.clone()).map_err(|e| Error::new(ErrorKind::InvalidArguments, format!("{what}: {e}")))
}

pub(super) const SOFT_KEYS: &[&str] = &["maxIter", "atol", "eps", "method", "scale"];
pub(super) const HARD_KEYS: &[&str] = &["nnz", "sparsity"];

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct SoftOpts {
    pub(super) max_iter: Option<f64>,
    pub(super) atol: Option<f64>,
    pub(super) eps: Option<f64>,
    pub(super) method: Option<String>,
    pub(super) scale: Option<bool>,
}

impl SoftOpts {
    pub(super) fn core(&self) -> Result<SoftOptions, Error> {
        SoftOptions::new(self.max_iter, self.atol, self.eps, self.method.as_deref())
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct HardOpts {
    pub(super) nnz: Option<f64>,
    pub(super) sparsity: Option<f64>,
}

/// Exactly one of `nnz`, `sparsity`, `thresholds`.
pub(super) fn hard_by<'a>(o: &HardOpts, thresholds: Option<&'a [f32]>) -> Result<HardBy<'a>, Error> {
    HardBy::from_args(thresholds, o.nnz, o.sparsity)
}

pub(super) fn nnz_value(k: f64) -> Result<usize, Error> {
    crate::scope::nnz_from_f64(k)
}

pub(super) fn progress_fn(f: &Option<Function>) -> impl FnMut(usize, usize) + '_ {
    move |done, total| {
        if let Some(f) = f {
            let _ = f.call2(&JsValue::NULL, &(done as f64).into(), &(total as f64).into());
        }
    }
}

pub(super) fn count(x: f64, what: &str) -> Result<usize, JsValue> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 1e9 {
        Ok(x as usize)
    } else {
        Err(to_js(Error::new(ErrorKind::InvalidNmPattern, format!("{what} must be a non-negative integer, got {x}"))))
    }
}

pub(super) fn rows_cols(shape: &[f64]) -> Result<(usize, usize), JsValue> {
    let s = sizes(shape, "shape").map_err(to_js)?;
    match s.as_slice() {
        [r, c] => Ok((*r, *c)),
        _ => Err(to_js(Error::new(ErrorKind::InvalidNmShape, format!("expected a 2-D shape [rows, cols], got {s:?}")))),
    }
}

pub(super) fn matrix<'a>(values: &'a [f32], shape: &[f64]) -> Result<(&'a [f32], usize, usize), JsValue> {
    let (r, c) = rows_cols(shape)?;
    if values.len() != r * c {
        return Err(to_js(Error::length_mismatch("values", &[r, c], r * c, values.len())));
    }
    Ok((values, r, c))
}

pub(super) fn set(o: &Object, k: &str, v: JsValue) {
    let _ = Reflect::set(o, &k.into(), &v);
}

pub(super) fn list(v: &JsValue, what: &str, n: usize) -> Result<Option<Vec<Vec<f32>>>, Error> {
    let l = value_list(v, what)?;
    if let Some(l) = &l {
        if l.len() != n || v.is_instance_of::<Float32Array>() {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("{what}: expected an array of {n} Float32Array (one per spec)")));
        }
    }
    Ok(l)
}

pub(super) fn name_opt(name: Option<String>) -> Option<String> {
    name.filter(|n| !n.is_empty())
}
