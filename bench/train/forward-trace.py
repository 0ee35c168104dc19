"""Python side of bench/train/forward-trace.mjs: the float64 reference of every tensor it wrote (the
model converted by onnx2torch and run in float64 on the same float32 input), and per tensor, in node
order, ours vs float64 and onnxruntime-node vs float64, each as max |x - ref| / max |ref| (the
coverage table's metric), so that the engine that departs from the exact value, and where, shows.
The final activation is also compared element-wise in float64 from each engine's own input.

  /work/venv/bin/python bench/train/forward-trace.py bench/out/forward-trace det [rec ...] [--all]
Bench only (torch + onnx2torch in /work/venv).
"""
import json
import os
import sys
import warnings

import numpy as np
import onnx
import torch
from onnx2torch import convert

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from train_torch_helpers import static_for_torch  # noqa: E402


def rel(x, ref):
    return float(np.abs(x - ref).max() / (np.abs(ref).max() or 1.0))


def act64(fin, x):
    """The activation in float64; below opset 13 a Softmax covers every dimension from its axis on."""
    if fin["op"] == "Sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    ax = fin["axis"] % x.ndim
    v = x.reshape(x.shape[:ax] + (-1,)) if fin["flatten"] else np.moveaxis(x, ax, -1)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return p.reshape(x.shape) if fin["flatten"] else np.moveaxis(p, -1, ax)


folder = sys.argv[1]
torch.set_num_threads(1)
for name in [a for a in sys.argv[2:] if not a.startswith("--")]:
    meta = json.load(open(os.path.join(folder, f"{name}.json")))
    dims = meta["input"]["dims"]
    x = np.fromfile(os.path.join(folder, f"{name}-input.f32"), dtype="<f4").reshape(dims)
    ours = np.fromfile(os.path.join(folder, f"{name}-ours.f32"), dtype="<f4")
    ort = np.fromfile(os.path.join(folder, f"{name}-ort.f32"), dtype="<f4")
    m = static_for_torch(onnx.load(meta["model"]), dims)
    typed = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
    names = [t for t in meta["order"] if t in typed]
    del m.graph.output[:]
    m.graph.output.extend([typed[t] for t in names])
    net = convert(m).eval().double()
    with torch.no_grad():
        r = net(torch.from_numpy(x).double())
    r = r if isinstance(r, (list, tuple)) else [r]
    rows = []
    for k, t in enumerate(names):
        at = meta["tensors"][t]
        s = slice(at["offset"], at["offset"] + at["length"])
        ref = r[k].numpy().ravel()
        o, w = ours[s].astype(np.float64), ort[s].astype(np.float64)
        rows.append((t, at["op"], rel(o, ref), rel(w, ref), rel(o, w)))
    print(f"\n## {name}: {len(rows)} of {len(meta['order'])} tensors against float64 (max |x - f64| / max |f64|)")
    print(f"{'#':>4} {'tensor':<26} {'op':<14} {'ours':>9} {'ort':>9} {'ours-ort':>9}")
    show = set(range(0, len(rows), 25)) | set(range(len(rows) - 6, len(rows)))
    if "--all" in sys.argv:
        show = set(range(len(rows)))
    for i, (t, op, eo, ew, d) in enumerate(rows):
        if i in show:
            print(f"{i:>4} {t[:26]:<26} {op[:14]:<14} {eo:9.2e} {ew:9.2e} {d:9.2e}")
    closer = sum(1 for row in rows if row[2] <= row[3])
    ratio = np.median([row[2] / max(row[3], 1e-30) for row in rows])
    print(f"ours at least as close to float64 as onnxruntime on {closer} of {len(rows)} tensors (median ratio ours / ort {ratio:.2f});"
          f" worst ours {max(row[2] for row in rows):.2e}, worst ort {max(row[3] for row in rows):.2e}")

    # The final activation, element-wise, float64 from each engine's own input; onnxruntime twice:
    # with every tensor an output (no fusions) and as the coverage bench runs it (forward-trace.mjs).
    fin = meta["final"]
    xi, yi = meta["tensors"][fin["input"]], meta["tensors"][fin["output"]]
    shape = xi["shape"]
    get = lambda a, at: a[at["offset"]:at["offset"] + at["length"]].astype(np.float64).reshape(at["shape"])
    opt = np.fromfile(os.path.join(folder, f"{name}-ortopt.f32"), dtype="<f4").astype(np.float64)
    n = opt.size // 2
    x64 = r[names.index(fin["input"])].numpy()
    y64 = r[names.index(fin["output"])].numpy()
    oX, oY = get(ours, xi), get(ours, yi)
    print(f"final {fin['op']}, vs the float64 graph (max |x - f64| / max |f64|) | activation vs {fin['op']} in float64 of its own input (max abs)")
    for label, X, Y in [("ours", oX, oY), ("ort, every tensor an output", get(ort, xi), get(ort, yi)),
                        ("ort as the coverage bench runs it", opt[:n].reshape(shape), opt[n:].reshape(shape))]:
        print(f"  {label:<34} input {rel(X, x64):.2e}  output {rel(Y, y64):.2e} | {np.abs(Y - act64(fin, X)).max():.2e}")
    print(f"  ours vs ort as the coverage bench runs it: input {rel(oX, opt[:n].reshape(shape)):.2e}, output {rel(oY, opt[n:].reshape(shape)):.2e}")
