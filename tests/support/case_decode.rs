//! Decoding a case: tensors (shape and flat data), numbers (with the infinities and NaN the
//! case files spell as strings), and the JSON the results are written back as; the strided walk
//! the block cases address params with.

use serde_json::{json, Value};

/// A case tensor: shape and flat row-major data (float32 entries already rounded to f32).
#[derive(Debug, Clone)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Tensor {
    pub fn f32(&self) -> Vec<f32> {
        self.data.iter().map(|&x| x as f32).collect()
    }
    pub fn u8(&self) -> Vec<u8> {
        self.data.iter().map(|&x| u8::from(x != 0.0)).collect()
    }
    pub fn i64(&self) -> Vec<i64> {
        self.data.iter().map(|&x| x as i64).collect()
    }
}

/// A JSON scalar as a number: booleans are 0/1, and the strings `NaN`, `Infinity`, `-Infinity`
/// (and the short `inf` / `-inf`) are the non-finite values the cases spell as text.
pub fn num(v: &Value) -> f64 {
    match v {
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().expect("number"),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "nan" => f64::NAN,
            "inf" | "infinity" | "+inf" | "+infinity" => f64::INFINITY,
            "-inf" | "-infinity" => f64::NEG_INFINITY,
            _ => panic!("not a number: {s:?}"),
        },
        other => panic!("not a number: {other}"),
    }
}

pub fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        x => out.push(num(x)),
    }
}

/// Whether a tensor's entries are float32 (the default when no dtype is given).
pub fn is_float(v: &Value) -> bool {
    v.get("dtype").and_then(Value::as_str).is_none_or(|d| d.starts_with("float"))
}

/// `{dtype, shape, data}` -> Tensor; float entries are rounded to f32, so their bits are the case's.
pub fn tensor(v: &Value) -> Tensor {
    let shape = usizes(&v["shape"]);
    let mut data = Vec::new();
    flatten(&v["data"], &mut data);
    if is_float(v) {
        data.iter_mut().for_each(|x| *x = f64::from(*x as f32));
    }
    Tensor { shape, data }
}

pub fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .map(|a| a.iter().map(|x| usize::try_from(x.as_u64().expect("non-negative integer")).expect("usize")).collect())
        .unwrap_or_default()
}

pub fn i64s(v: &Value) -> Vec<i64> {
    v.as_array().map(|a| a.iter().map(|x| x.as_i64().expect("integer")).collect()).unwrap_or_default()
}

/// `args[k]` unless absent or `null`.
pub fn opt<'a>(args: &'a Value, k: &str) -> Option<&'a Value> {
    args.get(k).filter(|v| !v.is_null())
}

/// A tensor result as JSON, in the cases' own encoding (non-finite values as strings).
pub fn tensor_json(shape: &[usize], data: impl IntoIterator<Item = f64>) -> Value {
    let data: Vec<Value> = data.into_iter().map(f64_json).collect();
    json!({ "shape": shape, "data": data })
}

pub fn f64_json(x: f64) -> Value {
    if x.is_nan() {
        json!("NaN")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(x)
    }
}

pub fn f32s_json(shape: &[usize], d: &[f32]) -> Value {
    tensor_json(shape, d.iter().map(|&x| f64::from(x)))
}

pub fn u8s_json(shape: &[usize], d: &[u8]) -> Value {
    tensor_json(shape, d.iter().map(|&x| f64::from(x)))
}

/// Row-major strides of a contiguous shape.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

/// Calls `f` with the storage offset of every view element, in row-major view order.
pub fn for_each_offset(shape: &[usize], stride: &[usize], mut f: impl FnMut(usize)) {
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    for flat in 0..n {
        let mut r = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        f(idx.iter().zip(stride).map(|(i, s)| i * s).sum());
    }
}
