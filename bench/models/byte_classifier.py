"""A trained byte-level file-type classifier (issue 38's "byte-level file-type classifier"), made
from real files of this machine. Bench only: torch + onnxruntime from /work/venv/bin/python, never
part of the test command.

Input: the first SEQ bytes of a file as int64 ids (0..255; 256 pads a shorter file) and an
attention_mask (1 on real bytes), as transformers pads text. Model: byte + position embeddings,
one pre-norm two-head attention block with a ReLU FFN, masked mean and max pooling, a linear head
(torch.onnx opset 17: the position ids arange().expand() and masked_fill write the Shape / Range /
Expand / Where subgraphs of a typical export).

Classes (each with hundreds of files here): English text, Python source, C headers, JSON, XML/SVG
markup, ELF binaries / shared objects, gzip files, PNG images. Files whose first SEQ bytes repeat
another file's are dropped (so no prefix appears in two sets). Sets are disjoint by file, chosen
by the SHA-1 of the path (deterministic): train (the classifier's own training), calib, recover
(recovery training), held-out (picks the classifier's epoch, and recover's kept epoch), test
(never seen by either). Each set is written in the layout `prune --calib DIR` reads:

  bench/out/byte-classifier/model.onnx
  bench/out/byte-classifier/<set>/<NNNNN>/{input_ids.npy, attention_mask.npy}   ([1, SEQ] int64)
  bench/out/byte-classifier/<set>/labels.json    {"<NNNNN>": class index}
  bench/out/byte-classifier/meta.json            classes, set sizes, accuracies, how it was trained

Usage: /work/venv/bin/python bench/models/byte_classifier.py [--out DIR] [--epochs 12] [--seq 256]
"""
import argparse
import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

PAD = 256
CLASSES = ["text", "python", "c-header", "json", "markup", "elf", "gzip", "png"]
# Share of each class's files per set, by the path's hash (cumulative upper bounds).
SPLITS = [("train", 0.50), ("calib", 0.54), ("recover", 0.70), ("held-out", 0.78), ("test", 1.0)]
PER_CLASS = 1200  # at most this many files per class (the first by path hash), so classes balance


def walk(roots, keep):
    for root in roots:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                if os.path.isfile(p) and not os.path.islink(p) and keep(p):
                    yield p


def is_elf(p):
    with open(p, "rb") as f:
        return f.read(4) == b"\x7fELF"


def is_text(p):
    """Prose, not code: /usr/share/doc's copyright / README / *.txt files and the licences."""
    name = os.path.basename(p)
    if not (name == "copyright" or name.startswith("README") or name.endswith(".txt") or "common-licenses" in p):
        return False
    with open(p, "rb") as f:
        head = f.read(512)
    return head.isascii() and not head.lstrip().startswith((b"{", b"<", b"#!"))


def class_files():
    """Candidate paths per class (real files of this machine)."""
    venv = "/work/venv/lib"
    return {
        "text": walk(["/usr/share/doc", "/usr/share/common-licenses"], is_text),
        "python": walk(["/usr/lib/python3", "/usr/lib/python3.11", venv], lambda p: p.endswith(".py")),
        "c-header": walk(["/usr/include"], lambda p: p.endswith(".h")),
        "json": walk([venv, "/usr/share", "/work/main/node_modules"], lambda p: p.endswith(".json")),
        "markup": walk(["/usr/share"], lambda p: p.endswith((".xml", ".svg"))),
        "elf": walk(["/usr/lib/x86_64-linux-gnu", "/usr/bin", "/usr/sbin", "/usr/libexec"], is_elf),
        "gzip": walk(["/usr/share/doc", "/usr/share/man"], lambda p: p.endswith(".gz")),
        "png": walk(["/usr/share", venv], lambda p: p.endswith(".png")),
    }


def path_hash(p):
    return int.from_bytes(hashlib.sha1(p.encode()).digest()[:8], "big") / 2**64


def encode(head, seq):
    ids = np.full(seq, PAD, dtype=np.int64)
    ids[: len(head)] = np.frombuffer(head, dtype=np.uint8)
    mask = (np.arange(seq) < len(head)).astype(np.int64)
    return ids, mask


def collect(seq, min_bytes=32):
    """{set: [(path, class, ids, mask)]}, deduplicated by the first `seq` bytes across classes."""
    seen = set()
    sets = {name: [] for name, _ in SPLITS}
    for ci, (cls, paths) in enumerate(class_files().items()):
        # Sorted by hash, so the per-class cap keeps a deterministic, spread-out subset.
        kept = 0
        for p in sorted(paths, key=path_hash):
            if kept >= PER_CLASS:
                break
            try:
                with open(p, "rb") as f:
                    head = f.read(seq)
            except OSError:
                continue
            if len(head) < min_bytes or head in seen:
                continue
            seen.add(head)
            kept += 1
            # A second hash (salted) picks the set, independent of the cap's order.
            u = path_hash("split:" + p)
            name = next(n for n, hi in SPLITS if u < hi)
            sets[name].append((p, ci, *encode(head, seq)))
        print(f"{cls}: {kept} files", flush=True)
    return sets


