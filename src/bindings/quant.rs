//! Bindings of quantization (`gptq`, `roundToNearest`): conversion of JS numbers and arrays
//! only; every semantic check is in `crate::calib`.

use super::calib::RawHessian;
use super::convert::{ints, set, to_js, JsResult};
use super::param::RawView;
use crate::calib::{self, GptqOptions, Quantized};
use crate::{Error, ErrorKind};
use js_sys::{Float32Array, Int8Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;

/// One JS number that must be an integer.
fn int(x: f64, what: &str) -> Result<i64, Error> {
    Ok(ints(&[x], what)?[0])
}

/// `{codes, scales, zeros?, group, keep?}` as the package returns it.
fn quantized_obj(q: Quantized) -> JsValue {
    let o = Object::new();
    set(&o, "codes", Int8Array::from(q.codes.as_slice()).into());
    set(&o, "scales", Float32Array::from(q.scales.as_slice()).into());
    if let Some(z) = q.zeros {
        set(&o, "zeros", Int8Array::from(z.as_slice()).into());
    }
    set(&o, "group", (q.group as f64).into());
    if let Some(k) = q.keep {
        set(&o, "keep", Uint8Array::from(k.as_slice()).into());
    }
    o.into()
}

#[wasm_bindgen(js_name = rawGptq)]
#[allow(clippy::too_many_arguments)]
pub fn gptq(
    w: &RawView,
    h: &RawHessian,
    bits: f64,
    group: Option<f64>,
    sym: Option<bool>,
    full_range: Option<bool>,
    sparsity: Option<f64>,
    nm: Option<Vec<f64>>,
    keep: Option<Vec<u8>>,
    block_size: Option<f64>,
    perc_damp: Option<f64>,
    act_order: Option<bool>,
    static_groups: Option<bool>,
    scale_search: Option<bool>,
) -> JsResult<JsValue> {
    let opts = (|| {
        let nm = match nm.map(|v| ints(&v, "nm")).transpose()? {
            None => None,
            Some(v) if v.len() == 2 => Some((v[0], v[1])),
            Some(v) => return Err(Error::new(ErrorKind::InvalidArguments, format!("gptq: nm must be [n, m], got {v:?}"))),
        };
        Ok::<_, Error>(GptqOptions {
            bits: int(bits, "bits")?,
            group: group.map(|g| int(g, "group")).transpose()?,
            sym,
            full_range,
            sparsity,
            nm,
            keep,
            block_size: block_size.map(|b| int(b, "blockSize")).transpose()?,
            perc_damp,
            act_order,
            static_groups,
            scale_search,
        })
    })()
    .map_err(to_js)?;
    Ok(quantized_obj(calib::gptq(&w.inner, &h.inner, &opts).map_err(to_js)?))
}

#[wasm_bindgen(js_name = rawRoundToNearest)]
pub fn round_to_nearest(w: &RawView, bits: f64, group: Option<f64>, sym: Option<bool>, full_range: Option<bool>) -> JsResult<JsValue> {
    let bits = int(bits, "bits").map_err(to_js)?;
    let group = group.map(|g| int(g, "group")).transpose().map_err(to_js)?;
    Ok(quantized_obj(calib::round_to_nearest(&w.inner, bits, group, sym.unwrap_or(true), full_range.unwrap_or(false)).map_err(to_js)?))
}
