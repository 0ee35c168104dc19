"""Two small recurrent models as torch.onnx.export writes them (opset 17, dynamic batch and
sequence, the TorchScript exporter: nn.GRU / nn.LSTM become ONNX GRU / LSTM nodes), random init
seeded, nothing downloaded (issue 38's corpus):
- gru-lm.onnx: a GRU language model: Embedding(160, 32) -> GRU(32, 48, batch_first) -> Linear(48, 160),
  input `input_ids` [B, S], output `logits` [B, S, 160]; torch writes linear_before_reset = 1 and
  the batch-first layout as Transposes around the cell;
- lstm-tagger.onnx: a byte-level classifier: Embedding(256, 24) -> bidirectional LSTM(24, 32) ->
  mean over time -> Linear(64, 6), input `input_ids` [B, S], output `logits` [B, 6].

usage: /work/venv/bin/python tests/gen/export_rnn.py [OUT_DIR]"""
import os
import sys
import torch

here = os.path.dirname(os.path.abspath(__file__))
out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.normpath(os.path.join(here, "..", "data", "models"))
torch.manual_seed(0)


class GruLm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(160, 32)
        self.gru = torch.nn.GRU(32, 48, batch_first=True)
        self.head = torch.nn.Linear(48, 160)

    def forward(self, input_ids):
        h, _ = self.gru(self.emb(input_ids))
        return self.head(h)


class LstmTagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(256, 24)
        self.lstm = torch.nn.LSTM(24, 32, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(64, 6)

    def forward(self, input_ids):
        h, _ = self.lstm(self.emb(input_ids))
        return self.head(h.mean(dim=1))


for name, model, vocab, out_axes in [("gru-lm", GruLm(), 160, {0: "batch", 1: "seq"}), ("lstm-tagger", LstmTagger(), 256, {0: "batch"})]:
    path = os.path.join(out_dir, f"{name}.onnx")
    ids = torch.randint(0, vocab, (2, 12))
    torch.onnx.export(model.eval(), (ids,), path, opset_version=17, input_names=["input_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": out_axes}, dynamo=False)
    print(f"wrote {path}: {os.path.getsize(path)} bytes")
