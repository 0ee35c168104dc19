#!/usr/bin/env bash
# `npm run bench`: builds the bench wasm modules and the native bench, runs the suite natively,
# in Node and in headless Chromium, prints the tables, writes bench/out/latest.json and
# bench/RESULTS.md. Usage: bash scripts/bench.sh [--quick] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
QUICK=""; BUILD=1
for a in "$@"; do
  case $a in
    --quick) QUICK=--quick ;;
    --no-build) BUILD=0 ;;
  esac
done
mkdir -p bench/out
if [ "$BUILD" = 1 ]; then
  bash bench/build-wasm.sh
  echo "[bench] native bench (bench/rust, release, native-threads)"
  CARGO_TARGET_DIR=target-bench-native cargo build -q --release --manifest-path bench/rust/Cargo.toml --features native-threads --bin native_bench
fi
echo "[bench] native"
./target-bench-native/release/native_bench $QUICK --check > bench/out/native.jsonl
echo "[bench] node"
node --no-liftoff bench/kernels/node.mjs $QUICK > bench/out/node.jsonl
echo "[bench] chromium"
node bench/kernels/chromium.mjs $QUICK > bench/out/chromium.jsonl
echo "[bench] threads probe (chromium) and the 2:4 mask repeated (node)"
node bench/kernels/chromium.mjs --threads $QUICK > bench/out/threads.jsonl
node --no-liftoff bench/kernels/nm-node.mjs > bench/out/nm.jsonl
node --no-liftoff bench/kernels/nm-package.mjs > bench/out/nm-package.jsonl
node bench/kernels/report.mjs
echo "[bench] calibration kernels (node, chromium, numpy reference)"
node --no-liftoff bench/calib/calib-node.mjs $QUICK > bench/out/calib-node.jsonl
node bench/kernels/chromium.mjs --calib $QUICK > bench/out/calib-chromium.jsonl
if python3 -c 'import numpy' 2>/dev/null; then
  OPENBLAS_NUM_THREADS=1 python3 bench/calib/calib_ref.py $QUICK > bench/out/calib-numpy.jsonl
else
  echo "[bench] numpy not installed (pip install numpy): no numpy reference"
fi
node bench/calib/calib-report.mjs
echo "[bench] the playground default plan (defaultPlan) on the PaddleOCR models"
node bench/ocr/plan.mjs | tee bench/out/plan.jsonl
