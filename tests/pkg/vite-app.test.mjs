// A fresh Vite 7 app whose production build imports the packed package, loaded in headless
// Chromium (playwright-core, /usr/bin/chromium): it prunes a weight and reports the numbers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, packPackage, projectWith, serve, launch, JOB_SOURCE, expectedJob } from './util.mjs';

test('Vite production build of an app using the package runs in headless Chromium', async () => {
  const tgz = packPackage();
  const dir = projectWith(tgz, {
    'package.json': JSON.stringify({ name: 'vite-consumer', version: '1.0.0', private: true, type: 'module' }),
    'index.html': '<!doctype html><html><body><pre id="out">running</pre><script type="module" src="/main.js"></script></body></html>',
    'main.js': `${JOB_SOURCE}
import init, * as sk from 'sparsekit-wasm';
const out = document.getElementById('out');
try {
  await init();
  const threads = await sk.initThreadPool(2);
  out.dataset.result = JSON.stringify({ variant: sk.variant(), threads, ...job(sk) });
} catch (e) {
  out.dataset.result = JSON.stringify({ error: String(e && e.stack || e) });
}
out.textContent = out.dataset.result;
`,
  });
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'error'], { cwd: dir, stdio: 'pipe' });
  const exp = expectedJob();
  const browser = await launch();
  try {
    for (const isolated of [false, true]) {
      const server = await serve(join(dir, 'dist'), { isolated });
      try {
        const page = await browser.newPage();
        const errors = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.goto(server.url);
        await page.waitForSelector('#out[data-result]', { timeout: 30000 });
        const got = JSON.parse(await page.getAttribute('#out', 'data-result'));
        assert.equal(got.error, undefined, got.error);
        assert.deepEqual(errors, []);
        // a bundled copy always runs the single-threaded SIMD build (documented)
        assert.equal(got.variant, 'simd');
        assert.equal(got.threads, false);
        assert.equal(got.nnz, exp.nnz);
        assert.equal(got.kept24, exp.kept24);
        assert.ok(Math.abs(got.checksum - exp.checksum) < 1e-2);
        console.log(`vite app (${isolated ? 'COOP/COEP' : 'plain'}): ${JSON.stringify(got)}`);
        await page.close();
      } finally {
        await server.close();
      }
    }
  } finally {
    await browser.close();
  }
});
