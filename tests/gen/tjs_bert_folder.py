"""Writes tests/data/models/tjs-bert/: a transformers.js model folder of a small BERT encoder, the layout
`pipeline('feature-extraction', folder)` of @huggingface/transformers reads offline:

  config.json (model_type "bert"), tokenizer.json, tokenizer_config.json, special_tokens_map.json,
  onnx/model.onnx            float32 (what `prune` reads from a folder by default)
  onnx/model_quantized.onnx  the same through onnxruntime's quantize_dynamic (per channel, int8 weights):
                             the form of transformers.js' `q8` files

The tokenizer is all-MiniLM-L6-v2's (tests/data/tokenizers/all-minilm-l6-v2.json: BERT normaliser,
pre-tokenizer, [CLS] .. [SEP] template) over a 1 024-entry vocabulary cut from it (the specials, every
printable ASCII character alone and as a ##continuation, then the first words of its vocabulary), so
any English line tokenizes and the embedding table stays small. The model is transformers' BertModel
(hidden 64, 2 layers, 4 heads, FFN 128), random init seeded with std 0.1 (BERT's 0.02 leaves the layers so
small beside the embeddings that any pruning looks harmless; biases and LayerNorms perturbed so the
layers do not share tensors), exported by torch.onnx.export at opset 17 with input_ids,
attention_mask, token_type_ids and last_hidden_state, dynamic batch and sequence. Nothing is downloaded;
the same bytes each run. Needs torch, transformers, tokenizers, onnxruntime (/work/venv/bin/python).

usage: /work/venv/bin/python tests/gen/tjs_bert_folder.py [OUT_DIR]
"""
import json
import os
import sys

import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

here = os.path.dirname(os.path.abspath(__file__))
out = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "data", "models", "tjs-bert"))
src = json.load(open(os.path.join(here, "..", "data", "tokenizers", "all-minilm-l6-v2.json")))
VOCAB = 1024

specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
old = src["model"]["vocab"]
chars = [chr(c) for c in range(33, 127) if chr(c) in old and not chr(c).isupper()]
tokens = specials + chars + ["##" + c for c in chars if "##" + c in old]
by_id = sorted(old.items(), key=lambda kv: kv[1])
for tok, i in by_id:
    if len(tokens) >= VOCAB:
        break
    if i >= 1996 and tok.isalpha() and tok.isascii() and tok not in tokens:
        tokens.append(tok)
vocab = {t: i for i, t in enumerate(tokens)}

tj = dict(src)
tj["model"] = dict(src["model"], vocab=vocab)
tj["added_tokens"] = [dict(a, id=vocab[a["content"]]) for a in src["added_tokens"] if a["content"] in vocab]
pp = json.loads(json.dumps(src["post_processor"]))
for name, st in pp["special_tokens"].items():
    st["ids"] = [vocab[name]]
tj["post_processor"] = pp
tj["truncation"] = None
tj["padding"] = None
text = json.dumps(tj, ensure_ascii=False, indent=2)
Tokenizer.from_str(text)  # the tokenizers library reads it back

os.makedirs(os.path.join(out, "onnx"), exist_ok=True)
with open(os.path.join(out, "tokenizer.json"), "w") as f:
    f.write(text)
json.dump({"do_lower_case": True, "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
           "mask_token": "[MASK]", "tokenize_chinese_chars": True, "strip_accents": None, "tokenizer_class": "BertTokenizer",
           "model_max_length": 128}, open(os.path.join(out, "tokenizer_config.json"), "w"), indent=2)
json.dump({"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]", "mask_token": "[MASK]"},
          open(os.path.join(out, "special_tokens_map.json"), "w"), indent=2)

torch.manual_seed(0)
cfg = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                 max_position_embeddings=128, initializer_range=0.1, attn_implementation="eager")
model = BertModel(cfg, add_pooling_layer=False).eval()
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.endswith("bias") or "LayerNorm" in name:
            p.add_(torch.randn_like(p) * 0.02)
d = cfg.to_dict()
for k in ("attn_implementation", "_attn_implementation_autoset", "torch_dtype", "dtype", "transformers_version"):
    d.pop(k, None)
d["architectures"] = ["BertModel"]
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(d, f, indent=2, sort_keys=True)


class Encoder(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


ids = torch.randint(5, len(vocab), (1, 12))
mask = torch.ones(1, 12, dtype=torch.int64)
types = torch.zeros(1, 12, dtype=torch.int64)
dyn = {n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")}
fp32 = os.path.join(out, "onnx", "model.onnx")
torch.onnx.export(Encoder(model), (ids, mask, types), fp32, opset_version=17,
                  input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                  dynamic_axes=dyn, dynamo=False)
# per_channel int8 weights, as transformers.js' quantize script writes its q8 files for models without Conv.
quantize_dynamic(fp32, os.path.join(out, "onnx", "model_quantized.onnx"), weight_type=QuantType.QInt8, per_channel=True)
for r, _, fs in os.walk(out):
    for f in sorted(fs):
        print(os.path.join(r, f), os.path.getsize(os.path.join(r, f)))
