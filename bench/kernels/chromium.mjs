// Runs bench/browser in headless Chromium (playwright-core, the system Chromium) and prints
// its records as JSON lines. Usage: node bench/kernels/chromium.mjs [--quick] [--calib] [--threads]
// Every record gets the machine's load average at the time it is printed (`load`), as the
// page reports it (bench/browser/index.html).
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { serve } from '../lib/serve.mjs';

const quick = process.argv.includes('--quick');
const calib = process.argv.includes('--calib'); // calibration kernels only (bench/calib/calib-suite.mjs)
const probe = process.argv.includes('--threads'); // threads probe only (bench/threads/threads-suite.mjs)
const server = await serve();
const query = [quick && 'quick', calib && 'calib', probe && 'probe'].filter(Boolean).join('&');
const url = `http://127.0.0.1:${server.address().port}/browser/index.html${query ? `?${query}` : ''}`;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error('[page]', m.text()); });
  // The page reports each record through this binding as the worker posts it: nothing polls
  // the page while the worker measures.
  let settle;
  const finished = new Promise((resolve, reject) => { settle = { resolve, reject }; });
  page.on('pageerror', (e) => settle.reject(new Error(`bench page: ${e.message}`)));
  await page.exposeFunction('__benchReport', (kind, payload) => {
    const load = loadavg().map((x) => +x.toFixed(2));
    if (kind === 'record') console.log(JSON.stringify({ ...JSON.parse(payload), load }));
    else if (kind === 'error') settle.reject(new Error(`bench page: ${payload}`));
    else settle.resolve();
  });
  await page.goto(url);
  await finished;
} finally {
  await browser.close();
  server.close();
}
