#!/usr/bin/env bash
# Sets up (idempotent) and runs every test of the project, printing each runner's own summary:
#   0. gates               rustfmt --check; clippy -D warnings natively (core and bench/rust) and
#                          for wasm32 (SIMD build)
#   1. cargo test          native core: unit, conformance (every case folder), property tests;
#                          once in release and once in debug (debug assertions + overflow checks)
#   2. package build       pkg/ (both wasm variants + JS/TS layer)
#   3. wasm-pack test      the wasm32+SIMD128 build in headless Chromium (wasm-bindgen-test)
#   4. node --test         the built package as users import it: conformance through the JS API,
#                          malformed-call barrage, npm pack into Node/Vite apps, types, threads,
#                          the playground end to end
#   5. fuzz                a short native fuzz run over the core (when scripts/fuzz.sh exists)
#   6. fuzz (ONNX)         a short Node fuzz run over the ONNX layer (scripts/fuzz-onnx.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh

section() { printf '\n===== %s =====\n' "$*"; }

section "gates: cargo fmt --check, cargo clippy -D warnings (native, wasm32)"
cargo fmt --check
cargo fmt --check --manifest-path bench/rust/Cargo.toml
cargo clippy -q --all-targets -- -D warnings
cargo clippy -q --all-targets --features native-threads -- -D warnings
CARGO_TARGET_DIR=target-bench-native cargo clippy -q --manifest-path bench/rust/Cargo.toml --all-targets --all-features -- -D warnings
CARGO_TARGET_DIR=target-bench-trace RUSTFLAGS="--cfg sparsekit_task_trace --cfg sparsekit_train_profile" \
  cargo clippy -q --manifest-path bench/rust/Cargo.toml --all-targets --all-features -- -D warnings
source scripts/wasm-flags.sh
CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_TARGET_DIR=target-wasm-clippy RUSTFLAGS="$ST_FLAGS" \
  cargo clippy -q --lib --target wasm32-unknown-unknown -- -D warnings
echo "gates passed"

section "cargo test --release (native core)"
cargo test --release -- --nocapture 2>&1 | grep -E '^(test result|     Running|failures|---- )|conformance|passed|FAILED|panicked|assert'

section "cargo test --release --features native-threads (threaded = single-threaded, bit for bit)"
cargo test --release --features native-threads --test adam_threads --test calib_props --test gemm_threads --test hessian_tiles --test norm_threads --test train_bits 2>&1 | grep -E '^(test result|failures|---- )|FAILED|panicked|assert'

section "bench/rust: the bench's per-task trace (cfg sparsekit_task_trace, its own target dir)"
CARGO_TARGET_DIR=target-bench-trace RUSTFLAGS="--cfg sparsekit_task_trace" \
  cargo test --manifest-path bench/rust/Cargo.toml --features native-threads --test task_trace 2>&1 | grep -E '^(test result|failures|---- )|FAILED|panicked|assert'

section "cargo test (debug: debug assertions and overflow checks on)"
cargo test 2>&1 | grep -E '^(test result|failures|---- )|FAILED|panicked|assert'

section "build pkg/"
bash scripts/build.sh
mkdir -p node_modules && ln -sfn ../pkg node_modules/sparsekit-wasm

section "tsc --noEmit --strict: the playground (www/) and the CLI (pkg-template/bin/), against pkg/'s types"
npx --no-install tsc --noEmit -p www/tsconfig.json && echo "www type-checks"
npx --no-install tsc -p pkg-template/bin/tsconfig.json && echo "the CLI type-checks"

section "wasm-pack test --headless --chrome (wasm32 + SIMD128 in Chromium)"
WASM_TESTS=()
for t in tests/web.rs tests/wasm_*.rs; do [ -f "$t" ] && WASM_TESTS+=(--test "$(basename "$t" .rs)"); done
CARGO_UNSTABLE_BUILD_STD=std,panic_abort CARGO_TARGET_DIR=target-wasm-test RUSTFLAGS="$ST_FLAGS" \
  wasm-pack test --headless --chrome --mode no-install -- "${WASM_TESTS[@]}" 2>&1 \
  | grep -vE '^\[WARN\].*wasm-pack version' | grep -E 'test result|^test |running|panicked|error' 

section "node --test (the built package, as users import it)"
NODE_TESTS=$(ls tests/js/*.test.mjs tests/pkg/*.test.mjs tests/onnx/*.test.mjs tests/e2e/*.test.mjs)
node --test --test-concurrency=1 $NODE_TESTS

if [ -f scripts/fuzz.sh ]; then
  section "fuzz (short run over the core)"
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
section "fuzz (short run over the ONNX reader, analysis, pruning and writer)"
bash scripts/fuzz-onnx.sh "${ONNX_FUZZ_SECONDS:-45}"

echo
echo "ALL TESTS PASSED"
