# Bench only (needs /work/venv: torch, transformers, onnx, onnxruntime; never run by the test command).
# A synthetic 1-B-parameter Llama-shaped decoder for issue 40's "1-B-parameter Llama-shaped model: Wanda
# 50% within 8 GB of RSS" and "a model over 2 GB is read and written with external data": TinyLlama-1.1B's
# body (hidden 2 048, 22 layers, 32 query heads over 4 KV heads of 64, SwiGLU 5 632, RMSNorm, RoPE) with
# SmolLM2's 49 152-token vocabulary and tied embeddings, so that SmolLM2's tokenizer.json feeds it text
# (1.07 B parameters, about 4.3 GB of float32). Random weights from transformers' own init (normal with
# std = initializer_range 0.02, RMSNorm weights 1): nothing is downloaded; the weights mean nothing, but
# the activations stay finite, and the pruning's memory and time do not depend on what they mean.
#   python bench/models/llama_synth.py [--out bench/out/llama1b] [--layers 22]
# Writes a transformers.js folder: config.json, tokenizer.json + tokenizer_config.json (copied from
# /work/models/smollm2, whose vocabulary this model shares), onnx/model.onnx with every large tensor in
# one external file onnx/model.onnx_data (transformers.js' name for it). The export is smollm2.py's
# (torch.onnx, opset 17, TorchScript, input_ids + attention_mask + position_ids -> logits [B, S, V], no
# KV cache); the tensors torch wrote are then streamed into one data file, a tensor at a time.
import argparse
import gc
import os
import shutil
import tempfile

import numpy as np
import onnx
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from smollm2 import LogitsOnly, export

SMOLLM2 = "/work/models/smollm2"


def config(layers):
    return LlamaConfig(vocab_size=49152, hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers,
                       num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048,
                       rms_norm_eps=1e-5, rope_theta=10000.0, initializer_range=0.02, tie_word_embeddings=True,
                       bos_token_id=1, eos_token_id=2, pad_token_id=2, attn_implementation="eager")


def gather_external(tmp_file, file):
    """The tensors torch wrote (inline, or in data files of its own past protobuf's 2 GB) streamed into one
    data file beside the model, a tensor at a time: onnx.load with its data and save_model would hold the
    4.7 GB twice."""
    m = onnx.load(tmp_file, load_external_data=False)
    data = os.path.basename(file) + "_data"
    folder = os.path.dirname(tmp_file)
    with open(os.path.join(os.path.dirname(file), data), "wb") as out:
        for t in m.graph.initializer:
            if t.data_location == onnx.TensorProto.EXTERNAL:
                info = {e.key: e.value for e in t.external_data}
                with open(os.path.join(folder, info["location"]), "rb") as f:
                    f.seek(int(info.get("offset", 0)))
                    raw = f.read(int(info["length"])) if "length" in info else f.read()
            elif len(t.raw_data) >= 1024:
                raw = t.raw_data
            else:
                continue
            out.seek((out.tell() + 4095) // 4096 * 4096)  # page-aligned, as onnx's writer aligns for mmap
            offset = out.tell()
            out.write(raw)
            t.ClearField("raw_data")
            del t.external_data[:]
            for k, v in (("location", data), ("offset", str(offset)), ("length", str(len(raw)))):
                e = t.external_data.add()
                e.key, e.value = k, v
            t.data_location = onnx.TensorProto.EXTERNAL
            del raw
    onnx.save_model(m, file)
    return os.path.join(os.path.dirname(file), data)


def sanity(file, ids, ref):
    """onnxruntime on 1 x 16 tokens: finite logits, equal to torch's on the same window."""
    import onnxruntime as ort
    s = ort.InferenceSession(file, providers=["CPUExecutionProvider"])
    seq = ids.shape[1]
    out = s.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                       "position_ids": np.arange(seq)[None].astype(np.int64)})[0]
    assert np.isfinite(out).all(), "non-finite logits"
    print(f"{file}: logits {out.shape}, std {out.std():.3g}, max |onnxruntime - torch| = {np.abs(out - ref).max():.3g}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/out/llama1b")
    ap.add_argument("--layers", type=int, default=22)
    a = ap.parse_args()
    torch.manual_seed(0)
    cfg = config(a.layers)
    model = LlamaForCausalLM(cfg).eval()
    n = sum(p.numel() for p in model.parameters())
    w = model.model.layers[0].mlp.gate_proj.weight
    print(f"{n / 1e9:.3f} B parameters; gate_proj[0] std {w.std():.4f} (initializer_range {cfg.initializer_range})")

    ids = torch.randint(0, cfg.vocab_size, (1, 16))
    with torch.no_grad():
        ref = LogitsOnly(model)(ids, torch.ones_like(ids), torch.arange(16).unsqueeze(0)).numpy()
    assert np.isfinite(ref).all(), "torch's logits are not finite"

    os.makedirs(os.path.join(a.out, "onnx"), exist_ok=True)
    cfg.save_pretrained(a.out)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(SMOLLM2, name), os.path.join(a.out, name))
    file = os.path.join(a.out, "onnx", "model.onnx")
    with tempfile.TemporaryDirectory(dir=a.out) as tmp:
        tmp_file = os.path.join(tmp, "model.onnx")
        with torch.no_grad():
            export(model, tmp_file)
        del model, w
        gc.collect()
        data = gather_external(tmp_file, file)
    print(f"{file}: {os.path.getsize(file) / 1e6:.2f} MB + {data}: {os.path.getsize(data) / 1e9:.3f} GB")
    sanity(file, ids.numpy(), ref)


if __name__ == "__main__":
    main()
