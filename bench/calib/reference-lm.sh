#!/usr/bin/env bash
# Bench only: our CLI against the reference SparseGPT / Wanda code (bench/calib/reference_lm.py) on
# SmolLM2-135M, 128 × 512 tokens of one text file, interleaved in the order given so that the
# machine's load falls on both alike. Each step runs under /usr/bin/time -v (peak RSS, CPU) with the
# date and `uptime` logged before and after; ours' pruned files are then scored on the held-out
# windows by bench/text/lm-perplexity.mjs (reference_lm.py scores its own model in process).
#   bash bench/calib/reference-lm.sh [STEP…]    STEP: ours-sparsegpt ref-sparsegpt ours-wanda ref-wanda ppl
# Environment: SPARSEGPT_REPO, WANDA_REPO (checkouts of IST-DASLab/sparsegpt and locuslab/wanda,
# outside this repository), CALIB (default /work/tmp/RELNOTES.txt), OUT (default bench/out/reference-lm),
# MODEL (default bench/out/smollm2), REF_TIMEOUT (seconds after which a reference run is stopped,
# e.g. 40m; its log's per-block lines then give the time per block; default none).
# DENSE_PPL=1: the reference runs also score the dense model first (outside the timed span).
# Needs bench/out/lm-windows.json (bench/calib/lm-windows.mjs) for the reference steps. The timed runs are not niced: both sides get the same priority.
set -euo pipefail
SPARSEGPT_REPO=${SPARSEGPT_REPO:-/work/tmp/ref-sparsegpt}
WANDA_REPO=${WANDA_REPO:-/work/tmp/ref-wanda}
CALIB=${CALIB:-/work/tmp/RELNOTES.txt}
OUT=${OUT:-bench/out/reference-lm}
MODEL=${MODEL:-bench/out/smollm2}
PY=${PY:-/work/venv/bin/python}
mkdir -p "$OUT"
stamp() { { date -u '+%F %T UTC'; uptime; } >> "$1"; }
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(ours-sparsegpt ref-sparsegpt ours-wanda ref-wanda ppl)
for step in "${steps[@]}"; do
  n=1; while [ -e "$OUT/$step-$n.log" ]; do n=$((n + 1)); done
  log="$OUT/$step-$n.log"
  stamp "$log"
  case "$step" in
    ours-*)
      m=${step#ours-}
      mkdir -p "$OUT/$step-$n"
      ln -sf "$(realpath "$MODEL")/tokenizer.json" "$OUT/$step-$n/tokenizer.json"
      /usr/bin/time -v node pkg/bin/sparsekit-wasm.js prune "$MODEL" -o "$OUT/$step-$n/model.onnx" --sparsity 0.5 \
        --method "$m" --calib "$CALIB" --calib-count 128 --seq-len 512 --report "$OUT/$step-$n/report.json" >> "$log" 2>&1 || echo "exit status $?" >> "$log" ;;
    ref-*)
      m=${step#ref-}
      /usr/bin/time -v timeout "${REF_TIMEOUT:-0}" "$PY" bench/calib/reference_lm.py --method "$m" --sparsegpt-repo "$SPARSEGPT_REPO" \
        --wanda-repo "$WANDA_REPO" --threads 2 ${DENSE_PPL:+--dense-ppl} --out "$OUT/reference.jsonl" >> "$log" 2>&1 || echo "exit status $?" >> "$log" ;;
    ppl)
      # every pruned file of ours not scored yet: its perplexity on the 16 × 256 GPL v3 windows
      for d in "$OUT"/ours-*/; do
        [ -e "$d/perplexity.txt" ] || [ ! -e "$d/model.onnx" ] && continue
        node bench/text/lm-perplexity.mjs --model "$d/model.onnx" --windows 16 --seq-len 256 --sparsity 0 \
          --ids "$d/eval-ids.json" > "$d/perplexity.txt" 2>&1
      done ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
  stamp "$log"
done
