// Module worker: loads sparsekit-wasm (threads when the page is cross-origin isolated) and prunes.
import init, * as sk from 'sparsekit-wasm';
import { pruneLayers } from './prune-core.js';

let ready = null;

async function setup() {
  await init();
  let threads = false;
  if (self.crossOriginIsolated && typeof sk.initThreadPool === 'function') {
    try {
      await sk.initThreadPool(Math.max(1, Math.min(8, navigator.hardwareConcurrency || 2)));
    } catch (e) {
      console.warn('sparsekit-wasm: thread pool unavailable, single-threaded', e);
    }
  }
  try { threads = typeof sk.threads === 'function' ? !!sk.threads() : false; } catch { threads = false; }
  return { threads, isolated: !!self.crossOriginIsolated, cores: navigator.hardwareConcurrency || 1 };
}

function describe(e) {
  return { name: e?.name ?? 'Error', code: e?.code ?? null, message: String(e?.message ?? e) };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (!ready) ready = setup();
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
