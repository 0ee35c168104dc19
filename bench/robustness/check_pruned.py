# Bench only (needs /work/venv: numpy, onnx, onnxruntime; never run by the test command).
# A pruned model as onnxruntime (Python) sees it, against the model it was pruned from: the sparsity
# of every MatMul weight, read a tensor at a time from the external data file (the model itself is
# never loaded whole by onnx), per output, and whether the weights kept are the original's (Wanda only
# masks); both models run on one window of tokens, one session at a time
# (two 4.7 GB sessions at once would double the peak): finite logits, next-token agreement with the
# original. Issue 40's 1-B-parameter run (bench/RESULTS.md, "Wanda 50% on a 1-B-parameter Llama").
#   python bench/robustness/check_pruned.py ORIGINAL.onnx PRUNED.onnx [--seq 16]
import argparse
import gc
import os

import numpy as np
import onnx
import onnxruntime as ort


def tensor_values(t, folder):
    """A float32 initializer's values, from its external data file when it has one (a memory map)."""
    if t.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        n = int(np.prod(t.dims))
        return np.memmap(os.path.join(folder, info["location"]), dtype=np.float32, mode="r",
                         offset=int(info.get("offset", 0)), shape=(n,))
    return onnx.numpy_helper.to_array(t).ravel()


def matmul_weights(file):
    """The MatMul weights (initializers read as a MatMul's second input, float32) by name, and the folder."""
    m = onnx.load(file, load_external_data=False)
    inits = {t.name: t for t in m.graph.initializer}
    ws = {n.input[1]: inits[n.input[1]] for n in m.graph.node
          if n.op_type == "MatMul" and n.input[1] in inits and inits[n.input[1]].data_type == onnx.TensorProto.FLOAT}
    return ws, os.path.dirname(os.path.abspath(file))


def matmul_sparsity(original, pruned):
    """Per MatMul weight: (size, zeros, whether every kept weight is the original's, the fewest and most
    zeros of an output (a column of the stored [in, out] weight) as a share): Wanda only masks, per output."""
    wo, fo = matmul_weights(original)
    wp, fp = matmul_weights(pruned)
    out = {}
    for name, t in wp.items():
        v = tensor_values(t, fp)
        z = int(v.size - np.count_nonzero(v))
        if z <= 0.01 * v.size:  # a random dense weight may hold a stray exact zero
            out[name] = (int(v.size), z, None, None, None)
            continue
        o = tensor_values(wo[name], fo)
        kept = v != 0
        same = bool(np.array_equal(v[kept], o[kept]))
        per_out = (v.reshape(t.dims[0], t.dims[1]) == 0).mean(axis=0)
        out[name] = (int(v.size), z, same, float(per_out.min()), float(per_out.max()))
    return out


def logits(file, ids):
    s = ort.InferenceSession(file, providers=["CPUExecutionProvider"])
    names = {i.name for i in s.get_inputs()}
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "position_ids" in names:
        feeds["position_ids"] = np.arange(ids.shape[1])[None].astype(np.int64)
    y = s.run(None, feeds)[0]
    del s
    gc.collect()
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("original")
    ap.add_argument("pruned")
    ap.add_argument("--seq", type=int, default=16)
    a = ap.parse_args()
    sp = matmul_sparsity(a.original, a.pruned)
    pruned = {k: v for k, v in sp.items() if v[2] is not None}
    n, z = sum(v[0] for v in pruned.values()), sum(v[1] for v in pruned.values())
    worst = max(abs(v[1] / v[0] - 0.5) for v in pruned.values())
    print(f"MatMul weights: {len(sp)}, pruned {len(pruned)} ({n / 1e9:.3f} B weights): zeros {100 * z / n:.2f}%, "
          f"farthest layer from 50%: {100 * worst:.2f} points; zeros per output {100 * min(v[3] for v in pruned.values()):.2f}"
          f"-{100 * max(v[4] for v in pruned.values()):.2f}%; kept weights the original's in "
          f"{sum(v[2] for v in pruned.values())} of {len(pruned)} layers; dense: {[k for k in sp if k not in pruned]}")
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 49152, size=(1, a.seq), dtype=np.int64)
    y = logits(a.pruned, ids)
    assert np.isfinite(y).all(), "non-finite logits"
    y0 = logits(a.original, ids)
    agree = float((y.argmax(-1) == y0.argmax(-1)).mean())
    cos = float((y * y0).sum() / np.sqrt((y * y).sum() * (y0 * y0).sum()))
    print(f"onnxruntime {ort.__version__}: pruned logits {y.shape}, finite, std {y.std():.3g}; "
          f"original std {y0.std():.3g}; against the original: cosine {cos:.3f}, next-token agreement {agree:.3f}")


if __name__ == "__main__":
    main()
