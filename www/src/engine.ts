// Starts the job worker's engine (the package's runJob runs every pruning of the page there: the
// job card, the per-layer table, the calibration card's jobs) and shows it in the badge, with the
// outcome as data-attributes (what the tests read).
import { $, showError } from './dom.js';
import { state } from './state.js';
import { jobClient } from './workers.js';

const message = (e: unknown) => String((e as { message?: unknown })?.message ?? e);

export async function startEngine(): Promise<NonNullable<typeof state.engine>> {
  let info: NonNullable<typeof state.engine>;
  try { info = await jobClient.request('init', {}); } catch (e) { info = { failed: message(e) }; }
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
  badge.textContent = `sparsekit-wasm · ${info.variant ?? '?'} build`;
  badge.title = `build: ${info.variant ?? '?'}; the package's runJob runs in a worker, single-threaded as the CLI runs it (${info.cores} cores)`;
  Object.assign(badge.dataset, { variant: info.variant ?? '', isolated: String(info.isolated) });
  badge.className = 'badge ok';
}

/** The engine is up (not failed, not still starting). */
export const engineReady = (): boolean => !!state.engine && !('failed' in state.engine);
