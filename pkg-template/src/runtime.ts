// The loaded wasm build: which variant, its glue module, feature detection and the thread count.
// The entries (browser.ts, node.ts, node-cjs.ts) load a variant and bind it here; every other
// module reaches the wasm exports through R().
import { SparseKitError, setMemoryProbe } from './errors.js';

/**
 * @internal The wasm-bindgen glue of either variant, once instantiated: the exports both share
 * (their instantiation functions differ), and the threaded one's pool start.
 */
export type Glue = Omit<typeof import('../wasm/st/sparsekit_wasm.js'), 'default' | 'initSync'> &
  Partial<Pick<typeof import('../wasm/mt/sparsekit_wasm.js'), 'initThreadPool'>>;

/** Which wasm build is loaded. */
export type Variant = 'simd' | 'threads' | 'uninitialized';

/**
 * What `init()` loads a variant from: a URL or path string, a `URL`, a `Response`, the bytes
 * (ArrayBuffer or a typed array), or a compiled `WebAssembly.Module`. Typed as strings and
 * objects (a `WebAssembly.Module` is structurally any object anyway) so that projects without
 * the DOM lib (Node with only @types/node) compile it; init() refuses anything else at run time.
 */
export type WasmSource = string | ArrayBuffer | ArrayBufferView | object;

/** Where the two wasm builds are (as onnxruntime-web's `wasmPaths`): only the one used is loaded. */
export interface WasmPaths {
  /** The single-threaded SIMD128 build (`wasm/st/sparsekit_wasm_bg.wasm`). */
  simd?: WasmSource;
  /** The threaded SIMD128 + atomics build (`wasm/mt/sparsekit_wasm_bg.wasm`). */
  threads?: WasmSource;
}

/** Options of init(). */
export interface InitOptions {
  /** `false` forces the single-threaded SIMD build even where threads could run. */
  threads?: boolean;
  /** Per-variant location of the `.wasm` files (e.g. a CDN, or bytes already fetched). */
  wasmPaths?: WasmPaths;
}

/** What this JS runtime supports, as the loader sees it. */
export interface Environment {
  /** WebAssembly with SIMD128 (required by both builds). */
  simd: boolean;
  /** Shared memory: `SharedArrayBuffer` exists and the context is cross-origin isolated. */
  sharedMemory: boolean;
  /** Running in a Web Worker (rayon's pool blocks, which the main thread may not). */
  worker: boolean;
}

let glue: Glue | null = null;
let variantName: Variant = 'uninitialized';
let loadError: SparseKitError | null = null;
let made = false;

/** @internal Binds the API to an initialized glue module. */
export function bind(g: Glue, v: Exclude<Variant, 'uninitialized'>): void {
  glue = g;
  variantName = v;
  loadError = null;
  setMemoryProbe(() => memoryBuffer().byteLength);
}

/** @internal Starts the threaded glue's rayon pool of `count` workers; the kernels use it once it is ready. */
export async function startPool(g: Glue, count: number): Promise<void> {
  await g.initThreadPool!(count);
  g.markThreadPoolReady();
}

/** @internal Called by every object that owns wasm memory: from then on the bound build stays. */
export function noteObject(): void {
  made = true;
}

/** @internal Whether an object was made in the bound build (its handles are that build's). */
export function objectsMade(): boolean {
  return made;
}

/** @internal Remembers why no build could be loaded: later calls throw it instead of `not_initialized`. */
export function bindFailure(e: SparseKitError): void {
  loadError = e;
}

/** @internal The glue of the loaded build, or the typed error that says why there is none. */
export function R(): Glue {
  if (glue) return glue;
  if (loadError) throw loadError;
  throw new SparseKitError('not_initialized', 'sparsekit-wasm is not initialized: `await init()` first (browser)');
}

/** @internal The wasm memory's current buffer (changes when memory grows). */
export function memoryBuffer(): ArrayBufferLike {
  return (R().wasmMemory() as WebAssembly.Memory).buffer;
}

/**
 * A minimal module whose one function returns a `v128.const`: it validates only where the
 * engine has SIMD128. Hand-assembled: header, type `() -> v128`, one function, its body.
 */
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: func () -> v128
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, // code: no locals, v128.const
  ...new Array<number>(16).fill(0), // its 16 immediate bytes
  0x0b, // end
]);

/** Feature detection, as the loader does it (no module is compiled). */
export function environment(): Environment {
  const g = globalThis as { crossOriginIsolated?: boolean; WorkerGlobalScope?: abstract new () => unknown };
  let simd = false;
  try {
    simd = typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    simd = false;
  }
  let sharedMemory = false;
  try {
    sharedMemory =
      typeof SharedArrayBuffer === 'function' &&
      g.crossOriginIsolated === true &&
      new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }).buffer instanceof SharedArrayBuffer;
  } catch {
    sharedMemory = false;
  }
  const worker = typeof g.WorkerGlobalScope === 'function' && globalThis instanceof g.WorkerGlobalScope;
  return { simd, sharedMemory, worker };
}

/** @internal The typed refusal of an engine without SIMD128 (instead of the CompileError it would raise). */
export function requireSimd(): void {
  if (environment().simd) return;
  const e = new SparseKitError(
    'unsupported_environment',
    'sparsekit-wasm needs WebAssembly SIMD128 (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+); this engine does not validate SIMD code',
  );
  bindFailure(e);
  throw e;
}

/** True when the threaded variant is loaded and its pool has more than one worker. */
export function threads(): boolean {
  return glue !== null && variantName === 'threads' && glue.numThreads() > 1;
}

/** Which wasm build is loaded: 'simd' (single-threaded SIMD128), 'threads', or 'uninitialized'. */
export function variant(): Variant {
  return variantName;
}

/** Number of rayon workers (1 without threads). */
export function numThreads(): number {
  return glue ? glue.numThreads() : 1;
}

/** Diagnostic: runs `n` small tasks on the pool and returns how many distinct workers ran them. */
export function probeThreads(n = 64): number {
  return R().probeThreads(n);
}
