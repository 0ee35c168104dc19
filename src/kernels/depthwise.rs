//! Depthwise convolution (one input channel per output channel) on one image plane, directly:
//! no column matrix. Through im2col a depthwise layer is a GEMM with one row, whose unfolding
//! copies every input pixel `kh * kw` times and whose weight gradient needs a transpose; here
//! the plane is copied once into a zero-padded buffer and the kernel slides over it.
//!
//! Each element sees the operations of [`super::im2col`] + [`super::gemm`] in their order, so
//! the bits are those of that path (tests/train_kernels.rs checks it): an output is its bias,
//! then `+ w_p * x_p` for kernel offsets `p` in row-major order (a padded `x_p` is a stored
//! zero, as in the column matrix); an input gradient sums `w_p * dy_o` over `p` outer, output
//! pixels `o` inner (col2im's order); a weight gradient sums `dy_o * x_p` over `o` in order,
//! one output row per chunk (the GEMM's chunked sums with `kc = ow`). Plain loops (no SIMD intrinsics): the compiler vectorizes them across
//! output pixels or kernel columns, each lane an element of its own, so every build agrees.

use super::im2col::ConvGeom;

/// Extra zeros after a padded plane: [`weight_grad`] reads four kernel columns at a time and
/// drops the lanes past the kernel's width.
const SLACK_LANES: usize = 4;

/// The padded plane a [`ConvGeom`] (with `c == 1`) slides over: `rows x cols`, the image at
/// `(ph, pw)`, zero elsewhere (trailing pads included as far as the output reaches).
#[derive(Debug, Clone, Copy)]
pub struct Padded {
    pub rows: usize,
    pub cols: usize,
}

