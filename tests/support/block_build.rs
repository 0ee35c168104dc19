//! The targets of the block-family conformance cases (View, BlockSpec, BlockCoupling, ScopeSpec,
//! ScopeCoupling) built from a case, each param kept with the data it started from.

use super::cases::{i64s, opt, tensor};
use serde_json::Value;
use sparsekit_wasm::{BlockCoupling, BlockNode, BlockSpec, Param, Result, ScopeCoupling, ScopeSpec, View};

pub(crate) fn orders(v: &Value) -> Vec<Vec<i64>> {
    v.as_array().map(|a| a.iter().map(i64s).collect()).unwrap_or_default()
}

/// A param from a case, with the data it started from (to check that refusals write nothing).
pub(crate) struct P {
    pub(crate) param: Param,
    pub(crate) before: Vec<f32>,
}

pub(crate) fn make_param(v: &Value, params: &mut Vec<P>) -> Result<Param> {
    let t = tensor(v);
    let p = Param::new(t.f32(), &t.shape)?;
    params.push(P { param: p.clone(), before: t.f32() });
    Ok(p)
}

pub(crate) fn make_view(param: &Param, v: Option<&Value>) -> Result<View> {
    match v {
        None => Ok(View::from_param(param)),
        Some(v) => View::new(param, &i64s(&v["shape"]), &i64s(&v["stride"])),
    }
}

pub(crate) fn make_spec(s: &Value, params: &mut Vec<P>) -> Result<BlockSpec> {
    let p = make_param(&s["param"], params)?;
    let view = make_view(&p, opt(s, "view"))?;
    BlockSpec::new(view, &i64s(&s["block_shape"]), s.get("name").and_then(|n| n.as_str()).map(String::from))
}

pub(crate) fn make_coupling(specs: &Value, ord: &Value, params: &mut Vec<P>) -> Result<BlockCoupling> {
    let specs = specs.as_array().expect("specs").iter().map(|s| make_spec(s, params)).collect::<Result<Vec<_>>>()?;
    BlockCoupling::new(specs, &orders(ord), None)
}

pub(crate) enum Target {
    View(Option<View>),
    Spec(BlockSpec),
    Coupling(BlockCoupling),
    Scope(ScopeSpec),
    ScopeCoupling(ScopeCoupling),
}

pub(crate) fn build(case: &Value, params: &mut Vec<P>) -> Result<Target> {
    let target = case["target"].as_str().unwrap();
    Ok(match target {
        "View" => match opt(case, "param") {
            None => Target::View(None),
            Some(pv) => {
                let p = make_param(pv, params)?;
                Target::View(Some(make_view(&p, opt(case, "view"))?))
            }
        },
        "BlockSpec" => Target::Spec(make_spec(case, params)?),
        "BlockCoupling" => Target::Coupling(make_coupling(&case["specs"], &case["orders"], params)?),
        "ScopeSpec" => {
            let spec = make_spec(case, params)?;
            Target::Scope(ScopeSpec::new(BlockNode::Spec(spec), &i64s(&case["scope_shape"]), None)?)
        }
        "ScopeSpec[BlockCoupling]" => {
            let c = make_coupling(&case["specs"], &case["orders"], params)?;
            Target::Scope(ScopeSpec::new(BlockNode::Coupling(c), &i64s(&case["scope_shape"]), None)?)
        }
        "ScopeCoupling" => {
            let scopes = case["scopes"]
                .as_array()
                .expect("scopes")
                .iter()
                .map(|s| {
                    let node = if s.get("specs").is_some() {
                        BlockNode::Coupling(make_coupling(&s["specs"], &s["orders"], params)?)
                    } else {
                        BlockNode::Spec(make_spec(s, params)?)
                    };
                    ScopeSpec::new(node, &i64s(&s["scope_shape"]), None)
                })
                .collect::<Result<Vec<_>>>()?;
            Target::ScopeCoupling(ScopeCoupling::new(scopes, &orders(&case["orders"]), None)?)
        }
        t => panic!("unknown target {t}"),
    })
}
