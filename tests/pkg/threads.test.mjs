// The threaded build in headless Chromium: a Web Worker on a page served with COOP/COEP runs
// rayon on more than one worker; without the headers the same page falls back to the
// single-threaded SIMD build and gives the same numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, serve, launch, JOB_SOURCE, expectedJob } from './util.mjs';

test('threaded build uses several rayon workers under COOP/COEP, falls back without', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sk-threads-'));
  cpSync(PKG, join(dir, 'pkg'), { recursive: true });
  writeFileSync(join(dir, 'index.html'), `<!doctype html><html><body><pre id="out">running</pre><script type="module">
const out = document.getElementById('out');
const w = new Worker('./worker.js', { type: 'module' });
w.onmessage = (e) => { out.dataset.result = JSON.stringify(e.data); out.textContent = out.dataset.result; };
w.onerror = (e) => { out.dataset.result = JSON.stringify({ error: e.message }); };
</script></body></html>`);
  writeFileSync(join(dir, 'worker.js'), `${JOB_SOURCE}
import init, * as sk from './pkg/src/browser.js';
try {
  await init();
  const active = await sk.initThreadPool(2);
  const workers = sk.probeThreads(64);
  postMessage({ variant: sk.variant(), active, workers, numThreads: sk.numThreads(), isolated: self.crossOriginIsolated, ...job(sk) });
} catch (e) {
  postMessage({ error: String(e && e.stack || e) });
}
`);
  const exp = expectedJob();
  const browser = await launch();
  const results = {};
  try {
    for (const isolated of [true, false]) {
      const server = await serve(dir, { isolated });
      try {
        const page = await browser.newPage();
        await page.goto(server.url);
        await page.waitForSelector('#out[data-result]', { timeout: 60000 });
        const got = JSON.parse(await page.getAttribute('#out', 'data-result'));
        assert.equal(got.error, undefined, got.error);
        results[isolated ? 'isolated' : 'plain'] = got;
        console.log(`${isolated ? 'COOP/COEP' : 'no headers'}: ${JSON.stringify(got)}`);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
  const { isolated, plain } = results;
  assert.equal(isolated.variant, 'threads');
  assert.equal(isolated.active, true);
  assert.ok(isolated.workers > 1, `rayon used ${isolated.workers} worker(s)`);
  assert.equal(plain.variant, 'simd');
  assert.equal(plain.active, false);
  assert.equal(plain.workers, 1);
  for (const key of ['normsBefore', 'nnz', 'kept24', 'checksum']) assert.equal(isolated[key], plain[key], key);
  assert.equal(plain.nnz, exp.nnz);
});
