#!/usr/bin/env bash
# Brings a fresh Debian 12 machine of this kind to a working state for sparsekit-wasm.
# Idempotent: every step checks first and is silent when there is nothing to do.
# The single source of truth for what the project needs (see docs/toolchain.md for why).
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_PACK_VERSION=0.15.1
say() { echo "[setup] $*"; }

# 1. Debian packages: the wasm-capable Rust (std sources included), lld, Chromium + ChromeDriver.
APT_PKGS=(rustc-web cargo-web rust-web-src rust-web-llvm rust-web-clippy rustfmt-web lld-22 chromium chromium-driver)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's binaryen is too old for current wasm-bindgen output; it must not shadow npm's wasm-opt.
if dpkg-query -W -f='${Status}' binaryen 2>/dev/null | grep -q "ok installed"; then
  say "note: Debian's binaryen is installed; scripts put npm's wasm-opt first on PATH"
fi

# 2. The Debian toolchain, linked into rustup as 'debian' (rust-toolchain.toml selects it).
if ! rustup toolchain list 2>/dev/null | grep -q '^debian'; then
  say "rustup toolchain link debian /usr"
  rustup toolchain link debian /usr
fi
export RUSTC_BOOTSTRAP=1

# 3. Cargo.lock, then wasm-bindgen-cli pinned to exactly the wasm-bindgen it resolved.
if [ ! -f Cargo.lock ]; then cargo generate-lockfile -q; fi
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/[" ]/,""); sub("version=",""); print; exit}' Cargo.lock)
[ -n "$WB_VERSION" ] || { echo "cannot read wasm-bindgen version from Cargo.lock" >&2; exit 1; }
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WB_VERSION" ]; then
  say "cargo install wasm-bindgen-cli $WB_VERSION (about 5 minutes cold)"
  # Not --locked: the registry here lacks one locked transitive version (TOOLCHAIN.md).
  cargo +debian install -q wasm-bindgen-cli --version "$WB_VERSION" --force
fi
if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$WASM_PACK_VERSION" ]; then
  say "cargo install wasm-pack $WASM_PACK_VERSION (about 3 minutes cold)"
  cargo +debian install -q wasm-pack --version "$WASM_PACK_VERSION" --locked --force
fi

# cargo-fuzz drives the native fuzz target (scripts/fuzz.sh; part of the test command).
if ! cargo fuzz --version >/dev/null 2>&1; then
  say "cargo install cargo-fuzz (about 3 minutes cold)"
  cargo +debian install -q cargo-fuzz --locked
fi

# 4. npm dev dependencies (binaryen's wasm-opt, playwright-core, vite, onnxruntime, models...).
# `npm install` from the lock rather than `npm ci`: this registry has no metadata for rollup's
# optional binaries of other platforms, which `npm ci` reports as a lock mismatch.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "npm install (from package-lock.json)"
  npm install --no-audit --no-fund --no-save --loglevel=error
fi
