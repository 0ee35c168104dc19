//! The wasm-bindgen layer: converts between JS values and the core, nothing more.
//!
//! Exported classes are `Raw*`; the package's hand-written JS layer (`pkg-template/src/`) wraps
//! them into the API of `API.md` (error classes, options objects, `Map` results, live
//! `Param.data`). Every entry point validates its JS inputs and returns a typed error instead of
//! panicking: a panic in wasm would abort the instance.

use crate::block::{BlockSpec, Norm, SoftOptions};
use crate::coupling::BlockCoupling;
use crate::error::{Error, ErrorKind};
use crate::param::Param;
use crate::scope::{BlockNode, HardBy, ScopeCoupling, ScopeSpec};
use crate::view::{self, View};
use crate::{export, nm};
use js_sys::{Array, Float32Array, Function, Object, Reflect, Uint8Array};
use serde::Deserialize;
use wasm_bindgen::prelude::*;

mod calib;

type JsResult<T> = Result<T, JsValue>;

/// A JS `Error` with `.name` (the class to rethrow as) and `.code` (the stable code).
fn to_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    err.set_name(e.kind.class_name());
    let _ = Reflect::set(&err, &"code".into(), &e.kind.code().into());
    err.into()
}

fn arg_err(msg: impl Into<String>) -> JsValue {
    to_js(Error::new(ErrorKind::InvalidArguments, msg))
}

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// Every stable error code the library can throw, from the core's one list (`ErrorKind::ALL`).
#[wasm_bindgen(js_name = errorCodes)]
pub fn error_codes() -> Vec<String> {
    ErrorKind::ALL.iter().map(|k| k.code().to_string()).collect()
}

/// The wasm memory (for zero-copy `Float32Array` views of params).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// True in the threaded build.
#[wasm_bindgen(js_name = threadsCompiled)]
pub fn threads_compiled() -> bool {
    cfg!(feature = "threads")
}

/// True when the module was compiled with SIMD128.
#[wasm_bindgen(js_name = simdCompiled)]
pub fn simd_compiled() -> bool {
    cfg!(target_feature = "simd128")
}

#[cfg(feature = "threads")]
pub use wasm_bindgen_rayon::init_thread_pool;

/// Marks the worker pool as started (JS calls it when `initThreadPool` resolves).
#[wasm_bindgen(js_name = markThreadPoolReady)]
pub fn mark_thread_pool_ready() {
    crate::threads::set_pool_ready();
}

/// Number of rayon workers (1 in the single-threaded build or before the pool is started).
#[wasm_bindgen(js_name = numThreads)]
pub fn num_threads() -> usize {
    #[cfg(feature = "threads")]
    {
        if crate::threads::pool_ready() {
            rayon::current_num_threads()
        } else {
            1
        }
    }
    #[cfg(not(feature = "threads"))]
    {
        1
    }
}

/// Runs `n` tasks on the pool and returns how many distinct workers ran them (a check that
/// the pool really is parallel).
#[wasm_bindgen(js_name = probeThreads)]
pub fn probe_threads(n: usize) -> usize {
    #[cfg(feature = "threads")]
    if crate::threads::pool_ready() {
        use rayon::prelude::*;
        let ids: std::collections::BTreeSet<usize> = (0..n)
            .into_par_iter()
            .map(|i| {
                // a little work so that tasks spread over the workers
                let mut x = i as f64;
                for _ in 0..20000 {
                    x = (x * 1.000001).sin().abs();
                }
                std::hint::black_box(x);
                rayon::current_thread_index().unwrap_or(usize::MAX)
            })
            .collect();
        return ids.len();
    }
    let _ = n;
    1
}

// ---------------------------------------------------------------- conversions

