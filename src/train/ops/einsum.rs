//! Einsum on one or two operands, lowered to what the core already has: each operand is permuted
//! so that its letters run [batch, free, contracted] (letters only it has and the output lacks are
//! summed away first), the two meet in one batched matrix product on the kernels' GEMM (the
//! arithmetic of MatMul), and the product is permuted to the output's letters. That covers what
//! exports write (`bhid,bhjd->bhij`, `bij,bjk->bik`, `ij->ji`, `bij->bj`, implicit outputs);
//! ellipses, repeated letters (diagonals), more than two operands and letters whose sizes differ
//! (broadcasting) are refused with the equation named.

use super::linear::matmul_acc;
use super::{fin, gout0, unsupported, Attrs, Kernel};
use crate::core::error::{Error, ErrorKind, Result};
use crate::kernels::gemm::SUM_CHUNK;
use crate::train::gather::SepMap;
use crate::train::tensor::{strides, Tensor, Value};

pub struct Einsum {
    eq: String,
    terms: Vec<Vec<char>>,
    out: Vec<char>,
}

impl Einsum {
    pub fn new(a: &Attrs) -> Result<Einsum> {
        let eq: String = a.str("equation", "")?.chars().filter(|c| !c.is_whitespace()).collect();
        let refuse = |why: &str| Err(unsupported("Einsum", &format!("equation '{eq}': {why}")));
        if eq.is_empty() {
            return refuse("no equation");
        }
        if eq.contains("...") {
            return refuse("ellipses (broadcast dimensions) are not read by the training core");
        }
        let (lhs, rhs) = match eq.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (eq.as_str(), None),
        };
        let terms: Vec<Vec<char>> = lhs.split(',').map(|t| t.chars().collect()).collect();
        if terms.len() > 2 {
            return refuse("more than two operands");
        }
        for t in terms.iter().chain(rhs.map(|r| r.chars().collect::<Vec<_>>()).as_ref()) {
            if t.iter().any(|c| !c.is_ascii_alphabetic()) {
                return refuse("a subscript that is not a letter");
            }
            if t.iter().enumerate().any(|(i, c)| t[..i].contains(c)) {
                return refuse("a letter repeated within one term (a diagonal or trace)");
            }
        }
        let all: Vec<char> = terms.concat();
        let out: Vec<char> = match rhs {
            Some(r) => r.chars().collect(),
            // implicit mode: the letters that appear once, in alphabetical order
            None => {
                let mut o: Vec<char> = all.iter().copied().filter(|c| all.iter().filter(|d| *d == c).count() == 1).collect();
                o.sort_unstable();
                o
            }
        };
        if out.iter().any(|c| !all.contains(c)) {
            return refuse("an output letter no operand has");
        }
        Ok(Einsum { eq, terms, out })
    }

    fn err(&self, what: String) -> Error {
        Error::new(ErrorKind::ShapeMismatch, format!("Einsum '{}': {what}", self.eq))
    }

    /// The size of every letter, checked across operands.
    fn sizes(&self, xs: &[&Tensor]) -> Result<Vec<(char, usize)>> {
        let mut s: Vec<(char, usize)> = Vec::new();
        for (t, x) in self.terms.iter().zip(xs) {
            if t.len() != x.rank() {
                return Err(self.err(format!("term '{}' for an operand of shape {:?}", t.iter().collect::<String>(), x.shape)));
            }
            for (&c, &d) in t.iter().zip(&x.shape) {
                match s.iter().find(|(l, _)| *l == c) {
                    Some(&(_, e)) if e != d => return Err(self.err(format!("letter '{c}' is {e} in one operand and {d} in another"))),
                    Some(_) => {}
                    None => s.push((c, d)),
                }
            }
        }
        Ok(s)
    }

    fn operands<'a>(&self, ins: &[Option<&'a Value>]) -> Result<Vec<&'a Tensor>> {
        if ins.len() != self.terms.len() {
            return Err(self.err(format!("{} operands for {} terms", ins.len(), self.terms.len())));
        }
        (0..ins.len()).map(|i| fin(ins, i, "Einsum")).collect()
    }

    /// For two operands: the letters of A' = [batch, m, k], B' = [batch, k, n] and C = [batch, m, n].
    fn groups(&self) -> [Vec<char>; 4] {
        let (a, b, o) = (&self.terms[0], &self.terms[1], &self.out);
        let batch = a.iter().copied().filter(|c| b.contains(c) && o.contains(c)).collect();
        let m = a.iter().copied().filter(|c| !b.contains(c) && o.contains(c)).collect();
        let k = a.iter().copied().filter(|c| b.contains(c) && !o.contains(c)).collect();
        let n = b.iter().copied().filter(|c| !a.contains(c) && o.contains(c)).collect();
        [batch, m, k, n]
    }
}

/// An operand reordered to `target` letters, the letters outside `target` summed away.
struct Reorder {
    perm: Vec<usize>,
    keep: usize,
}

impl Reorder {
    fn new(term: &[char], target: &[char]) -> Reorder {
        let mut perm: Vec<usize> = target.iter().map(|c| term.iter().position(|t| t == c).unwrap_or(0)).collect();
        perm.extend((0..term.len()).filter(|&i| !target.contains(&term[i])));
        Reorder { perm, keep: target.len() }
    }