class ByteClassifier(nn.Module):
    def __init__(self, seq, dim=32, heads=2, ffn=64, classes=len(CLASSES)):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(PAD + 1, dim, padding_idx=PAD)
        self.pos = nn.Embedding(seq, dim)
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        self.head = nn.Linear(2 * dim, classes)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0).expand(b, s)
        h = self.tok(input_ids) + self.pos(pos)
        x = self.ln1(h)
        split = lambda t: t.reshape(b, s, self.heads, -1).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5)
        scores = scores.masked_fill(attention_mask[:, None, None, :] == 0, -1e4)
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, -1)
        h = h + self.o(ctx)
        h = h + self.ff2(torch.relu(self.ff1(self.ln2(h))))
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        mean = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        mx = h.masked_fill(m == 0, -1e4).max(1).values
        return self.head(torch.cat([mean, mx], -1))


def tensors(items):
    ids = torch.from_numpy(np.stack([it[2] for it in items]))
    mask = torch.from_numpy(np.stack([it[3] for it in items]))
    labels = torch.tensor([it[1] for it in items])
    return ids, mask, labels


@torch.no_grad()
def accuracy(model, items, batch=256):
    model.eval()
    ids, mask, labels = tensors(items)
    pred = torch.cat([model(ids[i : i + batch], mask[i : i + batch]).argmax(-1) for i in range(0, len(items), batch)])
    return (pred == labels).float().mean().item()


def train(model, sets, epochs, lr, batch, seed):
    ids, mask, labels = tensors(sets["train"])
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    gen = torch.Generator().manual_seed(seed)
    best, best_state, history = -1.0, None, []
    for epoch in range(1, epochs + 1):
        model.train()
        t0 = time.time()
        order = torch.randperm(len(labels), generator=gen)
        total = 0.0
        for i in range(0, len(order), batch):
            j = order[i : i + batch]
            loss = nn.functional.cross_entropy(model(ids[j], mask[j]), labels[j])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(j)
        held = accuracy(model, sets["held-out"])
        history.append({"epoch": epoch, "loss": total / len(order), "held_out": held, "seconds": time.time() - t0})
        print(f"epoch {epoch}: loss {total / len(order):.4f}, held-out accuracy {held:.4f} ({time.time() - t0:.0f} s)", flush=True)
        if held > best:
            best, best_state = held, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    return history


def write_set(out, name, items):
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    labels = {}
    for i, (p, ci, ids, mask) in enumerate(items):
        s = d / f"{i:05d}"
        s.mkdir(exist_ok=True)
        np.save(s / "input_ids.npy", ids[None])
        np.save(s / "attention_mask.npy", mask[None])
        labels[s.name] = ci
    (d / "labels.json").write_text(json.dumps(labels))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "out" / "byte-classifier"))
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(2)
    out = Path(a.out)
    sets = collect(a.seq)
    for name, items in sets.items():
        # Within a set, the order of the samples (and so their names) is the path hash's.
        items.sort(key=lambda it: path_hash(it[0]))
        print(f"{name}: {len(items)} files, per class {np.bincount([it[1] for it in items], minlength=len(CLASSES)).tolist()}")
    model = ByteClassifier(a.seq)
    t0 = time.time()
    history = train(model, sets, a.epochs, a.lr, a.batch, a.seed)
    train_s = time.time() - t0
    model.eval()
    acc = {name: accuracy(model, items) for name, items in sets.items()}
    print("accuracy per set:", json.dumps(acc))

    out.mkdir(parents=True, exist_ok=True)
    onnx_path = out / "model.onnx"
    ids, mask, _ = tensors(sets["test"][:2])
    torch.onnx.export(
        model, (ids, mask), str(onnx_path), opset_version=17, dynamo=False,
        input_names=["input_ids", "attention_mask"], output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}, "logits": {0: "batch"}},
    )
    # The export must compute what torch does, on a padded batch too.
    import onnxruntime as ort

    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    ids, mask, labels = tensors(sets["test"])
    got = np.concatenate([sess.run(None, {"input_ids": ids[i : i + 64].numpy(), "attention_mask": mask[i : i + 64].numpy()})[0] for i in range(0, len(labels), 64)])
    with torch.no_grad():
        want = model(ids, mask).numpy()
    diff = float(np.abs(got - want).max() / np.abs(want).max())
    ort_acc = float((got.argmax(-1) == labels.numpy()).mean())
    print(f"onnxruntime vs torch: max relative difference {diff:.2e}; onnxruntime accuracy on test {ort_acc:.4f}")

    for name, items in sets.items():
        if name != "train":
            write_set(out, name, items)
    ops = {}
    import onnx

    for n in onnx.load(str(onnx_path)).graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    meta = {
        "classes": CLASSES, "seq": a.seq, "pad_id": PAD,
        "sets": {n: len(v) for n, v in sets.items()},
        "per_class": {n: np.bincount([it[1] for it in v], minlength=len(CLASSES)).tolist() for n, v in sets.items()},
        "accuracy": acc, "onnxruntime_test_accuracy": ort_acc, "onnxruntime_vs_torch": diff,
        "train": {"epochs": a.epochs, "lr": a.lr, "batch": a.batch, "seed": a.seed, "seconds": train_s, "history": history},
        "parameters": sum(p.numel() for p in model.parameters()), "onnx_ops": ops,
        "torch": torch.__version__, "onnxruntime": ort.__version__,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(f"wrote {onnx_path} and the sets under {out}; ops {ops}")


if __name__ == "__main__":
    main()
