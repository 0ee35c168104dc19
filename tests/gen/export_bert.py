"""A small BERT encoder from transformers (BertConfig: hidden 64, 2 layers, 4 heads, intermediate 256,
vocab 1000), random init seeded, exported with torch.onnx.export at opset 17 with input_ids and
attention_mask (dynamic batch and sequence). Nothing is downloaded.

usage: /work/venv/bin/python tests/gen/export_bert.py [OUT.onnx]"""
import os
import sys
import torch
from transformers import BertConfig, BertModel

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "data", "models", "bert-torch.onnx"))

torch.manual_seed(0)
cfg = BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=256, max_position_embeddings=128, attn_implementation="eager")
model = BertModel(cfg, add_pooling_layer=False).eval()
# BERT's init sets every bias to zero and every LayerNorm to (1, 0); the exporter then folds equal
# initializers of the two layers into one tensor. Random values, as a trained model has, keep them apart.
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("bias") or "LayerNorm" in name:
            p.add_(torch.randn_like(p) * 0.02)


class Encoder(torch.nn.Module):
    """Returns the last hidden state only, so the ONNX graph has one output."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


ids = torch.randint(0, cfg.vocab_size, (1, 16))
mask = torch.ones(1, 16, dtype=torch.int64)
torch.onnx.export(Encoder(model), (ids, mask), out, opset_version=17, input_names=["input_ids", "attention_mask"],
                  output_names=["last_hidden_state"],
                  dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                "last_hidden_state": {0: "batch", 1: "seq"}}, dynamo=False)
print(f"wrote {out}: {os.path.getsize(out)} bytes")
