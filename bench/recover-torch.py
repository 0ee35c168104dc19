"""PyTorch side of bench/recover-vs-torch.mjs: the same distillation as recover() on the same start.

  python bench/recover-torch.py DIR [--diverge] [--threads N]

DIR (written by the node side) holds student.onnx (the pruned model after recover()'s closed-form
steps), recipe.json (trained tensors, loss, lr, batch, Adam constants, the batch order of every
epoch), train_x.npy / train_t.npy (inputs and the teacher's values of the trained tensor),
val_x.npy / val_ref.npy (validation inputs and the teacher's outputs). The student is converted with
onnx2torch (the tricks of bench/train-torch.py), trained with Adam on exactly the recipe's tensors
(their zeros held at zero: gradients and weights masked), scored after each epoch by top-1 agreement
with the teacher on the validation set (the package's classification fidelity), and the best epoch's
values are written back into student.onnx's own tensors -> DIR/student-torch.onnx, DIR/torch.json.
Bench only (needs torch + onnx2torch in /work/venv).
"""
import copy
import json
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.version_converter
import torch
from onnx2torch import convert

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def load_helpers():
    """constants_as_initializers and with_shapes of train-torch.py, without running its stdin loop."""
    src = open(os.path.join(HERE, "train-torch.py")).read()
    src = src[: src.index("for line in sys.stdin")]
    ns = {}
    exec(compile(src, "train-torch.py", "exec"), ns)
    return ns["constants_as_initializers"], ns["with_shapes"]


constants_as_initializers, with_shapes = load_helpers()


def prepared(model, recipe, batch_shape):
    """The graph torch trains: its output is the trained tensor (the final Softmax dropped, as
    trainSetup does), at opset >= 13 with its constants as initializers and static shapes."""
    m = copy.deepcopy(model)
    if recipe["tensor"] != recipe["output"]:
        m.graph.node.remove(next(n for n in m.graph.node if recipe["output"] in n.output))
        del m.graph.output[:]
        m.graph.output.append(onnx.ValueInfoProto(name=recipe["tensor"]))
    if m.opset_import[0].version < 13:
        m = onnx.version_converter.convert_version(m, 13)
    m = constants_as_initializers(m)
    for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, batch_shape):
        d.ClearField("dim_param")
        d.dim_value = v
    return with_shapes(m, batch_shape)


def tensors_of(net):
    return dict(list(net.named_parameters()) + list(net.named_buffers()))


TAG = 1000.25  # tags 1000.25 + k: exact in float32, far from the model's own constants (3, 6, 0.5, ...)


def locate(model, trained):
    """Which torch tensor holds each trained ONNX tensor: a copy with tensor k filled with TAG + k is
    converted, and the torch tensor that is all TAG + k, of the same size, is tensor k (onnx2torch
    copies values as they are)."""
    tagged = copy.deepcopy(model)
    index = {name: k for k, name in enumerate(trained)}
    sizes = {}
    for init in tagged.graph.initializer:
        if init.name in index:
            v = onnx.numpy_helper.to_array(init)
            sizes[init.name] = v.size
            init.CopyFrom(onnx.numpy_helper.from_array(np.full(v.shape, TAG + index[init.name], v.dtype), init.name))
    where = {}
    for path, t in tensors_of(convert(tagged)).items():
        if not t.dtype.is_floating_point or not t.numel():
            continue
        first = t.flatten()[0].item()
        k = round(first - TAG)
        if 0 <= k < len(trained) and first == TAG + k and t.numel() == sizes.get(trained[k]) and bool((t == first).all()):
            if trained[k] in where:
                raise SystemExit(f"{trained[k]} found twice in the converted model")
            where[trained[k]] = path
    missing = [n for n in trained if n not in where]
    if missing:
        raise SystemExit(f"not found in the converted model: {missing[:5]}")
    return where


def as_parameter(net, path):
    """The torch tensor at `path` as a trainable Parameter (onnx2torch keeps MatMul / Add constants as buffers)."""
    owner, _, attr = path.rpartition(".")
    mod = net.get_submodule(owner) if owner else net
    if attr in mod._parameters:
        return mod._parameters[attr]
    buf = mod._buffers.pop(attr)
    p = torch.nn.Parameter(buf.clone())
    mod.register_parameter(attr, p)
    return p


def top1_agreement(net, x, ref, batch):
    """The package's classification fidelity: rows along the last axis (trailing 1s dropped), same argmax."""
    outs = []
    with torch.no_grad():
        for i in range(0, len(x), batch):
            outs.append(net(x[i : i + batch]))
    y = torch.cat(outs).reshape(len(x), -1, ref.shape[-1] if ref.ndim > 1 else 1)
    r = ref.reshape(y.shape)
    return float((y.argmax(-1) == r.argmax(-1)).float().mean()), y