    fn map(&self, shape: &[usize]) -> SepMap {
        let st = strides(shape);
        SepMap {
            out_shape: self.perm.iter().map(|&a| shape[a]).collect(),
            maps: self.perm.iter().map(|&a| SepMap::axis(0, shape[a], st[a])).collect(),
        }
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = if self.perm.iter().enumerate().all(|(i, &a)| i == a) { x.clone() } else { self.map(&x.shape).gather(x, 0.0)? };
        if self.keep == y.rank() {
            return Ok(y);
        }
        let shape = y.shape[..self.keep].to_vec();
        let inner: usize = y.shape[self.keep..].iter().product();
        let mut r = Tensor::zeros(&shape)?;
        // each kept element's sum in f64, in row-major order of the summed letters
        r.data.iter_mut().enumerate().for_each(|(o, v)| *v = y.data[o * inner..][..inner].iter().map(|&x| x as f64).sum::<f64>() as f32);
        Ok(r)
    }

    /// The adjoint of [`Reorder::forward`]: `g` spread over the summed letters, permuted back.
    fn backward(&self, g: &Tensor, shape: &[usize]) -> Result<Tensor> {
        let m = self.map(shape);
        let inner: usize = m.out_shape[self.keep..].iter().product();
        let gp = Tensor { shape: m.out_shape.clone(), data: g.data.iter().flat_map(|&v| std::iter::repeat_n(v, inner)).collect() };
        let mut dx = Tensor::zeros(shape)?;
        m.scatter_add(&gp, &mut dx);
        Ok(dx)
    }
}

fn size_of(s: &[(char, usize)], cs: &[char]) -> usize {
    cs.iter().map(|c| s.iter().find(|(l, _)| l == c).map_or(1, |x| x.1)).product()
}

impl Kernel for Einsum {
    fn forward(&self, ins: &[Option<&Value>]) -> Result<Vec<Value>> {
        let xs = self.operands(ins)?;
        let s = self.sizes(&xs)?;
        if xs.len() == 1 {
            return Ok(vec![Value::F(Reorder::new(&self.terms[0], &self.out).forward(xs[0])?)]);
        }
        let [batch, m, k, n] = self.groups();
        let a = Reorder::new(&self.terms[0], &[batch.clone(), m.clone(), k.clone()].concat()).forward(xs[0])?;
        let b = Reorder::new(&self.terms[1], &[batch.clone(), k.clone(), n.clone()].concat()).forward(xs[1])?;
        let (nb, mm, kk, nn) = (size_of(&s, &batch), size_of(&s, &m), size_of(&s, &k), size_of(&s, &n));
        let c_letters = [batch, m, n].concat();
        let c_shape: Vec<usize> = c_letters.iter().map(|c| size_of(&s, &[*c])).collect();
        let mut c = Tensor::zeros(&c_shape)?;
        for t in 0..nb {
            matmul_acc(
                &a.data[t * mm * kk..][..mm * kk],
                false,
                &b.data[t * kk * nn..][..kk * nn],
                false,
                mm,
                kk,
                nn,
                0,
                &mut c.data[t * mm * nn..][..mm * nn],
            );
        }
        Ok(vec![Value::F(Reorder::new(&c_letters, &self.out).forward(&c)?)])
    }

    fn backward(&self, ins: &[Option<&Value>], outs: &[&Value], gouts: &[Option<&Tensor>]) -> Result<Vec<Option<Tensor>>> {
        let xs = self.operands(ins)?;
        let s = self.sizes(&xs)?;
        let g = gout0(gouts, outs[0].shape())?;
        if xs.len() == 1 {
            return Ok(vec![Some(Reorder::new(&self.terms[0], &self.out).backward(&g, &xs[0].shape)?)]);
        }
        let [batch, m, k, n] = self.groups();
        let ra = Reorder::new(&self.terms[0], &[batch.clone(), m.clone(), k.clone()].concat());
        let rb = Reorder::new(&self.terms[1], &[batch.clone(), k.clone(), n.clone()].concat());
        let (a, b) = (ra.forward(xs[0])?, rb.forward(xs[1])?);
        let (nb, mm, kk, nn) = (size_of(&s, &batch), size_of(&s, &m), size_of(&s, &k), size_of(&s, &n));
        // the output's gradient in C's letter order (a permutation: nothing is summed)
        let c_letters = [batch, m, n].concat();
        let gc = Reorder::new(&self.out, &c_letters).forward(&g)?;
        let (mut da, mut db) = (Tensor::zeros(&a.shape)?, Tensor::zeros(&b.shape)?);
        for t in 0..nb {
            let go = &gc.data[t * mm * nn..][..mm * nn];
            matmul_acc(go, false, &b.data[t * kk * nn..][..kk * nn], true, mm, nn, kk, 0, &mut da.data[t * mm * kk..][..mm * kk]);
            matmul_acc(&a.data[t * mm * kk..][..mm * kk], true, go, false, kk, mm, nn, SUM_CHUNK, &mut db.data[t * kk * nn..][..kk * nn]);
        }
        Ok(vec![Some(ra.backward(&da, &xs[0].shape)?), Some(rb.backward(&db, &xs[1].shape)?)])
    }
}
