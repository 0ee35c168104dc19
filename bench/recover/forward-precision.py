"""Python side of bench/recover/forward-precision.mjs: per intermediate tensor of the first training batch,
the relative L2 error against PyTorch in float64 of ours (the training core, DIR/precision-ours.json + .f32)
and of PyTorch in float32 (oneDNN), in node order, so the op where ours departs is visible.

  python bench/recover/forward-precision.py DIR [--all] [--kinks]   (default: the 40 tensors with the largest ratio + every 10th)
--kinks: per piecewise-linear op (Clip, Relu, HardSigmoid), how many of its outputs ours and PyTorch
put on the other side of a bound than float64 does: each is a derivative taken from the wrong piece.
Bench only (torch + onnx2torch in /work/venv).
"""
import importlib.util
import json
import os
import sys

import numpy as np
import onnx
import torch
from onnx2torch import convert

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("recover_torch", os.path.join(HERE, "recover-torch.py"))
rt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rt)

folder = sys.argv[1]
recipe = json.load(open(os.path.join(folder, "recipe.json")))
ours = json.load(open(os.path.join(folder, "precision-ours.json")))
values = np.fromfile(os.path.join(folder, "precision-ours.f32"), dtype="<f4")
idx = ours["batch"]
xs = rt.samples(folder, "train_x", recipe["shapes"])
x = torch.stack([xs[k] for k in idx])
m = rt.prepared(onnx.load(os.path.join(folder, "student.onnx")), recipe, list(x.shape))
made = {o for n in m.graph.node for o in n.output}
names = [n for n in ours["order"] if n in made]
# The outputs keep the inferred types (onnx2torch reads ranks from them).
typed = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
names = [n for n in names if n in typed]
outs = [typed[n] for n in names]
del m.graph.output[:]
m.graph.output.extend(outs)
torch.set_num_threads(1)
net32 = convert(m).eval()
net64 = convert(m).eval().double()
with torch.no_grad():
    r32 = net32(x)
    r64 = net64(x.double())
r32 = r32 if isinstance(r32, (list, tuple)) else [r32]
r64 = r64 if isinstance(r64, (list, tuple)) else [r64]
ops = {o: n.op_type for n in m.graph.node for o in n.output}
# The bounds of each piecewise-linear op, where its saturated outputs sit exactly (in every engine):
# Clip's from its attributes (opset < 11) or its constant inputs, Relu's 0, HardSigmoid's 0 and 1.
scalars = {i.name: float(onnx.numpy_helper.to_array(i).ravel()[0]) for i in m.graph.initializer if np.prod(i.dims) == 1}
scalars.update({n.output[0]: float(onnx.numpy_helper.to_array(n.attribute[0].t).ravel()[0]) for n in m.graph.node
                if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value" and np.prod(n.attribute[0].t.dims) == 1})
bounds_of = {}
for n in m.graph.node:
    if n.op_type == "Clip":
        at = {a.name: a.f for a in n.attribute}
        lo = at.get("min", scalars.get(n.input[1]) if len(n.input) > 1 and n.input[1] else None)
        hi = at.get("max", scalars.get(n.input[2]) if len(n.input) > 2 and n.input[2] else None)
        bounds_of[n.output[0]] = tuple(b for b in (lo, hi) if b is not None)
    elif n.op_type in ("Relu", "HardSigmoid"):
        bounds_of[n.output[0]] = (0.0,) if n.op_type == "Relu" else (0.0, 1.0)
kinks = []
rows = []
for k, n in enumerate(names):
    ref = r64[k].numpy().ravel()
    t32 = r32[k].numpy().astype(np.float64).ravel()
    t = ours["tensors"][n]
    o = values[t["offset"]:t["offset"] + t["length"]].astype(np.float64)
    if o.size != ref.size:
        print(f"{n}: ours {o.size} values, torch {ref.size}", file=sys.stderr)
        continue
    den = np.linalg.norm(ref) or 1.0
    eo, et = np.linalg.norm(o - ref) / den, np.linalg.norm(t32 - ref) / den
    rows.append((k, n, ops.get(n, "?"), eo, et))
    if bounds_of.get(n):
        at = lambda v: np.isin(v, bounds_of[n])
        kinks.append((n, ops[n], ref.size, int((at(o) != at(ref)).sum()), int((at(t32) != at(ref)).sum())))
print(f"{len(rows)} tensors compared of {len(ours['order'])} ({folder}, batch of {len(idx)})")
print(f"{'#':>4} {'tensor':<28} {'op':<20} {'ours':>9} {'torch32':>9} {'ratio':>7}  ours' growth from the previous row")
prev = None
show = set(range(0, len(rows), 10)) | {len(rows) - 1}
if "--all" in sys.argv:
    show = set(range(len(rows)))
else:
    show |= set(sorted(range(len(rows)), key=lambda i: -(rows[i][3] / max(rows[i][4], 1e-12)))[:40])
for i, (k, n, op, eo, et) in enumerate(rows):
    if i in show:
        growth = f"{eo / prev:.2f}x" if prev else ""
        print(f"{k:>4} {n[:28]:<28} {op[:20]:<20} {eo:9.2e} {et:9.2e} {eo / max(et, 1e-12):7.2f}  {growth}")
    prev = eo
if "--kinks" in sys.argv:
    print(f"\noutputs on the other side of a bound than float64 (of each op's outputs): ours / torch32")
    for n, op, size, fo, ft in kinks:
        print(f"  {n[:28]:<28} {op:<12} {size:>9}  {fo:>6} / {ft:<6}")
    print(f"  total: ours {sum(k[3] for k in kinks)}, torch32 {sum(k[4] for k in kinks)}")
