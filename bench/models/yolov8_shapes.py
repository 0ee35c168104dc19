"""A YOLOv8n trained here on a synthetic shapes task (issue 38's "YOLOv8 export at 2:4 SparseGPT"
target needs a detector with real detections; no pretrained weights are reachable offline). Bench
only: torch + ultralytics from /work/venv/bin/python, never part of the test command.

The model is ultralytics' own DetectionModel built from its yolov8n.yaml (the real n scale: depth
0.33, width 0.25), nc = len(CLASSES), trained from random init with ultralytics' own loss
(v8DetectionLoss through DetectionModel.loss: task-aligned assignment, BCE + CIoU + DFL) and its
ModelEMA, on images drawn fresh for every step (no image is seen twice). Exported as ultralytics'
Exporter writes format="onnx" (its own export() call, imgsz 320, opset 17, simplify=False): one
input `images` [1, 3, 320, 320] (RGB in 0..1), one output [1, 4 + nc, 2100] (cx, cy, w, h in pixels,
then per-class sigmoid scores).

The task: 320 x 320 images with 1-6 shapes of CLASSES (filled circle, filled rectangle, filled
triangle, outlined ring), random colours and sizes, partly overlapping, on noisy textured
backgrounds (random gradient, stripes, Gaussian noise). Every image comes from its own seed
(set offset + index), so every set is reproducible and the sets never share an image.

Writes bench/out/yolov8-shapes/ (gitignored):
  model.onnx, model.pt (the kept EMA weights), meta.json (training figures, set sizes, scores)
  <set>/<NNNNN>.npy           [1, 3, 320, 320] float32, the model's input (as `prune --calib DIR` reads)
  png/<set>/<NNNNN>.png       the same image (for ultralytics' own predict)
  labels/<set>.json           {"<NNNNN>": [[class, x1, y1, x2, y2], ...]} in pixels
Sets: calib (32), recover (256, unlabeled for recover), held-out (64, picks the kept EMA weights),
test (256, never seen by training or recover).

Usage: nice -n 15 /work/venv/bin/python bench/models/yolov8_shapes.py [--minutes 22] [--batch 16]
"""
import argparse
import copy
import json
import math
import os
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from PIL import Image, ImageDraw

CLASSES = ["circle", "rectangle", "triangle", "ring"]
SIZE = 320
# Seed offsets per set: far apart so no two sets draw the same image.
SETS = {"calib": (32, 1_000_000), "recover": (256, 2_000_000), "held-out": (64, 3_000_000), "test": (256, 4_000_000)}
TRAIN_SEED = 10_000_000


def background(rng):
    """A noisy textured background: a colour gradient, random stripes or blobs, pixel noise."""
    a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    t = np.linspace(0, 1, SIZE)[:, None, None]
    img = a * (1 - t) + b * t
    img = np.repeat(img, SIZE, axis=1) if rng.random() < 0.5 else np.repeat(img, SIZE, axis=1).transpose(1, 0, 2)
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    d = ImageDraw.Draw(pil)
    for _ in range(rng.integers(0, 12)):  # thin distractor lines
        xy = [tuple(rng.integers(0, SIZE, 2).tolist()) for _ in range(2)]
        d.line(xy, fill=tuple(rng.integers(0, 256, 3).tolist()), width=int(rng.integers(1, 4)))
    return pil


def iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def draw_image(seed):
    """One image (H, W, 3 uint8) and its boxes [[class, x1, y1, x2, y2]] in pixels."""
    rng = np.random.default_rng(seed)
    pil = background(rng)
    d = ImageDraw.Draw(pil)
    boxes, want = [], int(rng.integers(1, 7))
    for _ in range(200):  # placement attempts
        if len(boxes) >= want:
            break
        cls = int(rng.integers(0, len(CLASSES)))
        w = int(rng.integers(24, 120))
        h = w if cls in (0, 3) else int(rng.integers(24, 120))
        x1, y1 = int(rng.integers(0, SIZE - w)), int(rng.integers(0, SIZE - h))
        box = [x1, y1, x1 + w, y1 + h]
        # Overlaps allowed, but not so much that a box's object is hidden.
        if any(iou(box, b[1:]) > 0.25 for b in boxes):
            continue
        col = tuple(rng.integers(0, 256, 3).tolist())
        if cls == 0:
            d.ellipse(box, fill=col)
        elif cls == 1:
            d.rectangle(box, fill=col)
        elif cls == 2:
            d.polygon([(x1, y1 + h), (x1 + w, y1 + h), (x1 + int(rng.integers(0, w)), y1)], fill=col)
        else:
            d.ellipse(box, outline=col, width=max(3, w // 8))
        boxes.append([cls] + box)
    img = np.asarray(pil, dtype=np.float32)
    img += rng.normal(0, rng.uniform(2, 20), img.shape)  # sensor-like noise
    return np.clip(img, 0, 255).astype(np.uint8), boxes


def to_input(img):
    """HWC uint8 RGB -> [3, H, W] float32 in 0..1, as ultralytics' predictor preprocesses."""
    return np.ascontiguousarray(img.transpose(2, 0, 1), dtype=np.float32) / 255.0


def train_batch(step, batch):
    imgs, idx, cls, bxs = [], [], [], []
    for i in range(batch):
        img, boxes = draw_image(TRAIN_SEED + step * batch + i)
        imgs.append(to_input(img))
        for c, x1, y1, x2, y2 in boxes:
            idx.append(i)
            cls.append(c)
            bxs.append([(x1 + x2) / 2 / SIZE, (y1 + y2) / 2 / SIZE, (x2 - x1) / SIZE, (y2 - y1) / SIZE])
    return {
        "img": torch.from_numpy(np.stack(imgs)),
        "batch_idx": torch.tensor(idx, dtype=torch.float32),
        "cls": torch.tensor(cls, dtype=torch.float32).view(-1, 1),
        "bboxes": torch.tensor(bxs, dtype=torch.float32),
    }


def score(model, images, labels, conf=0.25, iou_thres=0.7):
    """Precision / recall / F1 of the model's detections (ultralytics' NMS, conf 0.25, IoU 0.7, as its
    predict) against the drawn boxes, matched greedily by class at IoU >= 0.5."""
    from ultralytics.utils.nms import non_max_suppression

    tp = fp = fn = 0
    model.eval()
    with torch.no_grad():
        for s in range(0, len(images), 16):
            x = torch.from_numpy(np.stack(images[s : s + 16]))
            dets = non_max_suppression(model(x)[0], conf, iou_thres)
            for det, gt in zip(dets, labels[s : s + 16]):
                used = set()
                for *xyxy, _, c in det.tolist():
                    best, bi = 0.5, -1
                    for j, g in enumerate(gt):
                        if j not in used and g[0] == int(c) and iou(xyxy, g[1:]) >= best:
                            best, bi = iou(xyxy, g[1:]), j
                    if bi >= 0:
                        used.add(bi)
                        tp += 1
                    else:
                        fp += 1
                fn += len(gt) - len(used)
    p, r = tp / max(1, tp + fp), tp / max(1, tp + fn)
    return {"precision": p, "recall": r, "f1": 2 * p * r / max(1e-9, p + r)}


def write_sets(out):
    data = {}
    for name, (n, off) in SETS.items():
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / "png" / name).mkdir(parents=True, exist_ok=True)
        (out / "labels").mkdir(parents=True, exist_ok=True)
        labels, images = {}, []
        for i in range(n):
            img, boxes = draw_image(off + i)
            key = f"{i:05d}"
            x = to_input(img)
            np.save(out / name / f"{key}.npy", x[None])
            Image.fromarray(img).save(out / "png" / name / f"{key}.png")
            labels[key] = boxes
            images.append(x)
        (out / "labels" / f"{name}.json").write_text(json.dumps(labels))
        data[name] = (images, list(labels.values()))
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "out" / "yolov8-shapes"))
    ap.add_argument("--minutes", type=float, default=22.0, help="wall-clock training budget")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--eval-every", type=int, default=60, help="steps between held-out scores")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = write_sets(out)

    from ultralytics.cfg import get_cfg
    from ultralytics.nn.tasks import DetectionModel
    from ultralytics.utils.torch_utils import ModelEMA

    model = DetectionModel("yolov8n.yaml", nc=len(CLASSES), verbose=False)
    model.args = get_cfg()  # box 7.5, cls 0.5, dfl 1.5: the default gains of ultralytics' trainer
    # Parameter groups as ultralytics' trainer builds them (build_optimizer): weight decay on conv
    # weights only, none on BatchNorm weights and biases.
    decay, no_decay = [], []
    for mod in model.modules():
        for pn, p in mod.named_parameters(recurse=False):
            (decay if pn == "weight" and not isinstance(mod, torch.nn.BatchNorm2d) else no_decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0}], lr=args.lr, betas=(0.9, 0.999))
    ema = ModelEMA(model)
    budget = args.minutes * 60
    warmup = 100
    t0, cpu0 = time.time(), time.process_time()
    best, best_state, history, step = -1.0, None, [], 0
    while True:
        elapsed = time.time() - t0
        if elapsed > budget:
            break
        # Linear warmup, then cosine decay to lr/20 over the wall budget (the step count is unknown).
        frac = min(1.0, elapsed / budget)
        lr = args.lr * (min(1.0, (step + 1) / warmup)) * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        model.train()
        loss, items = model.loss(train_batch(step, args.batch))
        opt.zero_grad()
        loss.sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        ema.update(model)
        step += 1
        if step % 10 == 0:
            print(f"step {step} {time.time() - t0:.0f}s lr {lr:.2e} " + " ".join(f"{k} {float(v):.3f}" for k, v in items.items()), flush=True)
        if step % args.eval_every == 0 or time.time() - t0 > budget:
            s = score(ema.ema, *data["held-out"])
            history.append({"step": step, "seconds": round(time.time() - t0), **{k: round(v, 4) for k, v in s.items()}})
            print("held-out", history[-1], flush=True)
            if s["f1"] >= best:
                best, best_state = s["f1"], copy.deepcopy(ema.ema.state_dict())
    train_wall, train_cpu = time.time() - t0, time.process_time() - cpu0
    model = ema.ema
    model.load_state_dict(best_state)
    scores = {name: score(model, *data[name]) for name in SETS}
    print("scores", scores, flush=True)
    torch.save({"model": model.float().eval(), "classes": CLASSES}, out / "model.pt")
    export(model, out / "model.onnx")
    meta = {
        "classes": CLASSES,
        "sets": {k: v[0] for k, v in SETS.items()},
        "train": {"steps": step, "batch": args.batch, "images": step * args.batch, "wall_s": round(train_wall), "cpu_s": round(train_cpu), "lr": args.lr},
        "history": history,
        "kept_step": max(history, key=lambda h: (h["f1"], h["step"]))["step"],
        "scores_vs_labels": scores,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))


def export(model, path):
    """Ultralytics' own Exporter, format onnx (BN folded by its fuse(), Detect in export mode, C2f
    through forward_split): load the kept weights into a YOLO wrapper and call its export()."""
    from ultralytics import YOLO

    tmp = path.with_suffix(".export.pt")
    m = copy.deepcopy(model).float().eval()
    m.args = {"imgsz": SIZE, "task": "detect"}
    m.names = dict(enumerate(CLASSES))
    torch.save({"model": m, "train_args": {"imgsz": SIZE}, "date": None, "version": None}, tmp)
    y = YOLO(str(tmp), task="detect")
    written = y.export(format="onnx", imgsz=SIZE, opset=17, simplify=False, dynamic=False)
    os.replace(written, path)
    tmp.unlink()
    print(f"wrote {path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
