// Module worker: loads sparsekit-wasm (threads when the page is cross-origin isolated) and prunes.
//
// The package is imported at run time from the page's sparsekit/ folder, where the server puts the
// built package unbundled (www/vite.config.js): only files served as they ship let the package start
// its threaded build (wasm-bindgen-rayon's workers re-import the glue module by its URL). If that load
// fails, a bundled copy (single-threaded build only) is the fallback.
import { pruneLayers } from './prune-core.js';

let sk = null;
let ready = null;

async function loadPackage(base) {
  const url = new URL('sparsekit/src/browser.js', base ?? self.location.href).href;
  try {
    return { mod: await import(/* @vite-ignore */ url), source: 'unbundled', url };
  } catch (e) {
    console.warn(`sparsekit-wasm: could not import ${url} (${e?.message ?? e}); using the bundled single-threaded copy`);
    return { mod: await import('sparsekit-wasm'), source: 'bundled', url: null, loadError: String(e?.message ?? e) };
  }
}

// threads: try the threaded build (cross-origin isolated pages, unbundled package). If its thread
// pool cannot start, we report it and the page restarts this worker with threads = false: a threaded
// module without its pool must not be used.
async function setup(wantThreads, base) {
  const isolated = !!self.crossOriginIsolated;
  const cores = navigator.hardwareConcurrency || 1;
  const loaded = await loadPackage(base);
  sk = loaded.mod;
  await sk.default({ threads: wantThreads && isolated });
  let threads = false, poolError = null;
  const poolSize = Math.max(1, Math.min(8, cores));
  if (wantThreads && isolated && typeof sk.initThreadPool === 'function') {
    try {
      threads = !!(await sk.initThreadPool(poolSize));
      if (!threads && sk.variant() === 'threads') poolError = 'initThreadPool() started no threads';
    } catch (e) {
      poolError = String(e?.message ?? e);
    }
  }
  const variant = typeof sk.variant === 'function' ? sk.variant() : null;
  const numThreads = typeof sk.numThreads === 'function' ? sk.numThreads() : 1;
  // Distinct rayon workers that ran 64 probe tasks: > 1 shows the pool really runs work in parallel.
  let probe = 1;
  try { if (typeof sk.probeThreads === 'function') probe = sk.probeThreads(64); } catch { /* single-threaded build */ }
  return {
    threads, isolated, cores, variant, poolError, numThreads, probe, requested: wantThreads,
    poolSize: threads ? poolSize : 0, source: loaded.source, url: loaded.url, loadError: loaded.loadError ?? null,
  };
}

function describe(e) {
  return { name: e?.name ?? 'Error', code: e?.code ?? null, message: String(e?.message ?? e) };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (!ready) ready = setup(msg.type === 'init' ? msg.threads !== false : true, msg.base);
    const info = await ready;
    if (msg.type === 'init') { self.postMessage({ type: 'ready', ...info }); return; }
    if (msg.type === 'prune') {
      const t0 = performance.now();
      let last = 0;
      const results = pruneLayers(sk, msg.layers, msg.global, (done, total, label) => {
        const now = performance.now();
        if (now - last > 50 || done === total) { last = now; self.postMessage({ type: 'progress', jobId: msg.jobId, done, total, label }); }
      });
      const ms = performance.now() - t0;
      const transfer = [];
      for (const r of results) for (const k of ['data', 'blockKeep', 'blockNorms']) if (r[k]?.buffer) transfer.push(r[k].buffer);
      self.postMessage({ type: 'result', jobId: msg.jobId, results, ms, threads: info.threads, numThreads: info.numThreads }, [...new Set(transfer)]);
    }
  } catch (e) {
    self.postMessage({ type: 'error', jobId: msg.jobId, error: describe(e) });
  }
};
