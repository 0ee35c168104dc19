// Headless Chromium (Debian's, with the flags this machine kind needs) and a static server on
// 127.0.0.1, optionally cross-origin isolated, for tests and benches that run pages.
import { createServer } from 'node:http';
import { readFileSync, statSync, existsSync } from 'node:fs';
import { join, extname, normalize } from 'node:path';

const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css',
  '.onnx': 'application/octet-stream',
};

/**
 * Serves `dir` on 127.0.0.1 (random port); `isolated` adds COOP/COEP; `extra` maps URL paths to
 * generated file contents; `log` (an array) collects the requested paths. Returns {url, close}.
 */
export async function serve(dir, { isolated, extra = {}, mounts = {}, log = null }) {
  const server = createServer((req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (log) log.push(path);
    // `mounts`: URL prefix -> another folder served as if it sat there (the case root).
    let root = dir;
    for (const [prefix, folder] of Object.entries(mounts)) {
      if (path.startsWith(prefix)) { root = folder; path = path.slice(prefix.length - 1); break; }
    }
    if (path in extra) {
      const h = { 'Content-Type': TYPES[extname(path)] ?? 'text/plain', 'Cache-Control': 'no-store' };
      if (isolated) Object.assign(h, { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' });
      res.writeHead(200, h).end(extra[path]);
      return;
    }
    let file = normalize(join(root, path));
    if (!file.startsWith(root)) {
      res.writeHead(403).end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' };
    if (isolated) {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
      headers['Cross-Origin-Resource-Policy'] = 'same-origin';
    }
    res.writeHead(200, headers).end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launch() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

