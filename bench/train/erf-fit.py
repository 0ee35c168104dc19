"""Bench only: fits the two polynomials of the kernels' f32 erf (src/kernels/scalar/erf.rs) and checks
the f32 evaluation against f64 erf.

Below 1: erf(x) / x as a polynomial P in t = x^2 (degree 6). From 1 to 4: erfc(x) e^(x^2) as a
polynomial Q in v = 1/x - 0.625 (degree 10). Both by least squares weighted to relative error, on
Chebyshev nodes. The check evaluates the kernel's operations in numpy float32 (Horner without fused
multiply-add, a correctly rounded exp standing in for the kernels' exp, which is within 1 ulp) on every
35th float of [0, 4.5) and prints the largest error in ulps.

Usage: /work/venv/bin/python bench/train/erf-fit.py   (numpy; bench/requirements.txt)
"""
import math

import numpy as np

F32 = np.float32
CENTRE = 0.625
erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def chebyshev(lo, hi, n=6000):
    return np.cos(np.linspace(0, np.pi, n)) * (hi - lo) / 2 + (hi + lo) / 2


def fit_small(deg=6):
    x = chebyshev(0.0, 1.0)
    x = x[x > 1e-7]
    y = erf(x) / x
    return np.polyfit(x * x, y, deg, w=1 / y)


def fit_large(deg=10):
    x = chebyshev(1.0, 4.0)
    y = erfc(x) * np.exp(x * x)
    return np.polyfit(1 / x - CENTRE, y, deg, w=1 / y)


def horner32(c, v):
    q = np.full_like(v, F32(c[0]))
    for k in c[1:]:
        q = (q * v).astype(F32) + F32(k)
    return q.astype(F32)


def erf32(x, small, large):
    ax = np.abs(x.astype(F32))
    lo = (ax * horner32(small, (ax * ax).astype(F32))).astype(F32)
    xc = np.minimum(np.maximum(ax, F32(1.0)), F32(4.0))
    v = ((F32(1.0) / xc).astype(F32) - F32(CENTRE)).astype(F32)
    e = np.exp(-(xc * xc).astype(F32).astype(np.float64)).astype(F32)
    hi = (F32(1.0) - (e * horner32(large, v)).astype(F32)).astype(F32)
    return np.copysign(np.where(ax < 1.0, lo, hi), x)


def main():
    small = [F32(c) for c in fit_small()]
    large = [F32(c) for c in fit_large()]
    print("SMALL", [repr(float(c)) for c in small])
    print("LARGE", [repr(float(c)) for c in large])
    bits = np.arange(1, F32(4.5).view(np.int32), 35, dtype=np.int64).astype(np.int32)
    xs = bits.view(F32)
    want = np.array([math.erf(float(v)) for v in xs]).astype(F32)
    got = erf32(xs, small, large)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    print(f"{len(xs)} floats: at most {ulps.max()} ulps (at {xs[np.argmax(ulps)]:e}), mean {ulps.mean():.3f}")


if __name__ == "__main__":
    main()
