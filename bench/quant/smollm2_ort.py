"""onnxruntime's own quantizers on SmolLM2-135M, the reference side of bench/quant/smollm2.mjs (bench only;
/work/venv/bin/python with onnxruntime and its quantizer's dependency onnx_ir):
  - 4-bit: MatMulNBitsQuantizer (the MatMul4BitsQuantizer of older releases), bits 4, block 32, symmetric,
    round-to-nearest (its default algorithm); MatMul weights only, the Gather table left float32;
  - int8: quantize_dynamic(in, out, weight_type=QInt8) with its defaults (per tensor), the one-liner
    transformers.js' q8 files come from.
Usage: /work/venv/bin/python bench/quant/smollm2_ort.py [--model bench/out/smollm2/onnx/model.onnx] [--out DIR]
Writes DIR/ort_q4.onnx and DIR/ort_q8.onnx.
"""
import argparse
import time
from pathlib import Path

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="bench/out/smollm2/onnx/model.onnx")
    ap.add_argument("--out", default="bench/out/smollm2-quant")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t = time.time()
    cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, bits=4)
    q = MatMulNBitsQuantizer(onnx.load(a.model), bits=4, block_size=32, is_symmetric=True, algo_config=cfg)
    q.process()
    q.model.save_model_to_file(str(out / "ort_q4.onnx"), False)
    print(f"ort 4-bit: {time.time() - t:.0f} s")
    t = time.time()
    quantize_dynamic(a.model, str(out / "ort_q8.onnx"), weight_type=QuantType.QInt8)
    print(f"ort dynamic int8: {time.time() - t:.0f} s")


if __name__ == "__main__":
    main()
