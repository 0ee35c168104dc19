// The exact compressed sizes that the transport-size estimate (pkg-template/src/onnx/transport-size.ts)
// is fitted to and checked against: for each file, its whole-stream brotli quality 11 and gzip level 9
// sizes, and what each chunk of CHUNK bytes (the estimate's unit) adds to those streams when they
// are flushed at every chunk boundary (so a chunk's figure includes the matches quality 11 finds in
// the chunks before it, as in the real stream). Slow on purpose (quality 11 runs at ~0.3 MB/s
// here): cached per file content in bench/out/transport-chunks.jsonl, so each file is compressed once.
// Usage: node bench/transport/transport-chunks.mjs FILE...   (prints each file's sizes; appends to the cache)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';

export const CHUNK = 256 * 1024;
export const CACHE = new URL('../out/transport-chunks.jsonl', import.meta.url).pathname;
const C = zlib.constants;
const brotliStream = (q, n) => zlib.createBrotliCompress({ params: { [C.BROTLI_PARAM_QUALITY]: q, [C.BROTLI_PARAM_SIZE_HINT]: n } });

/** Bytes `z` outputs for each chunk of `bytes` when flushed (`kind`) after every chunk, and in all. */
export async function flushedSizes(bytes, z, kind, chunk = CHUNK) {
  let n = 0;
  const sizes = [];
  z.on('data', (d) => { n += d.length; });
  for (let o = 0; o < bytes.length; o += chunk) {
    z.write(bytes.subarray(o, o + chunk));
    await new Promise((r) => z.flush(kind, r));
    sizes.push(n); n = 0;
  }
  await new Promise((resolve, reject) => { z.on('end', resolve); z.on('error', reject); z.end(); });
  sizes[sizes.length - 1] += n; // the stream's last bytes belong to its last chunk
  return sizes;
}

/** The cached records by content hash (the latest record of each). */
export function readCache() {
  const m = new Map();
  if (fs.existsSync(CACHE)) for (const line of fs.readFileSync(CACHE, 'utf8').split('\n')) if (line) { const r = JSON.parse(line); m.set(r.sha, r); }
  return m;
}

/** The exact sizes of `bytes` (computed, or from the cache). */
export async function exactSizes(bytes, name, cache = readCache()) {
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  const hit = cache.get(sha);
  if (hit && hit.flushed && hit.chunk === CHUNK) return hit;
  const t0 = performance.now();
  const [q11, gz9, whole11, wholeGz] = await Promise.all([
    flushedSizes(bytes, brotliStream(11, bytes.length), C.BROTLI_OPERATION_FLUSH),
    flushedSizes(bytes, zlib.createGzip({ level: 9 }), C.Z_SYNC_FLUSH),
    hit ? hit.q11 : flushedSizes(bytes, brotliStream(11, bytes.length), C.BROTLI_OPERATION_FLUSH, bytes.length + 1).then((s) => s[0]),
    hit ? hit.gz9 : Promise.resolve(zlib.gzipSync(bytes, { level: 9 }).length),
  ]);
  const chunks = q11.map((b, i) => ({ raw: Math.min(CHUNK, bytes.length - i * CHUNK), q11: b, gz9: gz9[i] }));
  const r = { sha, name, raw: bytes.length, q11: whole11, gz9: wholeGz, chunk: CHUNK, flushed: true, chunks, seconds: (performance.now() - t0) / 1000 };
  fs.mkdirSync(path.dirname(CACHE), { recursive: true });
  fs.appendFileSync(CACHE, JSON.stringify(r) + '\n');
  cache.set(sha, r);
  return r;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cache = readCache();
  for (const f of process.argv.slice(2)) {
    const r = await exactSizes(fs.readFileSync(f), path.basename(f), cache);
    const sum = r.chunks.reduce((a, c) => a + c.q11, 0);
    console.log(`${path.basename(f)}: raw ${r.raw}, brotli 11 ${r.q11} (flushed per chunk ${sum}), gzip 9 ${r.gz9} (${r.seconds.toFixed(1)} s)`);
  }
}
