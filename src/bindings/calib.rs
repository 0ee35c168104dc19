//! Bindings of calibration-aware pruning (`Hessian`, `wandaScores`, `sparseGpt`): conversion of
//! JS numbers and arrays only; every semantic check is in `crate::calib`.

use super::convert::{ints, sizes, to_js, JsResult};
use super::param::RawView;
use crate::calib::{self, ConvGeometry, Hessian, SparseGptOptions};
use crate::{Error, ErrorKind};
use js_sys::Float32Array;
use wasm_bindgen::prelude::*;

/// One JS number that must be a non-negative integer (a count or size).
fn size(x: f64, what: &str) -> Result<usize, Error> {
    Ok(sizes(&[x], what)?[0])
}

fn opt_ints(v: Option<Vec<f64>>, what: &str) -> Result<Option<Vec<i64>>, Error> {
    v.map(|v| ints(&v, what)).transpose()
}

#[wasm_bindgen]
pub struct RawHessian {
    pub(super) inner: Hessian,
}

#[wasm_bindgen]
impl RawHessian {
    #[wasm_bindgen(constructor)]
    pub fn new(cols: f64) -> JsResult<RawHessian> {
        let cols = size(cols, "Hessian cols").map_err(to_js)?;
        Ok(RawHessian { inner: Hessian::new(cols).map_err(to_js)? })
    }
    pub fn cols(&self) -> usize {
        self.inner.cols()
    }
    pub fn count(&self) -> f64 {
        self.inner.count() as f64
    }
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(&mut self, x: &[f32], n: f64) -> JsResult<()> {
        let n = size(n, "Hessian.addRows n").map_err(to_js)?;
        self.inner.add_rows(x, n).map_err(to_js)
    }
    #[wasm_bindgen(js_name = addConv)]
    pub fn add_conv(
        &mut self,
        x: &[f32],
        input_shape: &[f64],
        kernel_shape: &[f64],
        strides: Option<Vec<f64>>,
        pads: Option<Vec<f64>>,
        dilations: Option<Vec<f64>>,
    ) -> JsResult<()> {
        let conv = (|| {
            Ok::<_, Error>(ConvGeometry {
                kernel_shape: ints(kernel_shape, "kernelShape")?,
                strides: opt_ints(strides, "strides")?,
                pads: opt_ints(pads, "pads")?,
                dilations: opt_ints(dilations, "dilations")?,
            })
        })()
        .map_err(to_js)?;
        let shape = ints(input_shape, "inputShape").map_err(to_js)?;
        self.inner.add_conv(x, &shape, &conv).map_err(to_js)
    }
    pub fn matrix(&self) -> JsResult<Float32Array> {
        Ok(Float32Array::from(self.inner.matrix().map_err(to_js)?.as_slice()))
    }
    #[wasm_bindgen(js_name = inputNorms)]
    pub fn input_norms(&self) -> Vec<f32> {
        self.inner.input_norms()
    }
    #[wasm_bindgen(js_name = inputMeans)]
    pub fn input_means(&self) -> Vec<f64> {
        self.inner.means()
    }
    pub fn centered(&self) -> JsResult<RawHessian> {
        Ok(RawHessian { inner: self.inner.centered().map_err(to_js)? })
    }
}

#[wasm_bindgen(js_name = rawWandaScores)]
pub fn wanda_scores(w: &RawView, h: &RawHessian) -> JsResult<Vec<f32>> {
    calib::wanda_scores(&w.inner, &h.inner).map_err(to_js)
}

#[wasm_bindgen(js_name = rawSparseGpt)]
#[allow(clippy::too_many_arguments)]
pub fn sparse_gpt(
    w: &RawView,
    h: &RawHessian,
    sparsity: Option<f64>,
    nm: Option<Vec<f64>>,
    keep: Option<Vec<u8>>,
    block_size: Option<f64>,
    perc_damp: Option<f64>,
    refit: Option<f64>,
) -> JsResult<Vec<u8>> {
    let nm = match opt_ints(nm, "nm").map_err(to_js)? {
        None => None,
        Some(v) if v.len() == 2 => Some((v[0], v[1])),
        Some(v) => return Err(to_js(Error::new(ErrorKind::InvalidArguments, format!("sparseGpt: nm must be [n, m], got {v:?}")))),
    };
    let block_size = block_size.map(|b| ints(&[b], "blockSize").map(|v| v[0])).transpose().map_err(to_js)?;
    let refit = refit.map(|k| ints(&[k], "refit").map(|v| v[0])).transpose().map_err(to_js)?;
    let opts = SparseGptOptions { sparsity, nm, keep, block_size, perc_damp, refit };
    calib::sparse_gpt(&w.inner, &h.inner, &opts).map_err(to_js)
}

#[wasm_bindgen(js_name = rawRelReconError)]
pub fn rel_recon_error(before: &[f32], after: &[f32], h: &RawHessian) -> JsResult<f64> {
    calib::rel_recon_error(before, after, &h.inner).map_err(to_js)
}
