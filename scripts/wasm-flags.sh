# Sourced by scripts/build.sh, scripts/test.sh and bench/build-wasm.sh: the RUSTFLAGS of the two
# wasm variants, in one place so the package, its tests and the bench build the same code.
# Single-threaded variant: SIMD128.
ST_FLAGS="-C target-feature=+simd128"
# Threaded variant (wasm-bindgen-rayon): atomics + shared memory. rustc 1.96 no longer adds the
# shared-memory link args itself; without them wasm-bindgen silently skips its thread transform
# (TOOLCHAIN.md section 2). 4 GiB is wasm32's ceiling.
MT_FLAGS="-C target-feature=+atomics,+bulk-memory,+mutable-globals,+simd128 \
 -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=4294967296 \
 -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size \
 -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base"
