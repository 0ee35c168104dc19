// The page's one test surface: with `?test-surface` in the URL, `window.sparsekitPlayground` lets a
// test (tests/e2e/worker-protocol.test.mjs) send a request straight to any of the workers and
// read what comes back, errors included as their wire fields. Everything else a test needs is on the
// DOM (data-testid and data-* attributes); without the parameter nothing is installed.
import { toWire, type WireError } from './protocol.js';
import { calibClient, channelsClient, evalClient, jobClient } from './workers.js';

const clients = { eval: evalClient, calib: calibClient, channels: channelsClient, job: jobClient };

export interface TestSurface {
  /** Sends `op` with `payload` to a worker; resolves with its result, or with the error it sent. */
  request(worker: keyof typeof clients, op: string, payload: unknown): Promise<{ ok: true; result: unknown } | { ok: false; error: WireError }>;
}

declare global {
  interface Window { sparsekitPlayground?: TestSurface }
}

export function installTestSurface(): void {
  if (!new URLSearchParams(location.search).has('test-surface')) return;
  window.sparsekitPlayground = {
    async request(worker, op, payload) {
      const client = clients[worker] as { request(op: string, payload: unknown): Promise<unknown> };
      try {
        return { ok: true, result: await client.request(op, payload) };
      } catch (e) {
        return { ok: false, error: toWire(e) };
      }
    },
  };
}
