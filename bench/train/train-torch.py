"""PyTorch CPU side of the training-step bench (bench/train/train-step.mjs drives it, interleaved).

The same ONNX model as ours, converted with onnx2torch, in eval mode (BatchNormalization in its
inference form, as the training core has it; gradients still flow through it), a training step =
forward + MSE towards a fixed target (the model's own output on another batch) + backward + Adam.
Protocol on stdin/stdout, one JSON line each: {"cmd": "load", "name", "path", "shape", "threads"} ->
{"ok": true, "params": n}; {"cmd": "step", "name", "reps"} -> {"ms": [...]}; {"cmd": "quit"}.
Bench only (needs torch + onnx2torch in /work/venv); nothing in the tests uses it.
"""
import json
import warnings
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.version_converter
import torch
from onnx2torch import convert
from onnx2torch.node_converters.registry import _CONVERTER_REGISTRY, OperationDescription

warnings.filterwarnings("ignore")
# onnx2torch registers LessOrEqual-12 only; version 16 (the transformers exports' causal mask at opset 17)
# adds bfloat16 inputs and nothing else, so the same converter serves it.
_CONVERTER_REGISTRY.setdefault(OperationDescription("", "LessOrEqual", 16), _CONVERTER_REGISTRY[OperationDescription("", "LessOrEqual", 12)])
models = {}


def constants_as_initializers(model):
    """PaddleOCR's exports hold their weights in Constant nodes; onnx2torch reads initializers."""
    g = model.graph
    keep = []
    for n in g.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            g.initializer.append(t)
        else:
            keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    return model


def with_shapes(model, shape):
    """Every value's shape as value_info, measured by one onnxruntime run (ONNX shape inference
    stops at det's Resize and rec's computed Reshape; onnx2torch needs ranks for BatchNorm)."""
    import numpy as np
    import onnxruntime as ort

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {o.name for o in probe.graph.output}
    names = [o for n in probe.graph.node for o in n.output if o and o not in known]
    for o in names:
        probe.graph.output.append(onnx.ValueInfoProto(name=o))
    sess = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, {model.graph.input[0].name: np.zeros(shape, np.float32)})
    del model.graph.value_info[:]
    for meta, v in zip(sess.get_outputs(), outs):
        if meta.name in known:
            continue
        elem = onnx.helper.np_dtype_to_tensor_dtype(v.dtype)
        model.graph.value_info.append(onnx.helper.make_tensor_value_info(meta.name, elem, list(v.shape)))
    return model


def flatten_as_reshape(model):
    """onnx2torch's Flatten calls torch.flatten(x, start_dim=1), which a rank-1 input refuses (the
    transformers exports flatten index vectors in the causal mask): each Flatten becomes a Reshape to
    its output's shape, which with_shapes has measured."""
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.value_info}
    for i, n in enumerate(model.graph.node):
        if n.op_type != "Flatten":
            continue
        shape_name = n.output[0] + "__flat_shape"
        model.graph.initializer.append(onnx.numpy_helper.from_array(np.array(shapes[n.output[0]], np.int64), shape_name))
        model.graph.node[i].CopyFrom(onnx.helper.make_node("Reshape", [n.input[0], shape_name], [n.output[0]], name=n.name))
    return model


def load(msg):
    torch.set_num_threads(int(msg["threads"]))
    model = onnx.load(msg["path"])
    if model.opset_import[0].version < 13:
        # onnx2torch converts opset >= 13 forms (rec is opset 9: attribute Slice)
        model = onnx.version_converter.convert_version(model, 13)
    model = constants_as_initializers(model)
    # static input shape + shape inference: onnx2torch needs the ranks (BatchNormalization)
    for d, v in zip(model.graph.input[0].type.tensor_type.shape.dim, msg["shape"]):
        d.ClearField("dim_param")
        d.dim_value = v
    model = flatten_as_reshape(with_shapes(model, msg["shape"]))
    net = convert(model)
    net.eval()
    # onnx2torch keeps initializers read by MatMul/Add (rec's SVTR and head: 1.03 M weights) as
    # buffers, so torch would not train them; the training core trains every float initializer of
    # more than one element (not BatchNorm statistics): make them parameters for the same work.
    holder = getattr(net, "initializers", None)
    if holder is not None:
        for key, buf in list(holder._buffers.items()):
            if buf is not None and buf.dtype.is_floating_point and buf.numel() > 1:
                del holder._buffers[key]
                holder.register_parameter(key, torch.nn.Parameter(buf.clone()))
    g = torch.Generator().manual_seed(1)
    shape = msg["shape"]
    x = torch.rand(*shape, generator=g) * 2
    with torch.no_grad():
        target = net(torch.rand(*shape, generator=g) * 2)
    params = [p for p in net.parameters() if p.requires_grad and p.dtype == torch.float32]
    opt = torch.optim.Adam(params, lr=1e-4)
    models[msg["name"]] = (net, x, target, opt)
    return {"ok": True, "params": sum(p.numel() for p in params), "threads": torch.get_num_threads()}


def step(msg):
    net, x, target, opt = models[msg["name"]]
    torch.set_num_threads(int(msg.get("threads", torch.get_num_threads())))
    ms = []
    for _ in range(int(msg.get("reps", 1))):
        t = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        y = net(x)
        loss = torch.nn.functional.mse_loss(y, target)
        loss.backward()
        opt.step()
        ms.append((time.perf_counter() - t) * 1e3)
    return {"ms": ms, "loss": loss.item()}


for line in sys.stdin:
    msg = json.loads(line)
    if msg["cmd"] == "quit":
        break
    out = load(msg) if msg["cmd"] == "load" else step(msg)
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
