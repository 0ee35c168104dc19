"""A small graph builder over onnx.helper for the generated test models: named nodes, float32
initializers with seeded random values, and shape inference before saving (as exporters record
intermediate shapes in value_info)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Graph:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], {}

    def name(self, base):
        k = self.count.get(base, 0)
        self.count[base] = k + 1
        return f"{base}_{k}" if k else base

    def const(self, name, array):
        name = self.name(name)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        s = scale if scale is not None else 1.0 / np.sqrt(max(1, fan_in))
        return self.const(name, (self.rng.standard_normal(shape) * s).astype(np.float32))

    def ints(self, name, values):
        return self.const(name, np.asarray(values, dtype=np.int64))

    def op(self, op_type, inputs, n_out=1, name=None, **attrs):
        name = self.name(name or op_type.lower())
        outs = [f"{name}_out{k}" if n_out > 1 else f"{name}_out" for k in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs if n_out > 1 else outs[0]

    def graph(self, name, inputs, outputs):
        return helper.make_graph(self.nodes, name, inputs, outputs, self.inits)


def model(graph, opset=17):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="sparsekit-wasm tests/gen")
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


def tensor_input(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)
