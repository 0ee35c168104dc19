"""Writes tests/data/models/bert-torch-q8dyn.onnx: bert-torch.onnx through onnxruntime's own
`quantize_dynamic` (int8 weights per channel, MatMulInteger + DynamicQuantizeLinear), the form of
transformers.js' q8 files. Needs onnxruntime and onnx (/work/venv/bin/python); the tests read the
committed output and never run this.

Usage: python quantize_dynamic.py ../data/models/bert-torch.onnx ../data/models/bert-torch-q8dyn.onnx
"""
import sys

from onnxruntime.quantization import QuantType, quantize_dynamic

src, dst = sys.argv[1], sys.argv[2]
# per_channel: one scale per output column, as transformers.js' quantize script asks for its q8 files.
quantize_dynamic(src, dst, weight_type=QuantType.QInt8, per_channel=True)
