// init({ wasmPaths }) in headless Chromium: the .wasm files of both builds are moved away from the
// package (so loading them from their default place would fail) and named per variant: the
// single-threaded build on a plain page's main thread, the threaded one in a Web Worker of a
// cross-origin isolated page, each loaded from its own URL and giving the same numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PKG, serve, launch, JOB_SOURCE, expectedJob } from './util.mjs';

test('init({ wasmPaths }) loads each variant from its own URL (main thread: simd; isolated worker: threads)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sk-wasmpaths-'));
  cpSync(PKG, join(dir, 'pkg'), { recursive: true });
  mkdirSync(join(dir, 'moved'));
  renameSync(join(dir, 'pkg/wasm/st/sparsekit_wasm_bg.wasm'), join(dir, 'moved/st.wasm'));
  renameSync(join(dir, 'pkg/wasm/mt/sparsekit_wasm_bg.wasm'), join(dir, 'moved/mt.wasm'));
  const run = `
    try {
      await init({ wasmPaths: { simd: '/moved/st.wasm', threads: new URL('/moved/mt.wasm', location.href) } });
      const active = await sk.initThreadPool(2);
      report({ variant: sk.variant(), active, workers: sk.probeThreads(32), ...job(sk) });
    } catch (e) {
      report({ error: String(e && e.stack || e) });
    }`;
  writeFileSync(join(dir, 'index.html'), `<!doctype html><html><body><pre id="out">running</pre><script type="module">
${JOB_SOURCE}
import init, * as sk from './pkg/src/browser.js';
const out = document.getElementById('out');
const report = (r) => { out.dataset.result = JSON.stringify(r); };
if (self.crossOriginIsolated) {
  const w = new Worker('./worker.js', { type: 'module' });
  w.onmessage = (e) => report(e.data);
  w.onerror = (e) => report({ error: e.message });
} else {
  ${run}
}
</script></body></html>`);
  writeFileSync(join(dir, 'worker.js'), `${JOB_SOURCE}
import init, * as sk from './pkg/src/browser.js';
const report = (r) => postMessage(r);
${run}
`);
  const exp = expectedJob();
  const browser = await launch();
  try {
    for (const [isolated, variant] of [[false, 'simd'], [true, 'threads']]) {
      const requests = [];
      const server = await serve(dir, { isolated, log: requests });
      try {
        const page = await browser.newPage();
        await page.goto(server.url);
        await page.waitForSelector('#out[data-result]', { timeout: 60000 });
        const got = JSON.parse(await page.getAttribute('#out', 'data-result'));
        const wasmRequests = requests.filter((p) => p.endsWith('.wasm'));
        console.log(`${isolated ? 'COOP/COEP worker' : 'plain main thread'}: ${JSON.stringify(got)} wasm requests: ${wasmRequests.join(', ')}`);
        assert.equal(got.error, undefined, got.error);
        assert.equal(got.variant, variant);
        assert.equal(got.active, isolated);
        if (isolated) assert.ok(got.workers > 1, `rayon used ${got.workers} worker(s)`);
        assert.deepEqual(wasmRequests, [isolated ? '/moved/mt.wasm' : '/moved/st.wasm']);
        assert.equal(got.nnz, exp.nnz);
        assert.ok(Math.abs(got.checksum - exp.checksum) < 1e-2);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
});
