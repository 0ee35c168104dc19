# Needs Python (bench only): /work/venv/bin/python with onnx and numpy.
# The files the transport-size estimate is fitted and checked on, made without the package (so the
# fit does not wait for a build): each model magnitude-pruned to 50% per weight and to 2:4 (groups of
# 4 along the reduction axis: a Conv's flattened (c, kh, kw), a MatMul weight's rows), and int8-like
# data (every weight quantized per tensor, symmetric, to int8 bytes, concatenated: the bulk of an
# int8 model's file), dense and 50% pruned. Weights: float32 initializers of rank >= 2 read by Conv,
# ConvTranspose, Gemm or MatMul (initializers or Constant nodes). Written to bench/out/transport/; prints their paths.
# Usage: /work/venv/bin/python bench/transport/transport-variants.py MODEL.onnx...
import os
import sys
import numpy as np
import onnx
from onnx import numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'out', 'transport')
LINEAR = {'Conv', 'ConvTranspose', 'Gemm', 'MatMul'}


def weights(model):
    """(initializer, reduction along rows?) for each linear layer's float32 weight of rank >= 2."""
    by_name = {t.name: t for t in model.graph.initializer}
    # PaddleOCR's exports hold their weights in Constant nodes.
    for n in model.graph.node:
        if n.op_type == 'Constant' and n.attribute and n.attribute[0].name == 'value':
            by_name[n.output[0]] = n.attribute[0].t
    seen = {}
    for n in model.graph.node:
        if n.op_type in LINEAR and len(n.input) > 1 and n.input[1] in by_name:
            t = by_name[n.input[1]]
            if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) >= 2:
                seen[t.name] = (t, n.op_type == 'MatMul')
    return list(seen.values())


def put(t, a):
    t.CopyFrom(numpy_helper.from_array(a.astype(np.float32), t.name or None))


def prune50(a):
    k = a.size // 2
    if k == 0:
        return a
    thr = np.partition(np.abs(a).ravel(), k - 1)[k - 1]
    out = a.copy()
    out[np.abs(a) <= thr] = 0
    return out


def nm24(a, along_rows):
    m = a.T if along_rows else a.reshape(a.shape[0], -1)
    if m.shape[1] % 4:
        return None
    g = m.reshape(m.shape[0], -1, 4).copy()
    idx = np.argsort(np.abs(g), axis=2)[:, :, :2]
    np.put_along_axis(g, idx, 0, axis=2)
    g = g.reshape(m.shape)
    return (g.T if along_rows else g).reshape(a.shape)


def int8_bytes(model):
    parts = []
    for t, _ in weights(model):
        a = numpy_helper.to_array(t)
        mx = np.abs(a).max()
        s = 127 / mx if mx > 0 else 0
        parts.append(np.round(a * s).astype(np.int8).tobytes())
    return b''.join(parts)


def main(files):
    os.makedirs(OUT, exist_ok=True)
    for f in files:
        base = os.path.basename(f)[:-5]
        print(f)
        m = onnx.load(f)
        for t, _ in weights(m):
            put(t, prune50(numpy_helper.to_array(t)))
        p = os.path.join(OUT, base + '.s50.onnx')
        onnx.save(m, p)
        print(p)
        p = os.path.join(OUT, base + '.s50.int8.bin')
        open(p, 'wb').write(int8_bytes(m))
        print(p)
        m = onnx.load(f)
        p = os.path.join(OUT, base + '.int8.bin')
        open(p, 'wb').write(int8_bytes(m))
        print(p)
        for t, rows in weights(m):
            r = nm24(numpy_helper.to_array(t), rows)
            if r is not None:
                put(t, r)
        p = os.path.join(OUT, base + '.nm24.onnx')
        onnx.save(m, p)
        print(p)


if __name__ == '__main__':
    main(sys.argv[1:])
