// What the written files travel as over HTTP: their raw size and one gzip (level 9) and one brotli
// stream over them in order (model file, then external data). Zeros compress: a pruned float32
// model travels smaller although its raw size is unchanged.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';

/** Brotli quality: 11 (what a static host precompresses with) up to 32 MiB, 9 above (q11 runs at ~1 MB/s). @param {number} bytes */
const brotliQuality = (bytes) => (bytes <= 32 * 1024 ** 2 ? 11 : 9);

/** @param {string[]} files @param {() => import('node:stream').Transform} make */
async function compressedSize(files, make) {
  let n = 0;
  const z = make();
  const count = new Writable({ write(chunk, _enc, cb) { n += chunk.length; cb(); } });
  const done = pipeline(z, count);
  for (const f of files) {
    for await (const chunk of fs.createReadStream(f)) if (!z.write(chunk)) await new Promise((r) => z.once('drain', r));
  }
  z.end();
  await done;
  return n;
}

/** @param {string[]} files */
export async function transportSize(files) {
  const raw = files.reduce((a, f) => a + fs.statSync(f).size, 0);
  const quality = brotliQuality(raw);
  const [gzip, brotli] = await Promise.all([
    compressedSize(files, () => zlib.createGzip({ level: 9 })),
    compressedSize(files, () => zlib.createBrotliCompress({
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw },
    })),
  ]);
  return { raw, gzip, brotli, brotliQuality: quality };
}
