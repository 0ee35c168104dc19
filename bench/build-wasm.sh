#!/usr/bin/env bash
# Builds the bench-only wasm modules into bench/out/wasm/{simd,scalar,mt,mttrace} (see bench/wasm).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/wasm-flags.sh
build() { # name features flags
  local name=$1 features=$2 flags=$3 tdir="$PWD/target-bench-wasm-$1"
  echo "[bench-build] wasm '$name'"
  (cd bench/wasm && CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_TARGET_DIR="$tdir" RUSTFLAGS="$flags" \
    cargo build -q --release --target wasm32-unknown-unknown $features)
  rm -rf "bench/out/wasm/$name"
  wasm-bindgen --target web --out-dir "bench/out/wasm/$name" --out-name bench \
    "$tdir/wasm32-unknown-unknown/release/sparsekit_bench_wasm.wasm"
}
for v in ${BENCH_VARIANTS:-simd scalar mt mttrace}; do
  case $v in
    simd) build simd "" "$ST_FLAGS" ;;
    # No +simd128 here: otherwise LLVM autovectorizes the portable kernels with SIMD128 and the
    # ratio would compare hand-written SIMD with autovectorized SIMD.
    scalar) build scalar "" "" ;;
    mt) build mt "--features threads" "$MT_FLAGS" ;;
    # The threaded build with every parallel task timed (bench/threads/task-trace.mjs); never the one
    # whose ratios are reported.
    mttrace) build mttrace "--features threads" "$MT_FLAGS --cfg sparsekit_task_trace" ;;
  esac
done
