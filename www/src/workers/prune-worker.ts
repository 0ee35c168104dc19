// Module worker: loads sparsekit-wasm (threads when the page is cross-origin isolated) and prunes.
//
// The package is imported at run time from the page's sparsekit/ folder, where the server puts the
// built package unbundled (www/vite.config.js): only files served as they ship let the package start
// its threaded build (wasm-bindgen-rayon's workers re-import the glue module by its URL). If that load
// fails, a bundled copy (single-threaded build only) is the fallback.
import { serve } from '../protocol.js';
import { pruneLayers } from '../prune-core.js';
import type { Sk } from '../prune/types.js';
import type { EngineInfo, PruneApi } from './api.js';

let sk: Sk | null = null;
let ready: Promise<EngineInfo> | null = null;
const message = (e: unknown) => String((e as { message?: unknown })?.message ?? e);

async function loadPackage(base: string): Promise<{ mod: Sk; source: EngineInfo['source']; url: string | null; loadError: string | null }> {
  const url = new URL('sparsekit/src/browser.js', base).href;
  try {
    return { mod: await import(/* @vite-ignore */ url) as Sk, source: 'unbundled', url, loadError: null };
  } catch (e) {
    console.warn(`sparsekit-wasm: could not import ${url} (${message(e)}); using the bundled single-threaded copy`);
    return { mod: await import('sparsekit-wasm'), source: 'bundled', url: null, loadError: message(e) };
  }
}

// threads: try the threaded build (cross-origin isolated pages, unbundled package). If its thread
// pool cannot start, we report it and the page restarts this worker with threads = false: a threaded
// module without its pool must not be used.
async function setup(wantThreads: boolean, base: string): Promise<EngineInfo> {
  const isolated = !!self.crossOriginIsolated;
  const cores = navigator.hardwareConcurrency || 1;
  const loaded = await loadPackage(base);
  const mod = loaded.mod;
  await mod.default({ threads: wantThreads && isolated });
  let threads = false, poolError: string | null = null;
  const poolSize = Math.max(1, Math.min(8, cores));
  if (wantThreads && isolated) {
    try {
      threads = !!(await mod.initThreadPool(poolSize));
      if (!threads && mod.variant() === 'threads') poolError = 'initThreadPool() started no threads';
    } catch (e) {
      poolError = message(e);
    }
  }
  // Distinct rayon workers that ran 64 probe tasks: > 1 shows the pool really runs work in parallel.
  let probe = 1;
  try { probe = mod.probeThreads(64); } catch { /* single-threaded build */ }
  sk = mod;
  return {
    threads, isolated, cores, variant: mod.variant(), poolError, numThreads: mod.numThreads(), probe, requested: wantThreads,
    poolSize: threads ? poolSize : 0, source: loaded.source, url: loaded.url, loadError: loaded.loadError,
  };
}

serve<PruneApi>({
  init({ threads, base }) {
    ready ??= setup(threads, base);
    return ready;
  },
  async prune({ layers, global }, ctx) {
    const info = await (ready ??= setup(false, self.location.href));
    const t0 = performance.now();
    let last = 0;
    const results = pruneLayers(sk!, layers, global, (done, total, label) => {
      const now = performance.now();
      if (now - last > 50 || done === total) { last = now; ctx.progress({ done, total, label }); }
    });
    for (const r of results) ctx.transfer.push(r.data.buffer, r.blockKeep.buffer, r.blockNorms.buffer);
    return { results, ms: performance.now() - t0, threads: info.threads, numThreads: info.numThreads };
  },
});