def diverge(folder, net, params, masks, tx, tt_, recipe):
    """--diverge: the first epoch's steps as bench/recover-diverge.mjs took them with the training core
    (DIR/diverge-ours.json): per step the two losses; after step 1 and the last step, per tensor, the
    largest difference and how many values differ by more than lr / 2 (with Adam's first step, about
    lr * sign(gradient): these are sign disagreements of the gradient)."""
    ours = json.load(open(os.path.join(folder, "diverge-ours.json")))
    a = recipe["adam"]
    opt = torch.optim.Adam(params, lr=recipe["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weightDecay"])
    losses, first = [], None
    snap = lambda: [p.detach().clone().flatten() for p in params]
    for idx in recipe["order"][0][: len(ours["losses"])]:
        idx = torch.tensor(idx)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(tx[idx]), tt_[idx])
        loss.backward()
        for p, m in zip(params, masks):
            p.grad.mul_(m)
        opt.step()
        with torch.no_grad():
            for p, m in zip(params, masks):
                p.mul_(m)
        losses.append(loss.item())
        first = first or snap()

    def compare(mine, theirs, label):
        worst, where, flips, total, rel = 0.0, "", 0, 0, []
        for name, v in zip(recipe["trained"], mine):
            o = torch.tensor(theirs[name])
            d = (v - o).abs()
            if float(d.max()) > worst:
                worst, where = float(d.max()), name
            flips += int((d > recipe["lr"] / 2).sum())
            total += v.numel()
            rel.append(float((v - o).norm() / max(float(o.norm()), 1e-30)))
        print(f"{label}: largest difference {worst:.3e} ({where}), values apart by > lr/2: {flips} of {total}, "
              f"relative L2 per tensor: median {np.median(rel):.2e}, max {max(rel):.2e}", file=sys.stderr)

    for k, (l1, l2) in enumerate(zip(ours["losses"], losses), 1):
        if k <= 4 or k == len(losses):
            print(f"step {k}: loss ours {l1:.6f} torch {l2:.6f} (relative {abs(l1 - l2) / abs(l2):.1e})", file=sys.stderr)
    compare(first, ours["first"], "after step 1")
    compare(snap(), ours["last"], f"after step {len(losses)}")


def main(folder):
    # --threads N: another reduction order in torch's kernels (a float-rounding noise floor); default 1
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    torch.set_num_threads(threads)
    recipe = json.load(open(os.path.join(folder, "recipe.json")))
    if recipe["loss"] not in ("logits", "mse") or recipe["kind"] != "classification":
        raise SystemExit(f"this bench implements the MSE / logit loss and the classification fidelity, not {recipe['loss']} / {recipe['kind']}")
    tx = torch.from_numpy(np.load(os.path.join(folder, "train_x.npy")))
    tt_ = torch.from_numpy(np.load(os.path.join(folder, "train_t.npy")))
    vx = torch.from_numpy(np.load(os.path.join(folder, "val_x.npy")))
    vref = torch.from_numpy(np.load(os.path.join(folder, "val_ref.npy")))
    batch = recipe["batch"]
    student = onnx.load(os.path.join(folder, "student.onnx"))
    t_conv = time.perf_counter()
    model = prepared(student, recipe, [batch, *tx.shape[1:]])
    where = locate(model, recipe["trained"])
    net = convert(model)
    net.eval()  # BatchNormalization in its inference form, as the training core has it
    for p in net.parameters():
        p.requires_grad_(False)
    params = [as_parameter(net, where[n]) for n in recipe["trained"]]
    for p in params:
        p.requires_grad_(True)
    masks = [(p.detach() != 0).float() for p in params]
    conv_s = time.perf_counter() - t_conv

    if "--diverge" in sys.argv:
        return diverge(folder, net, params, masks, tx, tt_, recipe)

    # The converted start against onnxruntime on the same graph: the largest difference of its outputs.
    start_score, y0 = top1_agreement(net, vx, vref, batch)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    y_ort = np.concatenate([sess.run(None, {model.graph.input[0].name: vx[i : i + batch].numpy()})[0] for i in range(0, len(vx), batch)])
    start_diff = float(np.abs(y_ort.reshape(y0.shape) - y0.numpy()).max())
    a = recipe["adam"]
    opt = torch.optim.Adam(params, lr=recipe["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weightDecay"])
    best = [p.detach().clone() for p in params]
    best_score, best_epoch, history, steps = start_score, 0, [], 0
    t0 = time.perf_counter()
    for epoch, batches in enumerate(recipe["order"], 1):
        total, n = 0.0, 0
        for idx in batches:
            idx = torch.tensor(idx)
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(net(tx[idx]), tt_[idx])
            loss.backward()
            for p, m in zip(params, masks):
                p.grad.mul_(m)
            opt.step()
            with torch.no_grad():
                for p, m in zip(params, masks):
                    p.mul_(m)
            total += loss.item() * len(idx)
            n += len(idx)
            steps += 1
        score, _ = top1_agreement(net, vx, vref, batch)
        history.append({"epoch": epoch, "loss": total / n, "fidelity": score})
        print(f"  torch epoch {epoch} loss {total / n:.5f} val {score:.4f}", file=sys.stderr, flush=True)
        if score >= best_score:  # a tie goes to the later epoch, as recover() does
            best, best_score, best_epoch = [p.detach().clone() for p in params], score, epoch
    seconds = time.perf_counter() - t0

    # The best values back into student.onnx's own tensors (initializers or Constant nodes).
    values = {n: b.numpy() for n, b in zip(recipe["trained"], best)}
    for init in student.graph.initializer:
        if init.name in values:
            init.CopyFrom(onnx.numpy_helper.from_array(values.pop(init.name).reshape(onnx.numpy_helper.to_array(init).shape), init.name))
    for node in student.graph.node:
        if node.op_type == "Constant" and node.output[0] in values:
            t = node.attribute[0].t
            t.CopyFrom(onnx.numpy_helper.from_array(values.pop(node.output[0]).reshape(onnx.numpy_helper.to_array(t).shape), node.output[0]))
    if values:
        raise SystemExit(f"not written back: {list(values)[:5]}")
    onnx.save(student, os.path.join(folder, "student-torch.onnx"))
    json.dump({"steps": steps, "bestEpoch": best_epoch, "bestScore": best_score, "startScore": start_score, "startLogitDiff": start_diff, "history": history,
               "seconds": seconds, "convertSeconds": conv_s, "params": sum(p.numel() for p in params), "threads": torch.get_num_threads()},
              open(os.path.join(folder, "torch.json"), "w"))


if __name__ == "__main__":
    main(sys.argv[1])
