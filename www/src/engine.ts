// Starts the pruning worker's engine: the threaded build when the page is cross-origin isolated, else
// (or when its thread pool fails) the single-threaded build in a fresh worker. The badge shows the
// outcome and carries it as data-attributes (what the tests read).
import { $, showError } from './dom.js';
import { state } from './state.js';
import { pruneClient } from './workers.js';
import type { EngineInfo } from './workers/api.js';

const message = (e: unknown) => String((e as { message?: unknown })?.message ?? e);

async function start(threads: boolean): Promise<EngineInfo | { failed: string }> {
  try {
    return await pruneClient.request('init', { threads, base: document.baseURI });
  } catch (e) {
    return { failed: message(e) };
  }
}

/** ?threads=0 forces the single-threaded build (to compare; the results are the same). */
export async function startEngine(): Promise<NonNullable<typeof state.engine>> {
  const wantThreads = !/^(0|false|no|off)$/i.test(new URLSearchParams(location.search).get('threads') ?? '');
  let info: NonNullable<typeof state.engine> = await start(wantThreads);
  if (wantThreads && ('failed' in info || info.poolError)) {
    // The threaded build could not start (or start its pool): restart the worker on the single-threaded build.
    const why = 'failed' in info ? info.failed : info.poolError!;
    console.warn(`sparsekit-wasm: threaded build failed (${why}); using the single-threaded build`);
    pruneClient.restart();
    const single = await start(false);
    info = 'failed' in single ? single : { ...single, poolFailed: why };
  }
  state.engine = info;
  renderBadge(info);
  return info;
}

function renderBadge(info: NonNullable<typeof state.engine>): void {
  const badge = $('engine');
  badge.dataset.testid = 'engine';
  if ('failed' in info) {
    badge.textContent = 'sparsekit-wasm failed to load';
    badge.className = 'badge bad';
    badge.dataset.failed = info.failed;
    showError(`sparsekit-wasm could not be loaded: ${info.failed}`);
    return;
  }
  const why = !info.requested ? ' (threads off: ?threads=0)' : !info.isolated ? ' (page not cross-origin isolated)'
    : info.poolFailed ? ' (thread pool failed to start)' : info.source === 'bundled' ? ' (bundled copy)' : '';
  badge.textContent = info.threads ? `sparsekit-wasm · threads: ${info.numThreads} workers (${info.cores} cores)`
    : `sparsekit-wasm · single-threaded${why}`;
  badge.title = [
    `build: ${info.variant ?? '?'}`,
    info.threads ? `rayon pool: ${info.numThreads} workers; ${info.probe} distinct workers ran 64 probe tasks` : null,
    `package: ${info.source === 'unbundled' ? info.url : `bundled copy${info.loadError ? ` (unbundled load failed: ${info.loadError})` : ''}`}`,
    info.poolFailed ? `The threaded build could not start: ${info.poolFailed}` : null,
  ].filter(Boolean).join('\n');
  // What the engine is, for tests and for anyone inspecting the page (no global object needed).
  Object.assign(badge.dataset, {
    threads: String(info.threads ? info.numThreads : 1), threaded: String(info.threads), variant: info.variant ?? '',
    source: info.source, probe: String(info.probe), poolError: info.poolError ?? info.poolFailed ?? '', loadError: info.loadError ?? '',
  });
  badge.className = 'badge ok';
}

/** The engine is up (not failed, not still starting). */
export const engineReady = (): boolean => !!state.engine && !('failed' in state.engine);
