"""A real YOLOv8 detection model built by ultralytics from its own yolov8n.yaml (random init, seeded;
no weights are downloaded), BatchNorm folded into the Convs as ultralytics' exporter does, exported
with torch.onnx.export at opset 17 (static shape, as ultralytics' exporter writes by default). Width is scaled below yolov8n so the file stays
small; the graph structure (C2f Split/Concat, SPPF, Resize + Concat neck, Detect with DFL) is the
one ultralytics writes.

usage: /work/venv/bin/python tests/gen/export_yolov8.py [OUT.onnx] [--width 0.125] [--size 320]"""
import argparse
import os
import torch
from ultralytics.nn.modules import C2f, Detect
from ultralytics.nn.tasks import DetectionModel
from ultralytics.nn.tasks import yaml_model_load

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("out", nargs="?", default=os.path.normpath(os.path.join(here, "..", "data", "models", "yolov8n-ultralytics.onnx")))
ap.add_argument("--width", type=float, default=0.0625)
ap.add_argument("--size", type=int, default=320)
ap.add_argument("--nc", type=int, default=8)
args = ap.parse_args()

torch.manual_seed(0)
cfg = yaml_model_load("yolov8n.yaml")  # the YAML shipped inside the ultralytics package
cfg["scales"] = {"n": [0.33, args.width, 1024]}  # depth of yolov8n, narrower width
cfg["scale"] = "n"
model = DetectionModel(cfg, nc=args.nc, verbose=False)
# Random BN statistics so that the folded Conv biases are not all zero.
for m in model.modules():
    if isinstance(m, torch.nn.BatchNorm2d):
        m.running_mean.uniform_(-0.1, 0.1)
        m.running_var.uniform_(0.5, 1.5)
model = model.fuse(verbose=False).eval()
# The module settings ultralytics' Exporter applies for format="onnx" (engine/exporter.py): Detect in
# export mode (inference output only, static shape), and C2f through forward_split, so its halves are
# one Split with constant sizes rather than chunk()'s Slices with bounds computed from Shape.
for m in model.modules():
    if isinstance(m, Detect):
        m.dynamic, m.export, m.format, m.xyxy, m.shape = False, True, "onnx", False, None
    elif isinstance(m, C2f):
        m.forward = m.forward_split
x = torch.randn(1, 3, args.size, args.size)
torch.onnx.export(model, x, args.out, opset_version=17, input_names=["images"], output_names=["output0"], dynamo=False)
print(f"wrote {args.out}: {os.path.getsize(args.out)} bytes")
