"""A model with its weights in If branches (as silero-VAD-like exports keep them): a Conv in the main
graph, an If whose branches each hold a Conv (then: -> Relu, else: -> Sigmoid, then a second Conv in
the else branch) reading the outer value, and a Conv after the If. A Loop body with a Conv -> Relu ->
Conv of its own follows (its weights inside the body, what it carries kept whole). Random weights.

usage: python if_branches.py OUT.onnx"""
import argparse
import numpy as np
from onnx import TensorProto, helper
from onnx_build import Graph, model, tensor_input


def build(seed=2):
    g = Graph(seed)

    def conv(sub, x, c1, c2, k=1):
        w = sub.weight("conv.w", [c2, c1, k, k])
        b = sub.weight("conv.b", [c2], 0.1)
        return sub.op("Conv", [x, w, b], name="conv", kernel_shape=[k, k], pads=[k // 2] * 4)

    a = g.op("Relu", [conv(g, "x", 3, 16, 3)])
    # Branches: their own graphs, reading the outer value `a`; names kept unique across the model.
    then_g = Graph(seed + 1)
    then_g.count = {"conv.w": 10, "conv.b": 10, "conv": 10, "relu": 10}
    t = then_g.op("Relu", [conv(then_g, a, 16, 16)])
    else_g = Graph(seed + 2)
    else_g.count = {"conv.w": 20, "conv.b": 20, "conv": 20, "sigmoid": 20}
    e = conv(else_g, else_g.op("Sigmoid", [conv(else_g, a, 16, 24)]), 24, 16)
    then_graph = then_g.graph("then", [], [helper.make_tensor_value_info(t, TensorProto.FLOAT, None)])
    else_graph = else_g.graph("else", [], [helper.make_tensor_value_info(e, TensorProto.FLOAT, None)])
    branch = g.op("If", ["use_then"], name="branch", then_branch=then_graph, else_branch=else_graph)
    y = conv(g, branch, 16, 8)
    # Loop: 2 iterations over a carried state s -> s + Conv(Relu(Conv(s))) inside the body.
    body = Graph(seed + 3)
    body.count = {"conv.w": 30, "conv.b": 30, "conv": 30, "relu": 30, "add": 30}
    s_next = body.op("Add", ["state_in", conv(body, body.op("Relu", [conv(body, "state_in", 8, 32)]), 32, 8)])
    cond_out = body.op("Identity", ["cond_in"], name="cond_pass")
    body_graph = body.graph("body", [tensor_input("iter", [], TensorProto.INT64), tensor_input("cond_in", [], TensorProto.BOOL), tensor_input("state_in", None)],
                            [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), helper.make_tensor_value_info(s_next, TensorProto.FLOAT, None)])
    looped = g.op("Loop", [g.ints("trips", 2), "", y], name="loop", body=body_graph)
    gr = g.graph("if_branches", [tensor_input("x", [1, 3, 8, 8]), tensor_input("use_then", [], TensorProto.BOOL)],
                 [helper.make_tensor_value_info(looped, TensorProto.FLOAT, [1, 8, 8, 8])])
    return model(gr, opset=17)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    a = ap.parse_args()
    import onnx
    onnx.save(build(), a.out)
