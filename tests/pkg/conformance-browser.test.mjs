// Every conformance case through the public JS API in headless Chromium: once on the page's
// main thread (single-threaded SIMD build), once in a Web Worker of a cross-origin isolated page
// with the rayon pool running (threaded build). Both must pass every case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basename, dirname } from 'node:path';
import { ROOT, serve, launch } from './util.mjs';

const BASE = `/${basename(ROOT)}`;
const LOADER = `
import { runCases } from '${BASE}/tests/js/conformance-runner.mjs';
export async function runAll(sk) {
  const index = await (await fetch('/shared/testdata/sparsekit-cases/index.json')).json();
  const cases = await Promise.all(index.map(async (e) => (await fetch('/shared/testdata/sparsekit-cases/' + e.id + '.json')).json()));
  const r = runCases(sk, cases);
  return { total: cases.length, passed: r.passed, failures: r.failures.slice(0, 20) };
}
`;
const PAGE = `<!doctype html><html><body><pre id="out">running</pre><script type="module">
import init, * as sk from '${BASE}/pkg/src/browser.js';
import { runAll } from '/__loader.js';
const out = document.getElementById('out');
const params = new URLSearchParams(location.search);
try {
  if (params.get('worker')) {
    const w = new Worker('/__worker.js', { type: 'module' });
    w.onmessage = (e) => { out.dataset.result = JSON.stringify(e.data); };
    w.onerror = (e) => { out.dataset.result = JSON.stringify({ error: e.message }); };
  } else {
    await init();
    out.dataset.result = JSON.stringify({ variant: sk.variant(), threads: sk.numThreads(), ...(await runAll(sk)) });
  }
} catch (e) { out.dataset.result = JSON.stringify({ error: String(e && e.stack || e) }); }
</script></body></html>`;
const WORKER = `
import init, * as sk from '${BASE}/pkg/src/browser.js';
import { runAll } from '/__loader.js';
try {
  await init();
  await sk.initThreadPool(2);
  postMessage({ variant: sk.variant(), threads: sk.numThreads(), ...(await runAll(sk)) });
} catch (e) { postMessage({ error: String(e && e.stack || e) }); }
`;

test('all conformance cases in headless Chromium: SIMD build on the main thread, threaded build in a worker', async () => {
  const browser = await launch();
  try {
    for (const [isolated, query, expectVariant] of [[false, '', 'simd'], [true, '?worker=1', 'threads']]) {
      const server = await serve(dirname(ROOT), { isolated, extra: { '/__conformance.html': PAGE, '/__loader.js': LOADER, '/__worker.js': WORKER } });
      try {
        const page = await browser.newPage();
        await page.goto(`${server.url}/__conformance.html${query}`);
        await page.waitForSelector('#out[data-result]', { timeout: 120000 });
        const got = JSON.parse(await page.getAttribute('#out', 'data-result'));
        assert.equal(got.error, undefined, got.error);
        console.log(`conformance(js, chromium ${got.variant}, ${got.threads} thread(s)): ${got.passed} passed, ${got.total - got.passed} failed, of ${got.total}`);
        if (got.failures.length) console.log(got.failures.join('\n'));
        assert.equal(got.variant, expectVariant);
        if (expectVariant === 'threads') assert.ok(got.threads > 1);
        assert.ok(got.total >= 601);
        assert.equal(got.passed, got.total);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
});
