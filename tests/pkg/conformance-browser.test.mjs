// The Chromium runs of the one conformance harness: every case of every folder
// tests/data/*-cases (or SPARSEKIT_TESTDATA) through the public JS API in headless Chromium, once on the page's
// main thread (single-threaded SIMD build), once in a Web Worker of a cross-origin isolated page
// with the rayon pool running (threaded build). Node lists the folders and files (the page cannot
// list directories); the page applies the same filter and runners as the Node run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basename, dirname } from 'node:path';
import { ROOT, serve, launch } from './util.mjs';
import { fileURLToPath } from 'node:url';
import { fsCaseIO, TESTDATA } from '../support/cases-fs.mjs';

const BASE = `/${basename(ROOT)}`;
const LISTING = Object.fromEntries(fsCaseIO.folders().map((f) => [f, fsCaseIO.files(f)]));

const LOADER = `
import { loadCaseFolders, runFolders } from '${BASE}/tests/support/cases.mjs';
import { RUNNERS } from '${BASE}/tests/js/conformance-runner.mjs';
const LISTING = ${JSON.stringify(LISTING)};
const io = {
  folders: () => Object.keys(LISTING),
  files: (folder) => LISTING[folder],
  read: async (folder, file) => (await fetch('/__cases/' + folder + '/' + file)).json(),
};
export async function runAll(sk) {
  const r = await runFolders(sk, await loadCaseFolders(io), RUNNERS);
  return { lines: r.lines, failed: r.failed, failures: r.failures.slice(0, 40) };
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

test('conformance cases of every folder in headless Chromium: SIMD build on the main thread, threaded build in a worker', async () => {
  const browser = await launch();
  try {
    for (const [isolated, query, expectVariant] of [[false, '', 'simd'], [true, '?worker=1', 'threads']]) {
      const server = await serve(dirname(ROOT), { isolated, extra: { '/__conformance.html': PAGE, '/__loader.js': LOADER, '/__worker.js': WORKER }, mounts: { '/__cases/': fileURLToPath(TESTDATA) } });
      try {
        const page = await browser.newPage();
        await page.goto(`${server.url}/__conformance.html${query}`);
        await page.waitForSelector('#out[data-result]', { timeout: 300000 });
        const got = JSON.parse(await page.getAttribute('#out', 'data-result'));
        assert.equal(got.error, undefined, got.error);
        console.log(`chromium, ${got.variant} build, ${got.threads} thread(s):`);
        for (const f of got.failures) console.log(`FAIL ${f}`);
        for (const line of got.lines) console.log(line);
        assert.equal(got.variant, expectVariant);
        if (expectVariant === 'threads') assert.ok(got.threads > 1);
        assert.equal(got.failed, 0, `${got.failed} conformance case(s) failed in Chromium (${got.variant})`);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
});
