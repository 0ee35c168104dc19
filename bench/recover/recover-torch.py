"""PyTorch side of bench/recover/recover-vs-torch.mjs: the same distillation as recover() on the same start.

  python bench/recover/recover-torch.py DIR [--diverge [--per-tensor]] [--no-mkldnn | --f64] [--per-epoch]

DIR (written by the node side) holds student.onnx (the pruned model after recover()'s closed-form
steps), recipe.json (trained tensors, loss, lr, batch, Adam constants, the batch order of every
epoch), train_x.npy / train_t.npy (inputs and the teacher's values of the trained tensor),
val_x.npy / val_ref.npy (validation inputs and the teacher's outputs). The student is converted with
onnx2torch (the tricks of bench/train/train-torch.py), trained with Adam on exactly the recipe's tensors
(their zeros held at zero: gradients and weights masked), scored after each epoch by the package's fidelity
to the teacher on the validation set (classification: top-1 agreement; sequence: 1 - CER of the greedy decodes), and the best epoch's
values are written back into student.onnx's own tensors -> DIR/student-torch.onnx, DIR/torch.json (with
--per-epoch also every epoch's values -> DIR/student-torch-eN.onnx).
--f64 trains in float64 from the same float32 start (the recipe with rounding ~1e-16 instead of
~1e-7: the reference the float32 engines are measured against); its values are written back
rounded to float32.
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
import torch
from onnx2torch import convert

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from train_torch_helpers import static_for_torch  # noqa: E402


def trained_graph(model, recipe):
    """The student whose output is the trained tensor (the final Softmax dropped, as trainSetup does)."""
    m = copy.deepcopy(model)
    if recipe["tensor"] != recipe["output"]:
        m.graph.node.remove(next(n for n in m.graph.node if recipe["output"] in n.output))
        del m.graph.output[:]
        m.graph.output.append(onnx.ValueInfoProto(name=recipe["tensor"]))
    return m


def prepared(model, recipe, batch_shape):
    """The graph torch converts: trained_graph at opset >= 13, its constants as initializers, static shapes."""
    return static_for_torch(trained_graph(model, recipe), batch_shape)


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


def samples(folder, name, shapes):
    """The samples of DIR/name.npy (1-D, one after the other), each in its own shape from recipe.json."""
    flat = torch.from_numpy(np.load(os.path.join(folder, name + ".npy")))
    out, at = [], 0
    for dims in shapes[name]:
        n = int(np.prod(dims))
        out.append(flat[at : at + n].reshape(dims))
        at += n
    if at != flat.numel():
        raise SystemExit(f"{name}.npy holds {flat.numel()} values, its shapes {at}")
    return out


def greedy(steps, blank=0):
    """Greedy CTC decode: argmax per step, repeats collapsed, blanks dropped."""
    out, last = [], -1
    for s in steps:
        if s != last and s != blank:
            out.append(s)
        last = s
    return out


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i]
        for j in range(1, len(b) + 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])))
        prev = cur
    return prev[len(b)]


def fidelity(kind, outs, refs):
    """The package's fidelity (pkg-template/src/onnx/fidelity): classification = top-1 agreement over
    the rows along the last axis; sequence = 1 - (edits of the greedy decodes) / (length of the teacher's)."""
    if kind == "classification":
        rows = [(o.reshape(-1, o.shape[-1]).argmax(-1) == r.reshape(-1, r.shape[-1]).argmax(-1)) for o, r in zip(outs, refs)]
        return float(torch.cat(rows).float().mean())
    edits, length = 0, 0
    for o, r in zip(outs, refs):
        a, b = greedy(r.reshape(-1, r.shape[-1]).argmax(-1).tolist()), greedy(o.reshape(-1, o.shape[-1]).argmax(-1).tolist())
        edits += edit_distance(a, b)
        length += len(a)
    return max(0.0, 1 - edits / max(1, length))


def validate(net, kind, vx, vref):
    """Fidelity of the student on the validation samples (one at a time: rec lines differ in width)."""
    with torch.no_grad():
        outs = [net(x.unsqueeze(0))[0] for x in vx]
    return fidelity(kind, outs, vref), outs


def batch_of(data, idx):
    return torch.stack([data[i] for i in idx])


def exact_gradient(net, paths, masks, x, t):
    """The first step's gradient in float64 (a double copy of the net at its start values): the exact
    value both float32 engines round, so each one's error is measured against it."""
    ref = copy.deepcopy(net).double()
    held = tensors_of(ref)
    y = ref(x.double())
    torch.nn.functional.mse_loss(y, t.double()).backward()
    return [held[p].grad.flatten() * m.flatten().double() for p, m in zip(paths, masks)], y.detach().flatten()


def diverge(folder, net, params, masks, tx, tt_, recipe, where):
    """--diverge: the first epoch's steps as bench/recover/recover-diverge.mjs took them with the training core
    (DIR/diverge-ours.json): per step the two losses; after step 1 and the last step, per tensor, the
    largest difference and how many values differ by more than lr / 2 (with Adam's first step, about
    lr * sign(gradient): these are sign disagreements of the gradient)."""
    ours = json.load(open(os.path.join(folder, "diverge-ours.json")))
    first_batch = recipe["order"][0][0]
    exact, y64 = exact_gradient(net, [where[n] for n in recipe["trained"]], masks, batch_of(tx, first_batch), batch_of(tt_, first_batch))
    with torch.no_grad():
        y32 = net(batch_of(tx, first_batch)).flatten().double()
    for label, y in (("torch", y32), ("ours", torch.tensor(ours["forward"], dtype=torch.float64))):
        print(f"start outputs of {label} on the first batch against float64: largest error {float((y - y64).abs().max()):.1e} "
              f"(outputs up to {float(y64.abs().max()):.1f}), relative L2 {float((y - y64).norm() / y64.norm()):.1e}", file=sys.stderr)
    a = recipe["adam"]
    opt = torch.optim.Adam(params, lr=recipe["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weightDecay"])
    losses, first, grad = [], None, None
    snap = lambda: [p.detach().clone().flatten() for p in params]
    for idx in recipe["order"][0][: len(ours["losses"])]:
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(batch_of(tx, idx)), batch_of(tt_, idx))
        loss.backward()
        for p, m in zip(params, masks):
            p.grad.mul_(m)
        grad = grad or [p.grad.detach().clone().flatten() for p in params]
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
    for label, g32 in (("torch", grad), ("ours", [torch.tensor(ours["grad"][n]) for n in recipe["trained"]])):
        rel = [float((g.double() - e).norm() / max(float(e.norm()), 1e-300)) for g, e in zip(g32, exact)]
        worst = int(np.argmax(rel))
        if "--per-tensor" in sys.argv:
            print(label, " ".join(f"{n}:{r:.0e}" for n, r in zip(recipe["trained"], rel)), file=sys.stderr)
        print(f"step 1 gradient of {label} against float64: relative L2 error per tensor median {np.median(rel):.1e}, "
              f"largest {rel[worst]:.1e} ({recipe['trained'][worst]})", file=sys.stderr)
    compare(first, ours["first"], "after step 1")
    compare(snap(), ours["last"], f"after step {len(losses)}")


