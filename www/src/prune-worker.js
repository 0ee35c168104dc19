// Module worker: loads sparsekit-wasm (threads when the page is cross-origin isolated) and prunes.
import init, * as sk from 'sparsekit-wasm';
import { pruneLayers } from './prune-core.js';

let ready = null;

// threads: try the threaded build (cross-origin isolated pages only). If its thread pool cannot
// start, we report it and the page restarts this worker with threads = false: a threaded module
// without its pool must not be used.
async function setup(wantThreads) {
  const isolated = !!self.crossOriginIsolated;
  const cores = navigator.hardwareConcurrency || 1;
  await init({ threads: wantThreads && isolated });
  let threads = false, poolError = null;
  if (wantThreads && isolated && typeof sk.initThreadPool === 'function') {
    try {
      threads = !!(await sk.initThreadPool(Math.max(1, Math.min(8, cores))));
      if (!threads) poolError = 'initThreadPool() started no threads';
    } catch (e) {
      poolError = String(e?.message ?? e);
    }
  }
  const variant = typeof sk.variant === 'function' ? sk.variant() : null;
  return { threads, isolated, cores, variant, poolError };
}

function describe(e) {
  return { name: e?.name ?? 'Error', code: e?.code ?? null, message: String(e?.message ?? e) };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (!ready) ready = setup(msg.type === 'init' ? msg.threads !== false : true);
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
      self.postMessage({ type: 'result', jobId: msg.jobId, results, ms, threads: info.threads }, [...new Set(transfer)]);
    }
  } catch (e) {
    self.postMessage({ type: 'error', jobId: msg.jobId, error: describe(e) });
  }
};
