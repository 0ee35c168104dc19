"""A small BERT encoder from transformers (BertConfig: hidden 64, 2 layers, 4 heads, intermediate 256,
vocab 1000), random init seeded, exported with torch.onnx.export at opset 17 with input_ids and
attention_mask (dynamic batch and sequence). Nothing is downloaded. The options export larger ones
for benchmarks (bench/channels/channels-bert-latency.mjs --torch) and a fixed-size one (--static: no dynamic
axes, so the exporter folds the shapes into constants).

usage: /work/venv/bin/python tests/gen/export_bert.py [OUT.onnx] [--hidden 64] [--heads 4] [--ffn 256]
       [--layers 2] [--vocab 1000] [--max-pos 128] [--static] [--seq 16]"""
import argparse
import os
import torch
from transformers import BertConfig, BertModel

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("out", nargs="?", default=os.path.normpath(os.path.join(here, "..", "data", "models", "bert-torch.onnx")))
ap.add_argument("--hidden", type=int, default=64)
ap.add_argument("--heads", type=int, default=4)
ap.add_argument("--ffn", type=int, default=256)
ap.add_argument("--layers", type=int, default=2)
ap.add_argument("--vocab", type=int, default=1000)
ap.add_argument("--max-pos", type=int, default=128)
ap.add_argument("--seq", type=int, default=16, help="sequence length of the example input (the fixed one with --static)")
ap.add_argument("--static", action="store_true", help="no dynamic axes")
args = ap.parse_args()
out = args.out

torch.manual_seed(0)
cfg = BertConfig(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers, num_attention_heads=args.heads,
                 intermediate_size=args.ffn, max_position_embeddings=args.max_pos, attn_implementation="eager")
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


ids = torch.randint(0, cfg.vocab_size, (1, args.seq))
mask = torch.ones(1, args.seq, dtype=torch.int64)
dynamic = None if args.static else {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"}}
torch.onnx.export(Encoder(model), (ids, mask), out, opset_version=17, input_names=["input_ids", "attention_mask"],
                  output_names=["last_hidden_state"], dynamic_axes=dynamic, dynamo=False)
print(f"wrote {out}: {os.path.getsize(out)} bytes")
