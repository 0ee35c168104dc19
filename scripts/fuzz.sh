#!/usr/bin/env bash
# Native fuzzing of the core (View / BlockSpec / BlockCoupling / ScopeSpec / ScopeCoupling
# construction and every operation) with cargo-fuzz + libFuzzer: fuzz/fuzz_targets/core_ops.rs.
# Usage: bash scripts/fuzz.sh [seconds]   (default 20: the short run of the test command;
#        e.g. `bash scripts/fuzz.sh 3600` on demand).
# Debian's rustc has no ASan runtime (librustc-*_rt.asan.a), so the target is built with
# `-s none` (SanitizerCoverage only, no ASan); RUSTC_BOOTSTRAP=1 enables the -Z flags.
# cargo-fuzz itself comes from scripts/setup.sh.
# Corpus: fuzz/corpus/core_ops/ (kept in the repo, merged and capped below); crashes land in
# fuzz/artifacts/core_ops/ (ignored) and fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
SECS=${1:-20}
CORPUS=fuzz/corpus/core_ops
say() { echo "[fuzz] $*"; }

bash scripts/setup.sh   # installs cargo-fuzz (quiet when everything is there)
mkdir -p "$CORPUS"
say "building core_ops (cargo fuzz build -s none)"
cargo fuzz build --fuzz-dir fuzz -s none core_ops
BIN=fuzz/target/x86_64-unknown-linux-gnu/release/core_ops
# Fresh finds go to a scratch dir first; merged into the kept corpus (only inputs that add
# coverage), so the corpus stays small.
NEW=$(mktemp -d)
trap 'rm -rf "$NEW"' EXIT
say "running ${SECS}s"
mkdir -p fuzz/artifacts/core_ops
set +e
"$BIN" "$NEW" "$CORPUS" -max_total_time="$SECS" -max_len=512 -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix=fuzz/artifacts/core_ops/ -print_final_stats=1 > fuzz/artifacts/last-run.log 2>&1
status=$?
set -e
grep -E "^(#[0-9]+.*DONE|stat::|==|SUMMARY|thread '.*panicked)" fuzz/artifacts/last-run.log || true
if [ "$status" != 0 ]; then
  say "FAILED (exit $status): see fuzz/artifacts/last-run.log and fuzz/artifacts/core_ops/"
  exit "$status"
fi
# Keep a minimal covering set of old + new inputs (set cover merge into a fresh dir), plus the
# hand-made seeds and the regression inputs of fixed crashes (seed-*, regress-*).
MIN=$(mktemp -d)
"$BIN" -set_cover_merge=1 -max_len=512 "$MIN" "$CORPUS" "$NEW" >/dev/null 2>&1
cp "$CORPUS"/seed-* "$CORPUS"/regress-* "$MIN"/ 2>/dev/null || true
rm -rf "$CORPUS" && mkdir -p "$CORPUS" && cp "$MIN"/* "$CORPUS"/ && rm -rf "$MIN"
bytes=$(du -sb --apparent-size "$CORPUS" | cut -f1)
say "corpus: $(ls "$CORPUS" | wc -l) files, $bytes bytes"
[ "$bytes" -lt 2000000 ] || { say "corpus over 2 MB"; exit 1; }
