//! A strided layout (`shape` + element strides from storage offset 0, like `torch.as_strided`
//! and `ndarray`'s raw views) and the plain walk over its offsets.

use crate::core::shape::contiguous_strides;

/// `shape` + element `stride`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strided {
    pub shape: Vec<usize>,
    pub stride: Vec<usize>,
}

impl Strided {
    /// The contiguous row-major layout of `shape`.
    pub fn contiguous(shape: &[usize]) -> Strided {
        Strided { shape: shape.to_vec(), stride: contiguous_strides(shape) }
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// One past the largest reachable offset (0 for an empty layout); `None` on overflow.
    pub fn cosize(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(0);
        }
        self.shape.iter().zip(&self.stride).try_fold(1usize, |acc, (&s, &st)| (s - 1).checked_mul(st).and_then(|x| x.checked_add(acc)))
    }

    /// True when two distinct indices reach the same storage element (writes through such a
    /// layout would hit an element twice). Exact: a fast sufficient test first, then a bitmap
    /// over the reachable offsets.
    pub fn aliases(&self) -> bool {
        // An empty layout reaches nothing (its other sizes and strides may be huge: the
        // extent sum below would overflow).
        if self.shape.contains(&0) {
            return false;
        }
        let mut dims: Vec<(usize, usize)> = self.shape.iter().zip(&self.stride).filter(|(&s, _)| s > 1).map(|(&s, &st)| (st, s)).collect();
        if dims.iter().any(|&(st, _)| st == 0) {
            return true;
        }
        dims.sort_unstable();
        let mut extent = 1usize; // span covered by the smaller-stride dims
        let mut nested = true;
        for &(st, s) in &dims {
            if st < extent {
                nested = false;
                break;
            }
            extent += st * (s - 1);
        }
        if nested {
            return false;
        }
        // Interleaved strides: check exactly.
        let cosize = self.cosize().unwrap_or(usize::MAX);
        let mut seen = vec![0u64; cosize.div_ceil(64)];
        let mut dup = false;
        for_each_offset(self, |o| {
            let (w, b) = (o / 64, 1u64 << (o % 64));
            if seen[w] & b != 0 {
                dup = true;
            }
            seen[w] |= b;
        });
        dup
    }
}

/// Calls `f` with the storage offset of every element, in row-major index order.
pub fn for_each_offset(l: &Strided, mut f: impl FnMut(usize)) {
    if l.shape.contains(&0) {
        return;
    }
    let n = l.ndim();
    if n == 0 {
        f(0);
        return;
    }
    let mut idx = vec![0usize; n];
    let mut off = 0usize;
    loop {
        f(off);
        if !next_offset(&mut idx, &l.shape, &l.stride, &mut off) {
            return;
        }
    }
}

/// Advances the row-major index `idx` over `extent` by one step and the storage offset `off`
/// with it (`stride` per dimension): false once every index has been visited (`idx` is back at
/// zeros, `off` at its start). An odometer over `idx.len()` dimensions: callers that copy the
/// last dimension in one run pass the leading ones only.
#[inline]
pub(crate) fn next_offset(idx: &mut [usize], extent: &[usize], stride: &[usize], off: &mut usize) -> bool {
    for d in (0..idx.len()).rev() {
        idx[d] += 1;
        *off += stride[d];
        if idx[d] < extent[d] {
            return true;
        }
        *off -= stride[d] * idx[d];
        idx[d] = 0;
    }
    false
}