def write_back(student, recipe, tensors, file):
    """`tensors` (recipe["trained"] order) into a copy of student.onnx's own tensors (initializers or
    Constant nodes), saved as `file`."""
    m = copy.deepcopy(student)
    values = {n: b.detach().float().numpy() for n, b in zip(recipe["trained"], tensors)}
    for init in m.graph.initializer:
        if init.name in values:
            init.CopyFrom(onnx.numpy_helper.from_array(values.pop(init.name).reshape(onnx.numpy_helper.to_array(init).shape), init.name))
    for node in m.graph.node:
        if node.op_type == "Constant" and node.output[0] in values:
            t = node.attribute[0].t
            t.CopyFrom(onnx.numpy_helper.from_array(values.pop(node.output[0]).reshape(onnx.numpy_helper.to_array(t).shape), node.output[0]))
    if values:
        raise SystemExit(f"not written back: {list(values)[:5]}")
    onnx.save(m, file)


def main(folder):
    torch.set_num_threads(1)
    # --no-mkldnn: torch's own convolution kernels instead of oneDNN's: the same arithmetic rounded in
    # another order, to see how far the result moves from float rounding alone
    torch.backends.mkldnn.enabled = "--no-mkldnn" not in sys.argv
    recipe = json.load(open(os.path.join(folder, "recipe.json")))
    if recipe["loss"] not in ("logits", "mse") or recipe["kind"] not in ("classification", "sequence"):
        raise SystemExit(f"this bench implements the MSE / logit loss and the classification / sequence fidelity, not {recipe['loss']} / {recipe['kind']}")
    shapes = recipe["shapes"]
    tx, tt_ = samples(folder, "train_x", shapes), samples(folder, "train_t", shapes)
    vx, vref = samples(folder, "val_x", shapes), samples(folder, "val_ref", shapes)
    f64 = "--f64" in sys.argv
    if f64:
        tx, tt_, vx = ([x.double() for x in xs] for xs in (tx, tt_, vx))
    kind = recipe["kind"]
    batch = recipe["batch"]
    student = onnx.load(os.path.join(folder, "student.onnx"))
    t_conv = time.perf_counter()
    model = prepared(student, recipe, [batch, *tx[0].shape])
    where = locate(model, recipe["trained"])
    net = convert(model)
    net.eval()  # BatchNormalization in its inference form, as the training core has it
    if f64:
        net.double()
    for p in net.parameters():
        p.requires_grad_(False)
    params = [as_parameter(net, where[n]) for n in recipe["trained"]]
    for p in params:
        p.requires_grad_(True)
    masks = [(p.detach() != 0).to(p.dtype) for p in params]
    conv_s = time.perf_counter() - t_conv

    if "--diverge" in sys.argv:
        return diverge(folder, net, params, masks, tx, tt_, recipe, where)

    # The converted start against onnxruntime on the same graph: the largest difference of its outputs.
    start_score, y0 = validate(net, kind, vx, vref)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(trained_graph(student, recipe).SerializeToString(), so, providers=["CPUExecutionProvider"])
    y_ort = [sess.run(None, {student.graph.input[0].name: x.unsqueeze(0).float().numpy()})[0] for x in vx]
    start_diff = max(float(np.abs(a.reshape(b.shape) - b.float().numpy()).max()) for a, b in zip(y_ort, y0))
    a = recipe["adam"]
    opt = torch.optim.Adam(params, lr=recipe["lr"], betas=(a["beta1"], a["beta2"]), eps=a["eps"], weight_decay=a["weightDecay"])
    best = [p.detach().clone() for p in params]
    best_score, best_epoch, history, steps = start_score, 0, [], 0
    t0 = time.perf_counter()
    for epoch, batches in enumerate(recipe["order"], 1):
        total, n = 0.0, 0
        for idx in batches:
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(net(batch_of(tx, idx)), batch_of(tt_, idx))
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
        score, _ = validate(net, kind, vx, vref)
        history.append({"epoch": epoch, "loss": total / n, "fidelity": score})
        print(f"  torch epoch {epoch} loss {total / n:.5f} val {score:.4f}", file=sys.stderr, flush=True)
        if "--per-epoch" in sys.argv:  # every epoch's parameters, for held-out figures per epoch
            write_back(student, recipe, params, os.path.join(folder, f"student-torch-e{epoch}.onnx"))
        if score >= best_score:  # a tie goes to the later epoch, as recover() does
            best, best_score, best_epoch = [p.detach().clone() for p in params], score, epoch
    seconds = time.perf_counter() - t0

    write_back(student, recipe, best, os.path.join(folder, "student-torch.onnx"))
    json.dump({"steps": steps, "bestEpoch": best_epoch, "bestScore": best_score, "startScore": start_score, "startLogitDiff": start_diff, "history": history,
               "seconds": seconds, "convertSeconds": conv_s, "params": sum(p.numel() for p in params), "threads": torch.get_num_threads(), "dtype": str(params[0].dtype)},
              open(os.path.join(folder, "torch.json"), "w"))


if __name__ == "__main__":
    main(sys.argv[1])
