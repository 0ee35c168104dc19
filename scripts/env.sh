# Sourced by the project's scripts: the Debian toolchain (RUSTC_BOOTSTRAP for -Zbuild-std),
# npm's wasm-opt and esbuild first on PATH (Debian's binaryen is too old), cargo's bin dir.
export RUSTC_BOOTSTRAP=1
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$_root/node_modules/.bin:$HOME/.cargo/bin:$PATH"
unset _root
