// Preload (`node --import`) that turns this Node into an engine without WebAssembly SIMD128:
// every module is first validated by binaryen (npm devDependency) with the SIMD feature off, and
// one that uses v128 is refused as such an engine refuses it (validate() false, a CompileError
// from compiling). V8 has no switch to turn SIMD off any more, and Chromium's
// `--js-flags=--no-experimental-wasm-simd` is ignored (checked on Chromium 156).
import binaryen from 'binaryen';

const real = {
  validate: WebAssembly.validate.bind(WebAssembly),
  compile: WebAssembly.compile.bind(WebAssembly),
  instantiate: WebAssembly.instantiate.bind(WebAssembly),
  Module: WebAssembly.Module,
};

function bytesOf(src) {
  if (src instanceof ArrayBuffer) return new Uint8Array(src);
  if (ArrayBuffer.isView(src)) return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  return null;
}

/** True when the module validates with every wasm feature except SIMD128. */
function validWithoutSimd(bytes) {
  let m;
  try {
    m = binaryen.readBinary(bytes);
  } catch {
    return false;
  }
  try {
    m.setFeatures(binaryen.Features.All & ~binaryen.Features.SIMD128);
    // binaryen prints the validator's complaints (one per SIMD instruction, megabytes for our
    // builds) through functions bound at its load: silence the streams themselves meanwhile.
    const [log, write] = [console.log, process.stderr.write];
    console.log = () => {};
    process.stderr.write = () => true;
    try {
      return Boolean(m.validate());
    } finally {
      console.log = log;
      process.stderr.write = write;
    }
  } finally {
    m.dispose();
  }
}

function refuse(bytes) {
  if (bytes && !validWithoutSimd(bytes)) throw new WebAssembly.CompileError('WebAssembly.Module(): SIMD128 is not supported by this engine');
}

WebAssembly.validate = (src) => {
  const b = bytesOf(src);
  return real.validate(src) && (!b || validWithoutSimd(b));
};
WebAssembly.compile = async (src) => {
  refuse(bytesOf(src));
  return real.compile(src);
};
WebAssembly.instantiate = async (src, imports) => {
  refuse(bytesOf(src));
  return real.instantiate(src, imports);
};
class Module extends real.Module {
  constructor(src) {
    refuse(bytesOf(src));
    super(src);
  }
}
WebAssembly.Module = Module;
