// The exact transport sizes the estimate (pkg-template/src/onnx/transport-size.ts) is checked
// against: each file's whole-stream brotli quality 11 (the Node default window, as mode 'exact') and
// gzip level 9, and the time each took. Slow on purpose (brotli 11 runs at ~0.2-0.6 MB/s here):
// cached per file content in bench/out/transport-exact.jsonl, so each file is compressed once.
// Usage: node bench/transport/transport-exact.mjs FILE...   (prints each file's sizes; appends to the cache)
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { transportSize } from 'sparsekit-wasm/onnx';

export const CACHE = new URL('../out/transport-exact.jsonl', import.meta.url).pathname;

/** The cached records by content hash. */
export function readCache() {
  const m = new Map();
  if (fs.existsSync(CACHE)) for (const line of fs.readFileSync(CACHE, 'utf8').split('\n')) if (line) { const r = JSON.parse(line); m.set(r.sha, r); }
  return m;
}

/** The content hash of bytes, or of a file read in pieces (the files go to 650 MB). */
export function sha(file) {
  if (typeof file !== 'string') return crypto.createHash('sha256').update(file).digest('hex');
  const h = crypto.createHash('sha256'), fd = fs.openSync(file, 'r'), buf = Buffer.alloc(1 << 22);
  try { for (let k; (k = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) h.update(buf.subarray(0, k)); } finally { fs.closeSync(fd); }
  return h.digest('hex');
}

/** The exact sizes of `file` (computed by transportSize's mode 'exact', or from the cache). */
export async function exactSizes(file, cache = readCache()) {
  const key = sha(file);
  const hit = cache.get(key);
  if (hit) return hit;
  const r = await transportSize([file], { mode: 'exact' });
  const rec = { sha: key, name: path.basename(file), raw: r.raw, q11: r.brotli, gz9: r.gzip, seconds: r.ms / 1000 };
  fs.mkdirSync(path.dirname(CACHE), { recursive: true });
  fs.appendFileSync(CACHE, JSON.stringify(rec) + '\n');
  cache.set(key, rec);
  return rec;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cache = readCache();
  for (const f of process.argv.slice(2)) {
    const r = await exactSizes(f, cache);
    console.log(`${path.basename(f)}: raw ${r.raw}, brotli 11 ${r.q11}, gzip 9 ${r.gz9} (${r.seconds.toFixed(1)} s)`);
  }
}
