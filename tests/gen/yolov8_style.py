"""A YOLOv8-style detector as the ultralytics ONNX export writes it (Conv with BN folded + SiLU as
Sigmoid*Mul; C2f = Conv -> Split in two -> Bottlenecks on the second half -> Concat of every part ->
Conv; SPPF = Conv -> three MaxPools -> Concat -> Conv; nearest Resize and Concat in the neck; a Detect
head per level with box (DFL) and class branches, concatenated over levels, split, decoded against
constant anchors). Widths are 3/16 of yolov8n and the DFL has 4 bins so that the file stays
small; random weights.

usage: python yolov8_style.py OUT.onnx [--size 64] [--width 4]"""
import argparse
import numpy as np
from onnx_build import Graph, model, tensor_input
from onnx import helper, TensorProto


def build(size=64, width=3, nc=4, reg_max=4, seed=0):
    g = Graph(seed)

    def conv(x, c1, c2, k=1, s=1, act=True):
        w = g.weight("conv.w", [c2, c1, k, k])
        b = g.weight("conv.b", [c2], scale=0.1)
        y = g.op("Conv", [x, w, b], name="conv", kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)
        if not act:
            return y
        return g.op("Mul", [y, g.op("Sigmoid", [y])], name="silu")

    def bottleneck(x, c, shortcut):
        y = conv(conv(x, c, c, 3), c, c, 3)
        return g.op("Add", [x, y], name="residual") if shortcut else y

    def c2f(x, c1, c2, n, shortcut):
        c = c2 // 2
        y = conv(x, c1, 2 * c, 1)
        parts = g.op("Split", [y, g.ints("split", [c, c])], n_out=2, name="c2f_split", axis=1)
        parts = list(parts)
        for _ in range(n):
            parts.append(bottleneck(parts[-1], c, shortcut))
        return conv(g.op("Concat", parts, name="c2f_concat", axis=1), (2 + n) * c, c2, 1)

    def sppf(x, c1, c2, k=5):
        c = c1 // 2
        y = [conv(x, c1, c, 1)]
        for _ in range(3):
            y.append(g.op("MaxPool", [y[-1]], name="sppf_pool", kernel_shape=[k, k], strides=[1, 1], pads=[k // 2] * 4))
        return conv(g.op("Concat", y, name="sppf_concat", axis=1), 4 * c, c2, 1)

    def up(x):
        return g.op("Resize", [x, "", g.const("scales", np.array([1, 1, 2, 2], dtype=np.float32))], name="upsample", mode="nearest")

    w = width
    x0 = conv("images", 3, w, 3, 2)
    x1 = conv(x0, w, 2 * w, 3, 2)
    x2 = c2f(x1, 2 * w, 2 * w, 1, True)
    x3 = conv(x2, 2 * w, 4 * w, 3, 2)
    p3 = c2f(x3, 4 * w, 4 * w, 2, True)
    x5 = conv(p3, 4 * w, 8 * w, 3, 2)
    p4 = c2f(x5, 8 * w, 8 * w, 2, True)
    x7 = conv(p4, 8 * w, 16 * w, 3, 2)
    x8 = c2f(x7, 16 * w, 16 * w, 1, True)
    p5 = sppf(x8, 16 * w, 16 * w)
    h12 = c2f(g.op("Concat", [up(p5), p4], name="neck_concat", axis=1), 24 * w, 8 * w, 1, False)
    n3 = c2f(g.op("Concat", [up(h12), p3], name="neck_concat", axis=1), 12 * w, 4 * w, 1, False)
    h18 = c2f(g.op("Concat", [conv(n3, 4 * w, 4 * w, 3, 2), h12], name="neck_concat", axis=1), 12 * w, 8 * w, 1, False)
    n5 = c2f(g.op("Concat", [conv(h18, 8 * w, 8 * w, 3, 2), p5], name="neck_concat", axis=1), 24 * w, 16 * w, 1, False)

    levels, chans = [n3, h18, n5], [4 * w, 8 * w, 16 * w]
    c2, c3 = max(16, chans[0] // 4, reg_max * 4), max(chans[0], min(nc, 100))
    no = 4 * reg_max + nc
    flat, anchors, strides = [], [], []
    for x, ch, stride in zip(levels, chans, [8, 16, 32]):
        box = g.op("Conv", [conv(conv(x, ch, c2, 3), c2, c2, 3), g.weight("box.w", [4 * reg_max, c2, 1, 1]), g.weight("box.b", [4 * reg_max], 0.1)], name="box")
        cls = g.op("Conv", [conv(conv(x, ch, c3, 3), c3, c3, 3), g.weight("cls.w", [nc, c3, 1, 1]), g.weight("cls.b", [nc], 0.1)], name="cls")
        cat = g.op("Concat", [box, cls], name="head_concat", axis=1)
        flat.append(g.op("Reshape", [cat, g.ints("head_shape", [1, no, -1])], name="head_reshape"))
        n = size // stride
        sy, sx = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        anchors.append(np.stack([sx.ravel(), sy.ravel()], 0))
        strides.append(np.full((1, n * n), stride))
    A = sum(a.shape[1] for a in anchors)
    allx = g.op("Concat", flat, name="levels_concat", axis=2)
    box, cls = g.op("Split", [allx, g.ints("split", [4 * reg_max, nc])], n_out=2, name="head_split", axis=1)
    # DFL: softmax over the bins, expectation by a fixed 1x1 conv.
    d = g.op("Reshape", [box, g.ints("dfl_shape", [1, 4, reg_max, A])], name="dfl_reshape")
    d = g.op("Softmax", [g.op("Transpose", [d], name="dfl_transpose", perm=[0, 2, 1, 3])], name="dfl_softmax", axis=1)
    dfl_w = g.const("dfl.w", np.arange(reg_max, dtype=np.float32).reshape(1, reg_max, 1, 1))
    d = g.op("Reshape", [g.op("Conv", [d, dfl_w], name="dfl_conv"), g.ints("dist_shape", [1, 4, A])], name="dist_reshape")
    lt, rb = g.op("Split", [d, g.ints("split", [2, 2])], n_out=2, name="dist_split", axis=1)
    anchor = g.const("anchors", np.concatenate(anchors, 1)[None].astype(np.float32))
    x1y1, x2y2 = g.op("Sub", [anchor, lt]), g.op("Add", [anchor, rb])
    cxy = g.op("Div", [g.op("Add", [x1y1, x2y2]), g.const("two", np.array(2, dtype=np.float32))])
    wh = g.op("Sub", [x2y2, x1y1])
    boxes = g.op("Mul", [g.op("Concat", [cxy, wh], axis=1), g.const("strides", np.concatenate(strides, 1)[None].astype(np.float32))])
    out = g.op("Concat", [boxes, g.op("Sigmoid", [cls])], name="output", axis=1)
    gr = g.graph("yolov8_style", [tensor_input("images", [1, 3, size, size])], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 4 + nc, A])])
    return model(gr, opset=17)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--width", type=int, default=3)
    a = ap.parse_args()
    import onnx
    onnx.save(build(a.size, a.width), a.out)