impl Padded {
    pub fn of(g: &ConvGeom) -> Padded {
        Padded { rows: (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1, cols: (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 }
    }

    /// Length of a padded buffer, slack included.
    pub fn len(&self, g: &ConvGeom) -> usize {
        self.rows * self.cols + SLACK_LANES * g.dw
    }

    /// Copies image `x` (`h x w`) into `xp` (zeroed, [`Padded::len`] long).
    pub fn pad(&self, g: &ConvGeom, x: &[f32], xp: &mut [f32]) {
        let rows = g.h.min(self.rows.saturating_sub(g.ph));
        let cols = g.w.min(self.cols.saturating_sub(g.pw));
        for iy in 0..rows {
            xp[(iy + g.ph) * self.cols + g.pw..][..cols].copy_from_slice(&x[iy * g.w..][..cols]);
        }
    }

    /// The image part of a padded gradient `dxp` into `dx` (`h x w`; pixels no window reads
    /// get zero).
    pub fn unpad(&self, g: &ConvGeom, dxp: &[f32], dx: &mut [f32]) {
        let rows = g.h.min(self.rows.saturating_sub(g.ph));
        let cols = g.w.min(self.cols.saturating_sub(g.pw));
        dx.fill(0.0);
        for iy in 0..rows {
            dx[iy * g.w..][..cols].copy_from_slice(&dxp[(iy + g.ph) * self.cols + g.pw..][..cols]);
        }
    }
}

fn check(g: &ConvGeom, p: &Padded, xp: usize, w: usize, y: usize) {
    assert!(g.c == 1 && g.oh > 0 && g.ow > 0, "depthwise: one channel, a non-empty output");
    assert!(xp >= p.len(g) && w >= g.kh * g.kw && y >= g.cols(), "depthwise: buffers too short");
}

/// Output vectors of [`forward`] advanced together: independent accumulator chains, so a plane
/// with short rows (4 x 4 outputs under a 5 x 5 kernel) is not bound by one chain's latency.
const VECS: usize = 4;

/// `y += conv(xp, w)` on one plane: `y` (`oh x ow`) holds the bias (or zeros) on entry.
///
/// Outputs go four at a time along a row (one vector each), [`VECS`] vectors at once, each kept
/// in registers over all kernel offsets in row-major order (the order of the im2col + GEMM path)
/// and stored once; the columns past the last multiple of 4 go one by one in the same order.
pub fn forward(g: &ConvGeom, p: &Padded, xp: &[f32], w: &[f32], y: &mut [f32]) {
    check(g, p, xp.len(), w.len(), y.len());
    let taps: Vec<(usize, f32)> =
        (0..g.kh).flat_map(|i| (0..g.kw).map(move |j| (i, j))).map(|(i, j)| (i * g.dh * p.cols + j * g.dw, w[i * g.kw + j])).collect();
    let ow4 = g.ow / 4 * 4;
    // (output offset, padded-plane offset) of every whole vector, row by row
    let vecs: Vec<(usize, usize)> = (0..g.oh)
        .flat_map(|oy| (0..ow4).step_by(4).map(move |ox| (oy, ox)))
        .map(|(oy, ox)| (oy * g.ow + ox, oy * g.sh * p.cols + ox * g.sw))
        .collect();
    for tile in vecs.chunks(VECS) {
        // one monomorphic loop per stride class and tile size, so the accumulators stay in registers
        macro_rules! run {
            ($($n:literal)*) => {
                match tile.len() {
                    $($n => {
                        let t: &[(usize, usize); $n] = tile.try_into().unwrap();
                        match g.sw { 1 => vecs_fwd::<1, $n>(g, xp, &taps, t, y), 2 => vecs_fwd::<2, $n>(g, xp, &taps, t, y), _ => vecs_fwd::<0, $n>(g, xp, &taps, t, y) }
                    })*
                    _ => unreachable!("tiles hold 1..=VECS vectors"),
                }
            };
        }
        run!(1 2 3 4);
    }
    for oy in 0..g.oh {
        for ox in ow4..g.ow {
            let base = oy * g.sh * p.cols + ox * g.sw;
            let yv = &mut y[oy * g.ow + ox];
            for &(off, wv) in &taps {
                *yv += wv * xp[base + off];
            }
        }
    }
}

/// The tiles of [`forward`]: lane `l` of a vector at plane offset `b` reads `xp[b + off + l * sw]`;
/// `SW` is the column stride as a constant (1, 2) or 0 for any other (read from `g`).
#[inline(always)]
fn vecs_fwd<const SW: usize, const NV: usize>(g: &ConvGeom, xp: &[f32], taps: &[(usize, f32)], tile: &[(usize, usize); NV], y: &mut [f32]) {
    let sw = if SW == 0 { g.sw } else { SW };
    let mut acc = [[0.0f32; 4]; NV];
    for (a, &(yo, _)) in acc.iter_mut().zip(tile) {
        *a = y[yo..yo + 4].try_into().unwrap();
    }
    for &(off, wv) in taps {
        for (a, &(_, b)) in acc.iter_mut().zip(tile) {
            let s = b + off;
            if SW == 1 {
                let v: &[f32; 4] = xp[s..s + 4].try_into().unwrap();
                for l in 0..4 {
                    a[l] += wv * v[l];
                }
            } else {
                let v = &xp[s..s + 3 * sw + 1];
                for l in 0..4 {
                    a[l] += wv * v[l * sw];
                }
            }
        }
    }
    for (a, &(yo, _)) in acc.iter().zip(tile) {
        y[yo..yo + 4].copy_from_slice(a);
    }
}

/// `dxp += convᵀ(dy, w)` on one padded plane (zeroed on entry; [`Padded::unpad`] after).
pub fn input_grad(g: &ConvGeom, p: &Padded, w: &[f32], dy: &[f32], dxp: &mut [f32]) {
    check(g, p, dxp.len(), w.len(), dy.len());
    for i in 0..g.kh {
        for j in 0..g.kw {
            let wv = w[i * g.kw + j];
            for oy in 0..g.oh {
                let dyr = &dy[oy * g.ow..][..g.ow];
                let dst = &mut dxp[(oy * g.sh + i * g.dh) * p.cols + j * g.dw..];
                if g.sw == 1 {
                    dst[..g.ow].iter_mut().zip(dyr).for_each(|(d, &v)| *d += wv * v);
                } else {
                    dyr.iter().enumerate().for_each(|(ox, &v)| dst[ox * g.sw] += wv * v);
                }
            }
        }
    }
}

/// Kernel offsets whose sums advance together: groups of four columns of a kernel row, up to
/// this many groups at once (independent chains for the CPU to overlap).
const GROUPS: usize = 6;

/// `dw += Σ_o dy_o x_{o,p}` for every kernel offset `p`, `o` in row-major order.
pub fn weight_grad(g: &ConvGeom, p: &Padded, xp: &[f32], dy: &[f32], dw: &mut [f32]) {
    check(g, p, xp.len(), dw.len(), dy.len());
    // (kernel row, first of four kernel columns)
    let quads: Vec<(usize, usize)> = (0..g.kh).flat_map(|i| (0..g.kw).step_by(4).map(move |j| (i, j))).collect();
    for batch in quads.chunks(GROUPS) {
        let mut acc = [[0.0f32; 4]; GROUPS];
        let mut off = [0usize; GROUPS];
        for (q, &(i, j)) in batch.iter().enumerate() {
            off[q] = i * g.dh * p.cols + j * g.dw;
            for l in 0..(g.kw - j).min(4) {
                acc[q][l] = dw[i * g.kw + j + l];
            }
        }
        // one monomorphic loop per group count, so the accumulators stay in registers
        macro_rules! run {
            ($($n:literal)*) => {
                match batch.len() {
                    $($n => {
                        let (o, a) = (off[..$n].try_into().unwrap(), (&mut acc[..$n]).try_into().unwrap());
                        if g.dw == 1 { sums::<1, $n>(g, p, xp, dy, o, a) } else { sums::<0, $n>(g, p, xp, dy, o, a) }
                    })*
                    _ => unreachable!("batches hold 1..=GROUPS quads"),
                }
            };
        }
        run!(1 2 3 4 5 6);
        for (q, &(i, j)) in batch.iter().enumerate() {
            for l in 0..(g.kw - j).min(4) {
                dw[i * g.kw + j + l] = acc[q][l];
            }
        }
    }
}

/// The chains of [`weight_grad`]: lane `l` of group `q` reads `xp[base + off[q] + l * dw]`.
/// `LS == 1` is the common unit dilation, as a constant so the four lanes are one load. Each
/// output row is summed from zero and then added to `acc`: the GEMM's chunked contract with
/// `kc = ow`, so that a large plane's sum keeps its precision, the inner loop stays one row,
/// and the bits are the column path's (`dW += dY · colᵀ` with `kc = ow`).
#[inline(always)]
fn sums<const LS: usize, const NQ: usize>(g: &ConvGeom, p: &Padded, xp: &[f32], dy: &[f32], off: &[usize; NQ], acc: &mut [[f32; 4]; NQ]) {
    let ls = if LS == 1 { 1 } else { g.dw };
    for oy in 0..g.oh {
        let dyr = &dy[oy * g.ow..][..g.ow];
        let mut a = [[0.0f32; 4]; NQ];
        for (ox, &d) in dyr.iter().enumerate() {
            let base = oy * g.sh * p.cols + ox * g.sw;
            for q in 0..NQ {
                let s = base + off[q];
                if LS == 1 {
                    let v: &[f32; 4] = xp[s..s + 4].try_into().unwrap();
                    for l in 0..4 {
                        a[q][l] += d * v[l];
                    }
                } else {
                    for l in 0..4 {
                        a[q][l] += d * xp[s + l * ls];
                    }
                }
            }
        }
        for q in 0..NQ {
            for l in 0..4 {
                acc[q][l] += a[q][l];
            }
        }
    }
}
