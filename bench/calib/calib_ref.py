#!/usr/bin/env python3
"""Bench-only numpy (OpenBLAS) reference of the calibration kernels, timed single-threaded.

It runs the same algorithm as the Rust core (API.md, "Calibration-aware pruning"): the Hessian
as the mean of x x^T over calibration vectors, then SparseGPT's column loop with lazy block
updates, so `bench/` can put the wasm figures side by side with a BLAS-backed implementation of
the same arithmetic. It is not used by any test (the test command must not need numpy).

Usage: OPENBLAS_NUM_THREADS=1 python3 bench/calib/calib_ref.py [--quick]
Prints one JSON record per line (kind "calib", env "numpy").
"""
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (the thread count must be set before numpy loads)


def make_inputs(rows, cols, nvec, seed):
    """Weights and calibration vectors: the shapes of bench/calib.rs (other random numbers; the
    timings do not depend on the values)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((rows, cols), dtype=np.float32)
    # Correlated inputs (a random mixing of a few latent factors plus noise), so H is not ~I.
    latent = rng.standard_normal((nvec, 32), dtype=np.float32)
    mix = rng.standard_normal((32, cols), dtype=np.float32)
    x = latent @ mix + 0.5 * rng.standard_normal((nvec, cols), dtype=np.float32)
    return w, x.astype(np.float32)


def hessian(x, chunk=64):
    """Mean of x x^T: float32 products per chunk of 64 vectors (as the core), folded into float64."""
    cols = x.shape[1]
    acc = np.zeros((cols, cols), dtype=np.float64)
    for i in range(0, x.shape[0], chunk):
        c = x[i:i + chunk]
        acc += (c.T @ c).astype(np.float64)
    return acc / x.shape[0]


def upper_chol_of_inverse(h):
    """U upper triangular with H^-1 = U^T U."""
    low = np.linalg.cholesky(h)
    inv = np.linalg.inv(low)
    hinv = inv.T @ inv
    return np.linalg.cholesky(hinv).T


def sparse_gpt(w, h, sparsity, block=128, perc_damp=0.01):
    """In-place SparseGPT on w (rows = outputs); returns the keep-mask."""
    h = h.copy()
    dead = np.diag(h) == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    h[np.diag_indices_from(h)] += perc_damp * np.mean(np.diag(h))
    u = upper_chol_of_inverse(h).astype(np.float32)
    rows, cols = w.shape
    keep = np.ones((rows, cols), dtype=np.uint8)
    for i1 in range(0, cols, block):
        i2 = min(i1 + block, cols)
        w1 = w[:, i1:i2].copy()
        d = np.diag(u)[i1:i2]
        scores = (w1 / d) ** 2
        nkeep = int(np.floor((1.0 - sparsity) * scores.size + 0.5))
        order = np.argsort(-scores, axis=None, kind="stable")
        k1 = np.zeros(scores.size, dtype=np.uint8)
        k1[order[:nkeep]] = 1
        k1 = k1.reshape(scores.shape)
        err = np.zeros_like(w1)
        for j in range(i2 - i1):
            col = w1[:, j]
            q = col * k1[:, j]
            e = (col - q) / u[i1 + j, i1 + j]
            w1[:, j:] -= np.outer(e, u[i1 + j, i1 + j:i2])
            w1[:, j] = q
            err[:, j] = e
        w[:, i1:i2] = w1
        w[:, i2:] -= err @ u[i1:i2, i2:]
        keep[:, i1:i2] = k1
    return keep


def best_of(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[0], times[len(times) // 2]


def main():
    quick = "--quick" in sys.argv
    nvec = 1024 if quick else 4096
    reps = 1 if quick else 3
    out = []
    for rows, cols in [(3072, 768), (768, 3072)]:
        w, x = make_inputs(rows, cols, nvec, seed=rows * 7 + cols)
        best, med = best_of(lambda: hessian(x), reps)
        # Useful flops of the symmetric update (upper triangle incl. diagonal), as bench/calib/calib-suite.mjs.
        flops = float(nvec) * cols * (cols + 1)
        out.append({"kind": "calib", "env": "numpy", "variant": "openblas-1t", "op": "hessian",
                    "rows": rows, "cols": cols, "nvec": nvec, "seconds": best, "median_seconds": med,
                    "gflops": flops / best / 1e9})
        h = hessian(x)

        def run():
            sparse_gpt(w.copy(), h, 0.5)

        best, med = best_of(run, reps)
        out.append({"kind": "calib", "env": "numpy", "variant": "openblas-1t", "op": "sparsegpt",
                    "rows": rows, "cols": cols, "nvec": nvec, "block": 128,
                    "seconds": best, "median_seconds": med})
    for rec in out:
        print(json.dumps(rec))


if __name__ == "__main__":
    main()
