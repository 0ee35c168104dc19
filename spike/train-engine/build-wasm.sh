#!/usr/bin/env bash
# Builds the spike's two wasm modules (ours alone, candle alone) with the project's SIMD128
# flags and build-std, then wasm-opt -O3 as scripts/build.sh does; prints their sizes.
set -euo pipefail
cd "$(dirname "$0")"
source ../../scripts/env.sh
source ../../scripts/wasm-flags.sh
# wasm-opt: the worktree's npm binaryen (scripts/setup.sh), else the main checkout's.
export PATH="$PATH:/work/main/node_modules/.bin"
mkdir -p out
for eng in ours candle; do
  CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_TARGET_DIR=target-wasm RUSTFLAGS="$ST_FLAGS ${EXTRA_RUSTFLAGS:-}" \
    cargo build -q --release --lib --target wasm32-unknown-unknown --no-default-features --features "$eng"
  cp target-wasm/wasm32-unknown-unknown/release/train_engine_spike.wasm "out/$eng.raw.wasm"
  wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue "out/$eng.raw.wasm" -o "out/$eng.wasm"
  echo "$eng: $(stat -c %s "out/$eng.raw.wasm") B raw, $(stat -c %s "out/$eng.wasm") B after wasm-opt -O3"
done