/// Integers from JS numbers (shapes, strides, block shapes, orders, indices).
fn ints(v: &[f64], what: &str) -> Result<Vec<i64>, Error> {
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

fn sizes(v: &[f64], what: &str) -> Result<Vec<usize>, Error> {
    ints(v, what)?
        .into_iter()
        .map(|x| usize::try_from(x).map_err(|_| Error::new(ErrorKind::InvalidArguments, format!("{what} must be non-negative, got {v:?}"))))
        .collect()
}

fn f32_array(v: &JsValue, what: &str) -> Result<Vec<f32>, Error> {
    v.dyn_ref::<Float32Array>()
        .map(|a| a.to_vec())
        .ok_or_else(|| Error::new(ErrorKind::InvalidArguments, format!("{what} must be a Float32Array")))
}

/// `undefined`/`null` -> None; a Float32Array -> one array; an Array of Float32Array -> several.
fn value_list(v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, Error> {
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

fn refs(v: &Option<Vec<Vec<f32>>>) -> Option<Vec<&[f32]>> {
    v.as_ref().map(|l| l.iter().map(|x| x.as_slice()).collect())
}

fn single(v: &JsValue, what: &str) -> Result<Option<Vec<f32>>, Error> {
    match value_list(v, what)? {
        None => Ok(None),
        Some(mut l) if l.len() == 1 && v.is_instance_of::<Float32Array>() => Ok(l.pop()),
        Some(_) => Err(Error::new(ErrorKind::ShapeMismatch, format!("{what}: a BlockSpec takes one Float32Array"))),
    }
}

fn shape_obj(data: JsValue, shape: &[usize]) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"data".into(), &data);
    let _ = Reflect::set(&o, &"shape".into(), &shape_array(shape));
    o.into()
}

fn shape_array(shape: &[usize]) -> JsValue {
    shape.iter().map(|&s| JsValue::from(s as f64)).collect::<Array>().into()
}

fn masks_array(masks: Vec<Vec<u8>>) -> Array {
    masks.into_iter().map(|m| JsValue::from(Uint8Array::from(m.as_slice()))).collect()
}

/// Deserializes an options object, refusing unknown keys (serde-wasm-bindgen only reads the
/// fields it knows, so `deny_unknown_fields` alone would never see them) and wrong types.
fn options<T: for<'de> Deserialize<'de> + Default>(v: &JsValue, what: &str, allowed: &[&str]) -> Result<T, Error> {
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

const SOFT_KEYS: &[&str] = &["maxIter", "atol", "eps", "scale"];
const HARD_KEYS: &[&str] = &["nnz", "sparsity"];

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SoftOpts {
    max_iter: Option<f64>,
    atol: Option<f64>,
    eps: Option<f64>,
    scale: Option<bool>,
}

impl SoftOpts {
    fn core(&self) -> Result<SoftOptions, Error> {
        let mut o = SoftOptions::default();
        if let Some(m) = self.max_iter {
            if !(m.is_finite() && m >= 0.0 && m.fract() == 0.0 && m <= 1e6) {
                return Err(Error::new(ErrorKind::InvalidArguments, format!("maxIter must be an integer in [0, 1e6], got {m}")));
            }
            o.max_iter = m as usize;
        }
        if let Some(a) = self.atol {
            if a.is_nan() || a < 0.0 {
                return Err(Error::new(ErrorKind::InvalidArguments, format!("atol must be >= 0, got {a}")));
            }
            o.atol = a as f32;
        }
        if let Some(e) = self.eps {
            if e.is_nan() || e < 0.0 {
                return Err(Error::new(ErrorKind::InvalidEps, format!("eps must be >= 0, got {e}")));
            }
            o.eps = Some(e as f32);
        }
        Ok(o)
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HardOpts {
    nnz: Option<f64>,
    sparsity: Option<f64>,
}

/// Exactly one of `nnz`, `sparsity`, `thresholds`.
fn hard_by<'a>(o: &HardOpts, thresholds: Option<&'a [f32]>) -> Result<HardBy<'a>, Error> {
    HardBy::from_args(thresholds, o.nnz, o.sparsity)
}

/// `nnz(eps)` counts `|x| > eps`: a NaN eps would silently count nothing.
fn nnz_eps(eps: f64) -> Result<f64, JsValue> {
    if eps.is_nan() {
        return Err(to_js(Error::new(ErrorKind::InvalidEps, "nnz: eps must be a number, got NaN")));
    }
    Ok(eps)
}

fn nnz_value(k: f64) -> Result<usize, Error> {
    crate::scope::nnz_from_f64(k)
}

fn progress_fn(f: &Option<Function>) -> impl FnMut(usize, usize) + '_ {
    move |done, total| {
        if let Some(f) = f {
            let _ = f.call2(&JsValue::NULL, &(done as f64).into(), &(total as f64).into());
        }
    }
}

// ---------------------------------------------------------------- Param / View

#[wasm_bindgen]
pub struct RawParam {
    inner: Param,
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
    inner: View,
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

// ---------------------------------------------------------------- BlockSpec

fn norm_p(p: Option<f64>) -> Result<Norm, Error> {
    Norm::from_p(p.unwrap_or(2.0))
}

fn name_opt(name: Option<String>) -> Option<String> {
    name.filter(|n| !n.is_empty())
}

#[wasm_bindgen]
pub struct RawBlockSpec {
    inner: BlockSpec,
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
        Ok(self.inner.nnz(nnz_eps(eps)?))
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

/// Collects specs one by one (JS objects cannot be moved into Rust without invalidating them).
#[wasm_bindgen]
#[derive(Default)]
pub struct RawCouplingBuilder {
    specs: Vec<BlockSpec>,
    scopes: Vec<ScopeSpec>,
}

fn orders_from(v: &JsValue) -> Result<Vec<Vec<i64>>, Error> {
    if v.is_undefined() || v.is_null() {
        return Ok(vec![]);
    }
    let raw: Vec<Vec<f64>> = serde_wasm_bindgen::from_value(v.clone())
        .map_err(|e| Error::new(ErrorKind::InvalidOrders, format!("orders must be an array of integer arrays: {e}")))?;
    raw.iter()
        .map(|o| ints(o, "orders").map_err(|e| Error::new(ErrorKind::InvalidOrders, e.message)))
        .collect()
}

#[wasm_bindgen]
impl RawCouplingBuilder {
    #[wasm_bindgen(constructor)]
    pub fn new() -> RawCouplingBuilder {
        RawCouplingBuilder::default()
    }
    #[wasm_bindgen(js_name = addSpec)]
    pub fn add_spec(&mut self, s: &RawBlockSpec) {
        self.specs.push(s.inner.clone());
    }
    #[wasm_bindgen(js_name = addScope)]
    pub fn add_scope(&mut self, s: &RawScopeSpec) {
        self.scopes.push(s.inner.clone());
    }
    #[wasm_bindgen(js_name = buildBlockCoupling)]
    pub fn build_block_coupling(&mut self, orders: JsValue, name: Option<String>) -> JsResult<RawBlockCoupling> {
        let orders = orders_from(&orders).map_err(to_js)?;
        let specs = std::mem::take(&mut self.specs);
        Ok(RawBlockCoupling { inner: BlockCoupling::new(specs, &orders, name_opt(name)).map_err(to_js)? })
    }
    #[wasm_bindgen(js_name = buildScopeCoupling)]
    pub fn build_scope_coupling(&mut self, orders: JsValue, name: Option<String>) -> JsResult<RawScopeCoupling> {
        let orders = orders_from(&orders).map_err(to_js)?;
        let scopes = std::mem::take(&mut self.scopes);
        Ok(RawScopeCoupling { inner: ScopeCoupling::new(scopes, &orders, name_opt(name)).map_err(to_js)? })
    }
}

#[wasm_bindgen]
pub struct RawBlockCoupling {
    inner: BlockCoupling,
}

fn list(v: &JsValue, what: &str, n: usize) -> Result<Option<Vec<Vec<f32>>>, Error> {
    let l = value_list(v, what)?;
    if let Some(l) = &l {
        if l.len() != n || v.is_instance_of::<Float32Array>() {
            return Err(Error::new(ErrorKind::ShapeMismatch, format!("{what}: expected an array of {n} Float32Array (one per spec)")));
        }
    }
    Ok(l)
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
        Ok(self.inner.nnz(nnz_eps(eps)?))
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

// ---------------------------------------------------------------- ScopeSpec

#[wasm_bindgen]
pub struct RawScopeSpec {
    inner: ScopeSpec,
}

/// Values of one scope: its node takes one array (spec) or one per spec (coupling).
fn node_values(node: &BlockNode, v: &JsValue, what: &str) -> Result<Option<Vec<Vec<f32>>>, Error> {
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
    inner: ScopeCoupling,
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
            return Err(to_js(Error::new(ErrorKind::ShapeMismatch, format!("{what}: expected {n} entries (one per scope), got {}", arr.length()))));
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
    pub fn hard_threshold(&self, opts: JsValue, thresholds: Option<Vec<f32>>, values: JsValue, on_progress: Option<Function>) -> JsResult<()> {
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
fn with_coupling_values<R>(v: &Option<Vec<Vec<Vec<f32>>>>, f: impl FnOnce(Option<&[&[&[f32]]]>) -> R) -> R {
    match v {
        None => f(None),
        Some(per) => {
            let inner: Vec<Vec<&[f32]>> = per.iter().map(|s| s.iter().map(|x| x.as_slice()).collect()).collect();
            let mid: Vec<&[&[f32]]> = inner.iter().map(|s| s.as_slice()).collect();
            f(Some(&mid))
        }
    }
}

// ---------------------------------------------------------------- N:M and exports

#[wasm_bindgen(js_name = getNmpruneInfo)]
pub fn get_nmprune_info(pattern: &str) -> JsValue {
    let (valid, m, n) = nm::get_nmprune_info(pattern);
    let o = Object::new();
    let _ = Reflect::set(&o, &"valid".into(), &valid.into());
    let _ = Reflect::set(&o, &"m".into(), &(m as f64).into());
    let _ = Reflect::set(&o, &"n".into(), &(n as f64).into());
    o.into()
}

fn count(x: f64, what: &str) -> Result<usize, JsValue> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 1e9 {
        Ok(x as usize)
    } else {
        Err(to_js(Error::new(ErrorKind::InvalidNmPattern, format!("{what} must be a non-negative integer, got {x}"))))
    }
}

fn rows_cols(shape: &[f64]) -> Result<(usize, usize), JsValue> {
    let s = sizes(shape, "shape").map_err(to_js)?;
    match s.as_slice() {
        [r, c] => Ok((*r, *c)),
        _ => Err(to_js(Error::new(ErrorKind::InvalidNmShape, format!("expected a 2-D shape [rows, cols], got {s:?}")))),
    }
}

#[wasm_bindgen(js_name = computeValid1dPatterns)]
pub fn compute_valid_1d_patterns(m: f64, n: f64) -> JsResult<Vec<u8>> {
    nm::compute_valid_1d_patterns(count(m, "m")?, count(n, "n")?).map_err(to_js)
}

#[wasm_bindgen(js_name = mn1dBest)]
pub fn mn_1d_best(values: &[f32], shape: &[f64], m: f64, n: f64) -> JsResult<Vec<u8>> {
    let (r, c) = rows_cols(shape)?;
    nm::mn_1d_best(values, r, c, count(m, "m")?, count(n, "n")?).map_err(to_js)
}

#[wasm_bindgen(js_name = m4n2_1d)]
pub fn m4n2_1d(values: &[f32], shape: &[f64]) -> JsResult<Vec<u8>> {
    let (r, c) = rows_cols(shape)?;
    nm::m4n2_1d(values, r, c).map_err(to_js)
}

#[wasm_bindgen(js_name = createAspMask)]
pub fn create_asp_mask(values: &[f32], shape: &[f64], pattern: Option<String>) -> JsResult<Vec<u8>> {
    let s = sizes(shape, "shape").map_err(to_js)?;
    nm::create_asp_mask(values, &s, pattern.as_deref().unwrap_or("m4n2_1d")).map_err(to_js)
}

#[wasm_bindgen]
pub fn fill(values: &[f32]) -> f64 {
    nm::fill(values)
}

#[wasm_bindgen(js_name = reshape1d)]
pub fn reshape_1d(values: &[f32], shape: &[f64], m: f64) -> JsResult<JsValue> {
    let (r, c) = rows_cols(shape)?;
    let (d, gs, ps) = nm::reshape_1d(values, r, c, count(m, "m")?).map_err(to_js)?;
    let o = shape_obj(Float32Array::from(d.as_slice()).into(), &gs);
    let _ = Reflect::set(&o, &"paddedShape".into(), &shape_array(&ps));
    Ok(o)
}

fn matrix<'a>(values: &'a [f32], shape: &[f64]) -> Result<(&'a [f32], usize, usize), JsValue> {
    let (r, c) = rows_cols(shape)?;
    if values.len() != r * c {
        return Err(to_js(Error::length_mismatch("values", &[r, c], r * c, values.len())));
    }
    Ok((values, r, c))
}

fn set(o: &Object, k: &str, v: JsValue) {
    let _ = Reflect::set(o, &k.into(), &v);
}

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

fn dense_from(o: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(o, &key.into()).map_err(|_| arg_err(format!("missing `{key}`")))
}

/// Decodes a CSR / BSR / 2:4 object (as returned by `toCsr`/`toBsr`/`toNm24`) to dense.
#[wasm_bindgen(js_name = sparseToDense)]
pub fn sparse_to_dense(o: JsValue) -> JsResult<Float32Array> {
    let shape: Vec<f64> = serde_wasm_bindgen::from_value(dense_from(&o, "shape")?).map_err(|e| arg_err(format!("shape: {e}")))?;
    let (r, c) = rows_cols(&shape)?;
    let u32s = |k: &str| -> Result<Vec<u32>, JsValue> {
        dense_from(&o, k)?.dyn_ref::<js_sys::Uint32Array>().map(|a| a.to_vec()).ok_or_else(|| arg_err(format!("`{k}` must be a Uint32Array")))
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
    let nnz = v.iter().filter(|&&x| x != 0.0).count();
    let o = Object::new();
    set(&o, "dense", ((r * c * 4) as f64).into());
    set(&o, "csr", (export::csr_bytes(r, nnz) as f64).into());
    let bsr = export::to_bsr(v, r, c, bh, bw).map(|m| m.byte_size() as f64).map_err(to_js)?;
    set(&o, "bsr", bsr.into());
    set(&o, "nm24", if c % 4 == 0 { (export::nm24_bytes(r, c) as f64).into() } else { JsValue::NULL });
    Ok(o.into())
}

/// ASP-style input-channel permutation search for an m:n mask of a `(rows, cols)` weight.
#[wasm_bindgen(js_name = searchPermutation)]
pub fn search_permutation(values: &[f32], shape: &[f64], m: f64, n: f64, max_sweeps: Option<f64>) -> JsResult<JsValue> {
    let (v, r, c) = matrix(values, shape)?;
    let sweeps = count(max_sweeps.unwrap_or(8.0), "maxSweeps")?;
    let res = crate::permute::search_permutation(v, r, c, count(m, "m")?, count(n, "n")?, sweeps).map_err(to_js)?;
    let o = Object::new();
    let perm: Vec<u32> = res.perm.iter().map(|&p| p as u32).collect();
    set(&o, "perm", js_sys::Uint32Array::from(perm.as_slice()).into());
    set(&o, "keptBefore", res.kept_before.into());
    set(&o, "keptAfter", res.kept_after.into());
    set(&o, "swaps", (res.swaps as f64).into());
    Ok(o.into())
}

/// The seed's MagnitudeSearcher: N:M masks for a set of params, applied in place.
#[wasm_bindgen]
pub struct RawMagnitudeSearcher {
    inner: crate::magnitude::MagnitudeSearcher,
    params: Vec<Param>,
}

#[wasm_bindgen]
impl RawMagnitudeSearcher {
    #[wasm_bindgen(constructor)]
    pub fn new(pattern: Option<String>) -> JsResult<RawMagnitudeSearcher> {
        let inner = crate::magnitude::MagnitudeSearcher::new(pattern.as_deref().unwrap_or("m4n2_1d")).map_err(to_js)?;
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
        for (p, m) in self.params.iter().zip(&masks) {
            let mut d = p.data_mut();
            for (x, &k) in d.iter_mut().zip(m) {
                *x *= f32::from(k);
            }
        }
        Ok(masks_array(masks))
    }
}
