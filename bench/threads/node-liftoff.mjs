// Why Node's initThreadPool compiles the threaded build with TurboFan only: the pool's start with
// the module compiled as V8 does by default (lazily, Liftoff first) against TurboFan only, each in
// a child process given 30 s to start the pool and run one parallel probe; 'hangs' is a child
// still blocked then (killed).
//   node bench/threads/node-liftoff.mjs [workers]   (prints one line per case)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PKG = new URL('../../pkg/', import.meta.url);
if (process.argv[2] === '--child') {
  // the package's own pool start, minus its compile step: the glue, the Web Worker surface, the pool
  const { importWithSelf, withWebWorkers } = await import(new URL('src/node-worker.js', PKG));
  const mt = await importWithSelf(() => import(new URL('wasm/mt/sparsekit_wasm.js', PKG)));
  mt.initSync({ module: new WebAssembly.Module(readFileSync(new URL('wasm/mt/sparsekit_wasm_bg.wasm', PKG))) });
  const t = performance.now();
  const workers = await withWebWorkers(async () => { await mt.initThreadPool(Number(process.argv[3])); mt.markThreadPoolReady(); });
  const ms = performance.now() - t;
  for (const w of workers) w.unref();
  console.log(JSON.stringify({ ms, numThreads: mt.numThreads(), probe: mt.probeThreads(64) }));
} else {
  const n = process.argv[2] ?? '2';
  for (const [name, flags, workers] of [['V8 default (Liftoff, lazy)', [], n], ['TurboFan only (--no-liftoff)', ['--no-liftoff'], n], ['V8 default (Liftoff, lazy)', [], '1']]) {
    const r = spawnSync(process.execPath, [...flags, fileURLToPath(import.meta.url), '--child', workers], { encoding: 'utf8', timeout: 30_000 });
    const out = r.signal ? `hangs (killed after 30 s, ${r.signal})` : r.status === 0 ? r.stdout.trim() : `failed: ${r.stderr.trim().split('\n')[0]}`;
    console.log(`${name}, ${workers} workers: ${out}`);
  }
}
