"""Ultralytics' own predict on PNG images, as JSON on stdout: the reference bench/recover/check-yolo-decode.mjs
compares bench/lib/yolo-detections.mjs against. Bench only (ultralytics from /work/venv).

usage: /work/venv/bin/python bench/recover/yolo-predict.py MODEL.onnx --conf 0.25 --iou 0.7 --imgsz 320 IMAGE.png...
prints, as its last line, {"<image path>": [[x1, y1, x2, y2, class, conf], ...], ...}"""
import argparse
import json

from ultralytics import YOLO

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("images", nargs="+")
ap.add_argument("--conf", type=float, default=0.25)
ap.add_argument("--iou", type=float, default=0.7)
ap.add_argument("--imgsz", type=int, default=320)
args = ap.parse_args()
model = YOLO(args.model, task="detect")
out = {}
for path in args.images:
    r = model.predict(path, imgsz=args.imgsz, conf=args.conf, iou=args.iou, verbose=False, device="cpu")[0]
    b = r.boxes
    out[path] = [[*xyxy, int(c), float(s)] for xyxy, c, s in zip(b.xyxy.tolist(), b.cls.tolist(), b.conf.tolist())]
print(json.dumps(out))
