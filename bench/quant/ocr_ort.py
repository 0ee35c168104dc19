"""onnxruntime's own quantizers on the PaddleOCR det and rec models, the reference side of
bench/quant/ocr.mjs (bench only; /work/venv/bin/python with onnxruntime and onnx).
  - the documented pre-processing first (`quant_pre_process`, the step the quantizer asks for): the
    PaddleOCR exports hold their weights in Constant nodes, which quantize_dynamic refuses ("Expected
    conv2d_394.w_0 to be an initializer"); its symbolic shape inference fails on them ("Incomplete
    symbolic shape inference"), so it runs with skip_symbolic_shape=True (onnx shape inference and
    onnxruntime's graph optimisation still run, which turn the Constants into initializers);
  - dynamic int8: quantize_dynamic(pre, out, weight_type=QInt8) with its defaults (per tensor):
    ConvInteger / MatMulInteger with DynamicQuantizeLinear, the one-liner;
  - static int8 QDQ (what users pick for a CNN): quantize_static, QDQ format, QInt8 weights per channel,
    QUInt8 activations, MinMax calibration on the .npy feeds of --calib DIR (written by ocr.mjs from the
    rendered calibration pages / lines, disjoint from the held-out ones). On the pre-processed opset-11
    file it writes per-axis DequantizeLinear nodes that opset 11 does not allow, and onnxruntime (1.30
    node, 1.32 Python) refuses the result ("This is an invalid model ... DequantizeLinear"); so the model
    is first converted to opset 13 with onnx.version_converter (outputs unchanged: max |diff| 0 on a
    random input, checked 2026-11-28), the step a user takes after that error.
Usage: /work/venv/bin/python bench/quant/ocr_ort.py --model FILE --out DIR --name det [--calib DIR]
Writes DIR/NAME_pre.onnx, DIR/NAME_ort_q8.onnx and (with --calib) DIR/NAME_pre13.onnx, DIR/NAME_ort_qdq.onnx.
"""
import argparse
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import version_converter
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process


class NpyReader(CalibrationDataReader):
    """The calibration feeds, one .npy per sample, under the model's single input name."""

    def __init__(self, folder, input_name):
        self.files = sorted(Path(folder).glob("*.npy"))
        self.input_name = input_name
        self.i = 0

    def get_next(self):
        if self.i >= len(self.files):
            return None
        x = np.load(self.files[self.i])
        self.i += 1
        return {self.input_name: x}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--calib")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pre = str(out / f"{a.name}_pre.onnx")
    t = time.time()
    quant_pre_process(a.model, pre, skip_symbolic_shape=True)
    quantize_dynamic(pre, str(out / f"{a.name}_ort_q8.onnx"), weight_type=QuantType.QInt8)
    print(f"{a.name}: ort dynamic int8 {time.time() - t:.1f} s")
    if a.calib:
        t = time.time()
        pre13 = str(out / f"{a.name}_pre13.onnx")
        onnx.save(version_converter.convert_version(onnx.load(pre), 13), pre13)
        quantize_static(pre13, str(out / f"{a.name}_ort_qdq.onnx"), NpyReader(a.calib, "x"), quant_format=QuantFormat.QDQ,
                        per_channel=True, weight_type=QuantType.QInt8, activation_type=QuantType.QUInt8)
        print(f"{a.name}: ort static QDQ int8 {time.time() - t:.1f} s")


if __name__ == "__main__":
    main()
