"""Inputs of bench/quant/minilm.mjs (bench only; /work/venv/bin/python with onnxruntime, tokenizers):
  - held-out English lines (the licence texts in /usr/share/common-licenses: real sentences, never
    seen as calibration), tokenized with the model's tokenizer.json (Python `tokenizers`);
  - onnxruntime's own dynamic int8 of the float model, both ways the one-liner is written:
    `quantize_dynamic(in, out)` (per tensor, its defaults) and with per_channel=True.
Writes into the model folder: bench-sentences.json ({heldOut, calibration}), onnx/model_ort_q8.onnx, onnx/model_ort_q8_pc.onnx.
Usage: /work/venv/bin/python bench/quant/prepare.py [--model bench/out/models/all-MiniLM-L6-v2] [--n 96]
"""
import argparse
import json
import re
from pathlib import Path

import numpy as np
import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
from tokenizers import Tokenizer

# Held-out lines, and (other texts) the calibration lines of the Wanda variant.
HELD_OUT = ["GPL-3", "Apache-2.0", "LGPL-3", "MPL-2.0", "GFDL-1.3", "Artistic", "BSD"]
CALIB = ["GPL-2", "LGPL-2.1", "MPL-1.1", "GFDL-1.2"]


def lines(n, names):
    out, seen = [], set()
    for name in names:
        p = Path("/usr/share/common-licenses") / name
        if not p.exists():
            continue
        text = re.sub(r"\s+", " ", p.read_text(errors="replace"))
        for s in re.split(r"(?<=[.;:])\s+", text):
            s = s.strip()
            if 40 <= len(s) <= 220 and re.match(r"^[A-Za-z\"(]", s) and s not in seen:
                seen.add(s)
                out.append(s)
    # Every k-th line: spread over all the texts, deterministic.
    k = max(1, len(out) // n)
    return out[::k][:n]


def axes_to_inputs(model):
    """The quantizer raises the opset to 21 for GatherBlockQuantized's int4 table but leaves the
    export's ReduceL2 (opset 17) with its `axes` attribute, an input from opset 18 on: onnxruntime
    then refuses the model. The attribute is moved to an int64 initializer."""
    if max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < 18:
        return
    for n in model.graph.node:
        if not n.op_type.startswith("Reduce") or n.op_type == "ReduceSum":
            continue
        for a in list(n.attribute):
            if a.name == "axes":
                t = onnx.numpy_helper.from_array(np.array(list(a.ints), dtype=np.int64), f"{n.name}_axes")
                model.graph.initializer.append(t)
                n.input.append(t.name)
                n.attribute.remove(a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bench/out/models/all-MiniLM-L6-v2")
    ap.add_argument("--n", type=int, default=96)
    a = ap.parse_args()
    d = Path(a.model)
    tok = Tokenizer.from_file(str(d / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(128)
    enc = lambda s: (lambda e: {"text": s, "ids": e.ids, "type_ids": e.type_ids, "mask": e.attention_mask})(tok.encode(s))
    sents = [enc(s) for s in lines(a.n, HELD_OUT)]
    calib = [enc(s) for s in lines(32, CALIB)]
    (d / "bench-sentences.json").write_text(json.dumps({"heldOut": sents, "calibration": calib}))
    src = str(d / "onnx" / "model.onnx")
    quantize_dynamic(src, str(d / "onnx" / "model_ort_q8.onnx"), weight_type=QuantType.QInt8)
    quantize_dynamic(src, str(d / "onnx" / "model_ort_q8_pc.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    for name, extra in [("model_ort_q4", {}), ("model_ort_q4_al4", {"accuracy_level": 4}),
                        ("model_ort_q4_gather", {"op_types_to_quantize": ("MatMul", "Gather")})]:
        cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, bits=4, **extra)
        q = MatMulNBitsQuantizer(onnx.load(src), bits=4, block_size=32, is_symmetric=True, algo_config=cfg)
        q.process()
        axes_to_inputs(q.model.model)
        q.model.save_model_to_file(str(d / "onnx" / f"{name}.onnx"), False)
    print(f"{len(sents)} sentences, tokens {min(len(s['ids']) for s in sents)}..{max(len(s['ids']) for s in sents)}")


if __name__ == "__main__":
    main()
