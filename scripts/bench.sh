#!/usr/bin/env bash
# The one bench runner (`npm run bench`). The benches live in bench/<subject>/ (bench/README.md has
# the table of subjects; figures in bench/RESULTS.md).
#
#   bash scripts/bench.sh [--quick] [--no-build]   the kernel suite: builds the bench wasm modules and
#                                                  the native bench, runs it natively, in Node and in
#                                                  headless Chromium (with the threads probe, the
#                                                  calibration kernels and the default plan), prints
#                                                  the tables, writes bench/out/latest.json and the
#                                                  tables of bench/RESULTS.md
#   bash scripts/bench.sh --list [SUBJECT]         the subjects and their benches, one line each
#   bash scripts/bench.sh SUBJECT                  every bench of a subject that needs no argument, in
#                                                  turn (some run for long, some need Python: see the
#                                                  list); a failure is reported and the rest still run
#   bash scripts/bench.sh NAME [ARGS...]           one bench by name (`calibration` or `calib/calibration`),
#                                                  with its own arguments (each script's header says them)
# Python benches run with $PYTHON (default python3; most want /work/venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

# Folders under bench/ that hold no bench of their own.
NOT_SUBJECTS=" browser lib out rust wasm "
# Files that other benches load (shared code, workers, the Python halves a Node bench drives):
# listed, never run by name.
SHARED=" kernels/suite.mjs kernels/js-impl.mjs calib/calib-suite.mjs threads/threads-suite.mjs
  threads/task-trace.mjs threads/node-threads-child.mjs train/train-step-worker.js train/train-torch.py train/train-dump.mjs
  recover/recover-torch.py recover/recover-vs-torch-epochs.mjs text/lines.mjs text/py_ids.py
  quant/ocr_ort.py quant/ocr_int4dq.py "
# Benches that need arguments (files, a folder another bench wrote, two builds): run by name only.
NEEDS_ARGS=" transport/transport-exact.mjs transport/transport-fit.mjs transport/transport-size.mjs transport/transport-slices.mjs
  transport/prune-job.mjs train/train-ab.mjs train/train-profile-wasm.mjs
  train/train-exports.py recover/forward-precision.mjs recover/forward-precision.py recover/recover-diverge.mjs
  text/lm-table.mjs text/lm-recover.mjs text/lm-latency.mjs channels/gqa-heads.mjs channels/gqa-ablate.mjs channels/gqa-prune.mjs
  text/minilm-recover.mjs text/minilm-gradual.mjs text/minilm-refit.mjs recover/minilm-step-profile.mjs robustness/check_pruned.py calib/hessian-ab.mjs quant/packing.mjs quant/minilm-latency.mjs quant/latency_probe.py "
SHARED=" $(echo $SHARED) "; NEEDS_ARGS=" $(echo $NEEDS_ARGS) "

subjects() {
  for d in bench/*/; do
    d=${d#bench/}; d=${d%/}
    case "$NOT_SUBJECTS" in *" $d "*) continue ;; esac
    echo "$d"
  done
}
scripts_of() { git ls-files "bench/$1" | grep -E '\.(mjs|js|py)$' | sed 's#^bench/##' || true; }
# The first line of a script's header comment or docstring.
describe() {
  local f="bench/$1"
  sed -n '1,6p' "$f" | sed -E 's#^(//|\#|""")\s?##; s#"""$##' | grep -v -E '^\s*$|^!' | head -1 | cut -c1-110
}
run_script() {
  local rel=$1; shift
  echo "[bench] $rel $*"
  case $rel in
    *.py) "${PYTHON:-python3}" "bench/$rel" "$@" ;;
    *) nice -n 10 node "bench/$rel" "$@" ;;
  esac
}

suite() {
  local QUICK=$1 BUILD=$2
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
}

list() {
  local only=${1:-}
  for s in $(subjects); do
    [ -n "$only" ] && [ "$s" != "$only" ] && continue
    echo "$s/"
    for rel in $(scripts_of "$s"); do
      local tag=""
      if [[ "$SHARED" == *" $rel "* ]]; then tag=" (shared: loaded by another bench)"
      elif [[ "$NEEDS_ARGS" == *" $rel "* ]]; then tag=" (needs arguments)"; fi
      printf '  %-28s %s%s\n' "$(basename "${rel%.*}")" "$(describe "$rel")" "$tag"
    done
  done
  [ -z "$only" ] && echo "kernels/ as a whole is the suite: bash scripts/bench.sh [--quick] [--no-build]"
  return 0
}

QUICK=""; BUILD=1; POS=()
for a in "$@"; do
  case $a in
    --quick) QUICK=--quick ;;
    --no-build) BUILD=0 ;;
    *) POS+=("$a") ;;
  esac
done

if [ ${#POS[@]} -eq 0 ]; then suite "$QUICK" "$BUILD"; exit 0; fi
case ${POS[0]} in
  --list|-l) list "${POS[1]:-}"; exit 0 ;;
  -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

name=${POS[0]}; rest=("${POS[@]:1}")
if [ "$name" = kernels ]; then suite "$QUICK" "$BUILD"; exit 0; fi
if [ "$name" = threads ]; then
  echo "[bench] threads probe and per-task trace (chromium; needs bench/build-wasm.sh's mt and mttrace builds)"
  node bench/kernels/chromium.mjs --threads $QUICK; exit 0
fi
if [ -d "bench/$name" ] && subjects | grep -qx "$name"; then
  failed=()
  for rel in $(scripts_of "$name"); do
    [[ "$SHARED" == *" $rel "* || "$NEEDS_ARGS" == *" $rel "* ]] && continue
    run_script "$rel" "${rest[@]}" || failed+=("$rel")
  done
  if [ ${#failed[@]} -gt 0 ]; then echo "[bench] failed: ${failed[*]}" >&2; exit 1; fi
  exit 0
fi
# One bench by name: subject/name or name, with or without its extension.
matches=()
for s in $(subjects); do
  for rel in $(scripts_of "$s"); do
    base=$(basename "${rel%.*}")
    if [ "$name" = "$rel" ] || [ "$name" = "${rel%.*}" ] || [ "$name" = "$base" ] || [ "$name" = "$(basename "$rel")" ]; then matches+=("$rel"); fi
  done
done
if [ ${#matches[@]} -eq 0 ]; then echo "bench.sh: no subject or bench named '$name' (bash scripts/bench.sh --list)" >&2; exit 2; fi
if [ ${#matches[@]} -gt 1 ]; then echo "bench.sh: '$name' names ${matches[*]}: give subject/name" >&2; exit 2; fi
[[ "$SHARED" == *" ${matches[0]} "* ]] && { echo "bench.sh: ${matches[0]} is loaded by another bench, not run on its own" >&2; exit 2; }
run_script "${matches[0]}" ${QUICK:+"$QUICK"} "${rest[@]}"
