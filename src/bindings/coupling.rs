//! `RawCouplingBuilder`: collects block specs or scope specs one by one and builds a
//! `BlockCoupling` or a `ScopeCoupling` from them. It sits above both classes' files so that
//! `block.rs` and `scope.rs` need not know each other (scope → block only).

use super::block::{RawBlockCoupling, RawBlockSpec};
use super::convert::*;
use super::scope::{RawScopeCoupling, RawScopeSpec};
use crate::block::{BlockCoupling, BlockSpec};
use crate::core::error::{Error, ErrorKind};
use crate::scope::{ScopeCoupling, ScopeSpec};
use wasm_bindgen::prelude::*;

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
    raw.iter().map(|o| ints(o, "orders").map_err(|e| Error::new(ErrorKind::InvalidOrders, e.message()))).collect()
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
