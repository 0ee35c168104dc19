#!/usr/bin/env bash
# Fuzzing the ONNX layer in Node (tests/fuzz/onnx-fuzz.mjs): the reader, the channel analysis, the
# pruning and the writer over mutated real models, structure-aware mutations and generated
# protobufs, in a worker capped at a 512 MB heap; the process RSS is capped too.
# Usage: bash scripts/fuzz-onnx.sh [seconds] [extra options of onnx-fuzz.mjs, e.g. --seed 7 --executions 1000000]
#        (default 45: the short run of the test command; e.g. `bash scripts/fuzz-onnx.sh 3600 --executions 1000000`:
#        it stops at whichever comes first, or at Ctrl-C, and prints its summary in each case).
# Needs the built package (pkg/). Prints progress every 10 s and a JSON summary (executions,
# executions/s, seconds per million, outcomes, peaks); exits 1 on any crash, whose input is saved
# under target-fuzz-onnx/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-45}
shift || true
[ -f pkg/src/onnx/index.js ] || { echo "[fuzz-onnx] pkg/ is not built: bash scripts/build.sh" >&2; exit 1; }
exec node --max-old-space-size=512 tests/fuzz/onnx-fuzz.mjs --seconds "$SECS" --heap-mb 512 --rss-cap-mb 1536 "$@"
