#!/usr/bin/env bash
# Builds the npm package into pkg/: two wasm variants (single-threaded SIMD128, and threaded
# SIMD128 + atomics for wasm-bindgen-rayon) behind one JS/TS API, for browsers and Node.
# Usage: bash scripts/build.sh [--dev|--js]   (--dev: debug wasm, no wasm-opt; --js: JS layer only)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

PROFILE=release; PROFILE_DIR=release; CARGO_PROFILE=(--release); WASM=1
case "${1:-}" in
  --dev) PROFILE=dev; PROFILE_DIR=debug; CARGO_PROFILE=() ;;
  --js) WASM=0 ;;  # only re-assemble the JS layer over the existing wasm builds
esac

source scripts/wasm-flags.sh

build_variant() { # name features rustflags
  local name=$1 features=$2 flags=$3
  local tdir="target-wasm-$name"
  echo "[build] wasm variant '$name' ($PROFILE)"
  CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_TARGET_DIR="$tdir" RUSTFLAGS="$flags" cargo build -q --lib --target wasm32-unknown-unknown \
    "${CARGO_PROFILE[@]}" $features
  rm -rf "pkg/wasm/$name"
  wasm-bindgen --target web --out-dir "pkg/wasm/$name" --out-name sparsekit_wasm \
    "$tdir/wasm32-unknown-unknown/$PROFILE_DIR/sparsekit_wasm.wasm"
  if [ "$PROFILE" = release ]; then
    local extra=(--enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue)
    [ "$name" = mt ] && extra+=(--enable-threads)
    wasm-opt -O3 "${extra[@]}" "pkg/wasm/$name/sparsekit_wasm_bg.wasm" -o "pkg/wasm/$name/sparsekit_wasm_bg.wasm"
  fi
  rm -f "pkg/wasm/$name/.gitignore" "pkg/wasm/$name/package.json"
}

mkdir -p pkg
if [ "$WASM" = 1 ] || [ ! -f pkg/wasm/st/sparsekit_wasm_bg.wasm ] || [ ! -f pkg/wasm/mt/sparsekit_wasm_bg.wasm ]; then
  build_variant st "" "$ST_FLAGS"
  build_variant mt "--features threads" "$MT_FLAGS"
fi

# The JS/TS layer: the TypeScript sources (with the error codes read from the wasm build)
# compiled by the project's own tsc into pkg/src (.js and the .d.ts the package ships).
rm -rf pkg/src pkg/dist pkg/*.d.ts target-ts
mkdir -p target-ts
cp -r pkg-template/src target-ts/src
cp pkg-template/tsconfig.json target-ts/tsconfig.json
ln -s ../pkg/wasm target-ts/wasm
node scripts/gen-error-codes.mjs pkg target-ts/src/error-codes.ts
tsc -p target-ts/tsconfig.json
cp pkg-template/package.json pkg/
# The ONNX module and the CLI: the module imports the package by its own name (resolved through
# node_modules/sparsekit-wasm -> pkg), so it compiles against the core's generated types.
mkdir -p node_modules && ln -sfn ../pkg node_modules/sparsekit-wasm
cp pkg-template/tsconfig.onnx.json target-ts/tsconfig.onnx.json
tsc -p target-ts/tsconfig.onnx.json
rm -rf pkg/bin && cp -r pkg-template/bin pkg/bin && chmod +x pkg/bin/*.js
# CommonJS entry for require(): one bundled file over the same modules.
esbuild pkg/src/node-cjs.js --bundle --format=cjs --platform=node --log-level=error \
  --outfile=pkg/dist/index.cjs --external:node:fs --external:node:path
rm pkg/src/node-cjs.js pkg/src/node-cjs.d.ts
echo "[build] pkg/ ready: $(du -sh pkg | cut -f1) ($(ls -la pkg/wasm/st/sparsekit_wasm_bg.wasm | awk '{print $5}') B st, $(ls -la pkg/wasm/mt/sparsekit_wasm_bg.wasm | awk '{print $5}') B mt)"
