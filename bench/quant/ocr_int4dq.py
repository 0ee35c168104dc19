"""A probe of bench/quant/ocr.mjs (bench only; /work/venv/bin/python with onnx): the 4-bit Conv codes of one
of its probe files (16-level codes stored as int8 + Cast + Mul per channel, the form ours writes below opset
13) rewritten as packed int4 with a per-channel DequantizeLinear, which needs opset 21 (int4 types), after
onnx.version_converter takes the whole model there. Same codes, same arithmetic: it measures what packing
the nibbles does to the served (brotli) bytes, and whether onnxruntime-node / -web run it.
The codes of a row are in [-8, 7] or, when ours negated the row to make its scale positive, in [-7, 8];
the latter rows are negated back with a negative scale (onnxruntime's own 4-bit scales are signed too).
Usage: /work/venv/bin/python bench/quant/ocr_int4dq.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, version_converter


def main():
    src, dst = sys.argv[1], sys.argv[2]
    m = version_converter.convert_version(onnx.load(src), 21)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    by_out = {o: n for n in g.node for o in n.output}
    drop, count = set(), 0
    for conv in [n for n in g.node if n.op_type == "Conv"]:
        mul = by_out.get(conv.input[1])
        if mul is None or mul.op_type != "Mul":
            continue
        cast = by_out.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in inits or mul.input[1] not in inits:
            continue
        codes = numpy_helper.to_array(inits[cast.input[0]]).astype(np.int8)
        scale = numpy_helper.to_array(inits[mul.input[1]]).reshape(-1).astype(np.float32)
        rows = codes.reshape(codes.shape[0], -1)
        if rows.min() < -8 or rows.max() > 8:
            continue  # not a 4-bit probe layer
        flip = rows.max(axis=1) > 7
        rows = np.where(flip[:, None], -rows, rows)
        scale = np.where(flip, -scale, scale).astype(np.float32)
        if rows.min() < -8 or rows.max() > 7:
            raise SystemExit(f"{conv.name}: a row spans -8 and 8: not a 4-bit grid")
        base = cast.input[0]
        q = helper.make_tensor(base + "_int4", onnx.TensorProto.INT4, list(codes.shape), rows.reshape(-1).tolist())
        s = numpy_helper.from_array(scale, base + "_int4_scale")
        z = helper.make_tensor(base + "_int4_zero", onnx.TensorProto.INT4, [codes.shape[0]], [0] * codes.shape[0])
        g.initializer.extend([q, s, z])
        dq = helper.make_node("DequantizeLinear", [q.name, s.name, z.name], [conv.input[1]], name=base + "_DequantizeLinear", axis=0)
        g.node.insert(list(g.node).index(cast), dq)
        drop.update([id(mul), id(cast)])
        count += 1
    keep = [n for n in g.node if id(n) not in drop]
    del g.node[:]
    g.node.extend(keep)
    used = {i for n in g.node for i in n.input}
    left = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(left)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    print(f"{count} Conv weights as int4 DequantizeLinear (opset 21)")


if __name__ == "__main__":
    main()
