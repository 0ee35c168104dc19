// Runs bench/browser in headless Chromium (playwright-core, the system Chromium) and prints
// its records as JSON lines. Usage: node bench/chromium.mjs [--quick] [--calib] [--threads]
// Every record gets the machine's load average at the time it is printed (`load`).
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const quick = process.argv.includes('--quick');
const calib = process.argv.includes('--calib'); // calibration kernels only (bench/calib-suite.mjs)
const probe = process.argv.includes('--threads'); // threads probe only (bench/threads-suite.mjs)
const server = await serve();
const query = [quick && 'quick', calib && 'calib', probe && 'probe'].filter(Boolean).join('&');
const url = `http://127.0.0.1:${server.address().port}/browser/index.html${query ? `?${query}` : ''}`;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let printed = 0;
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') console.error('[page]', m.text()); });
  await page.goto(url);
  for (;;) {
    const { records, done, error } = await page.evaluate(() => ({ records: window.__records, done: window.__done, error: window.__error }));
    const load = loadavg().map((x) => +x.toFixed(2));
    for (; printed < records.length; printed++) console.log(JSON.stringify({ ...records[printed], load }));
    if (error) throw new Error(`bench page: ${error}`);
    if (done) break;
    await new Promise((r) => setTimeout(r, 500));
  }
} finally {
  await browser.close();
  server.close();
}
