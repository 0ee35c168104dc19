// What model files travel as over HTTP (raw, gzip level 9, brotli quality 11: what a static host
// precompresses with), estimated at a small fraction of the cost of compressing. Brotli at quality
// 11 runs at ~0.3 MB/s here: on a 12 MB model it cost 40 s per file, far more than the pruning it
// reports on (issue 40). The estimate makes one fast pass: a brotli stream at quality 2 (~60 MB/s),
// flushed at every 256 KiB chunk so each chunk's share is counted with the matches it finds in the
// chunks before it, and on one chunk in four brotli quality 5 and deflate level 1 of the chunk alone.
// Sizes are corrected by ratios fitted per kind of data (dense float32, pruned float32, pruned
// int8-like bytes, dense bytes: the kinds differ in what quality 11 gains, from ~1% on float32 to
// ~15% on pruned int8, whose zero bytes its context modelling predicts well (Alakuijala et al.,
// "Brotli: A general-purpose data compressor", ACM TOIS 37(1), 2019: context modes, block
// splitting, optimal parsing)); the sampled chunks then scale the fast pass's figure for the file
// (a ratio estimator). bench/transport/transport-fit.mjs fits RATIO_FIT on PaddleOCR det / cls / rec and the
// openwakeword models, as shipped, 50% and 2:4 pruned, and int8-quantized, and states the
// leave-one-model-out error the result carries as its tolerance. Data made of repeats (tables,
// filter banks) is beyond any such ratio: the estimate detects it and says so instead of claiming a
// tolerance. mode 'exact' compresses the whole stream (the figure the estimate is checked against).
import fs from 'node:fs';
import zlib from 'node:zlib';
import { OnnxError } from './errors.js';
import { RATIO_FIT } from './transport-fit.js';

/** The unit the estimate works on (and the fit was made on). */
export const ESTIMATE_CHUNK = 256 * 1024;

/**
 * Byte counts per position mod 4 (bins position << 8 | byte), and in bin 1024 the zero bytes that
 * follow a non-zero one (the starts of zero runs).
 */
export function byteCounts(c: Uint8Array): Uint32Array {
  const counts = new Uint32Array(1025);
  let prev = 1, starts = 0;
  for (let i = 0; i < c.length; i++) {
    const b = c[i];
    counts[((i & 3) << 8) | b]++;
    if (b === 0 && prev !== 0) starts++;
    prev = b;
  }
  counts[1024] = starts;
  return counts;
}

/** Zero bytes above this share make a chunk sparse; run starts above RUN_STARTS of them make it int8-like. */
export const SPARSE_ZEROS = 0.1;
export const RUN_STARTS = 0.4;
/** Bits per byte that knowing a byte's position mod 4 saves on float32 data (~1-2), and not on bytes (~0). */
export const FLOAT_BITS = 0.25;

/**
 * A chunk's features from its byte counts, length and a compressed size: the kind of data, one-hot
 * [dense float32, sparse in runs (pruned float32: a zero weight is 4 zero bytes), sparse in single
 * bytes (pruned int8), dense bytes (int8)], then the compressed ratio r and the entropy e of the
 * bytes given their position mod 4 (bits / 8 per byte). The fitted ratios are per kind (RATIO_FIT: the kinds' weighted
 * geometric means); quality 11 gains ~1-2% over quality 5 on float32, dense or pruned, and ~15%
 * on pruned int8, whose zero bytes its context modelling predicts far better. r and e say whether
 * the chunk is made of repeats (matchRich).
 */
export function features(counts: Uint32Array, length: number, size: number): number[] {
  let zeros = 0, hPos = 0, h0 = 0;
  for (let p = 0; p < 4; p++) {
    let n = 0;
    for (let v = 0; v < 256; v++) n += counts[(p << 8) | v];
    for (let v = 0; v < 256; v++) {
      const k = counts[(p << 8) | v];
      if (k) hPos -= k * Math.log2(k / n);
    }
    zeros += counts[p << 8];
  }
  for (let v = 0; v < 256; v++) {
    const k = counts[v] + counts[256 | v] + counts[512 | v] + counts[768 | v];
    if (k) h0 -= k * Math.log2(k / (length || 1));
  }
  const n = length || 1, z = zeros / n;
  // Bytes whose distribution depends on their position mod 4 are float32's (sign and exponent in one byte of four).
  const float = (h0 - hPos) / n > FLOAT_BITS;
  const kind = z < SPARSE_ZEROS ? (float ? 0 : 3) : counts[1024] / zeros < RUN_STARTS ? 1 : 2;
  return [+(kind === 0), +(kind === 1), +(kind === 2), +(kind === 3), size / n, hPos / 8 / n];
}


export interface TransportSizeOptions {
  /**
   * 'estimate' (default): a fast pass corrected per chunk (see the file comment; ~20 ms per MB).
   * 'exact': brotli at `quality` and gzip level 9 over the whole stream (~3 s per MB at quality 11).
   */
  mode?: 'estimate' | 'exact';
  /** Brotli quality of the exact mode, 0..11 (default 11). */
  quality?: number;
}

export interface TransportSize {
  /** Bytes of the files (model, then external data), as stored. */
  raw: number;
  /** gzip level 9 of the files as one stream. */
  gzip: number;
  /** brotli of the files as one stream, at brotliQuality. */
  brotli: number;
  brotliQuality: number;
  estimated: boolean;
  /** How the figures were made, for the report. */
  method: string;
  /**
   * Estimates only: the largest relative error measured on files the fit did not see
   * (RATIO_FIT.maxError); null when exact, and when part of the data lies outside the fit.
   */
  tolerance: { brotli: number; gzip: number } | null;
  /** Estimates only: the share of the data (of the fast pass's output) in chunks made of repeats (MATCH_RICH); above OUTSIDE_LIMIT the estimate may be far off (use mode 'exact'). */
  outsideFit: number;
  ms: number;
}

type Source = string | Uint8Array;

/** The sources as one stream, a chunk of `size` bytes at a time (the last may be shorter). */
function* chunks(sources: Source[], size: number): Generator<Uint8Array> {
  const buf = new Uint8Array(size);
  let fill = 0;
  for (const s of sources) {
    if (typeof s !== 'string') {
      let o = 0;
      while (o < s.length) {
        const k = Math.min(size - fill, s.length - o);
        buf.set(s.subarray(o, o + k), fill);
        fill += k; o += k;
        if (fill === size) { yield buf; fill = 0; }
      }
      continue;
    }
    const fd = fs.openSync(s, 'r');
    try {
      for (;;) {
        const k = fs.readSync(fd, buf, fill, size - fill, null);
        if (k === 0) break;
        fill += k;
        if (fill === size) { yield buf; fill = 0; }
      }
    } finally { fs.closeSync(fd); }
  }
  if (fill) yield buf.subarray(0, fill);
}

function checkSources(sources: Source[]): number {
  if (!Array.isArray(sources) || !sources.length) throw new OnnxError('unsupported', 'transportSize needs at least one file or byte array', 'invalid_arguments');
  let raw = 0;
  for (const s of sources) {
    if (s instanceof Uint8Array) { raw += s.length; continue; }
    if (typeof s !== 'string') throw new OnnxError('unsupported', 'transportSize takes file paths and Uint8Arrays', 'invalid_arguments');
    let st: fs.Stats;
    try { st = fs.statSync(s); } catch { throw new OnnxError('no_file', `no such file: ${s}`, 'invalid_arguments'); }
    if (!st.isFile()) throw new OnnxError('no_file', `not a file: ${s}`, 'invalid_arguments');
    raw += st.size;
  }
  return raw;
}

const C = zlib.constants;
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

/** The fast pass's quality: 2 is the lowest that keeps a hash chain over the whole window (quality 1 finds no match across chunks). */
export const FAST_QUALITY = 2;

/**
 * A chunk whose bytes' entropy (given position mod 4) exceeds what the fast pass gave by more than
 * this factor is made of repeats (tables, filter banks: openwakeword's melspectrogram and
 * silero_vad), where quality 11's optimal parse and gzip 9's lazy matching find far more than the
 * fast pass and no ratio fitted on weights holds (off by up to 60% there). Such chunks are left out
 * of the fit, and an estimate that meets them says so (`outsideFit`, no tolerance).
 */
export const MATCH_RICH = 1.5;

/** Whether a chunk's features (see features) mark it as made of repeats (MATCH_RICH). */
export function matchRich(f: readonly number[]): boolean {
  return f[4] > 0 && f[5] / f[4] > MATCH_RICH;
}

/** The features the fitted ratios use: the one-hot kind. */
export const KIND_FEATURES = 4;

/**
 * The share of the fast pass's output in chunks made of repeats above which the estimate claims no
 * tolerance (a header or a small table in a file of weights does not move the total).
 */
export const OUTSIDE_LIMIT = 0.08;

/** The share of the fast output in byte-kind chunks (int8-like) above which a file gets the int8 tolerance. */
export const BYTES_LIMIT = 0.1;

/** One chunk of the fast pass: its brotli output and features, and for sampled chunks more. */
export interface FastChunk {
  /** Bytes the FAST_QUALITY stream gave for this chunk, and the chunk's features with them. */
  bytes: number;
  f: number[];
  /** The chunk's length in bytes. */
  length: number;
  /**
   * Sampled chunks only: brotli at SAMPLE_QUALITY and deflate level 1 of the chunk alone (gzip's
   * window is 32 KiB: alone is as in the stream), and the features with each.
   */
  br?: number;
  h?: number[];
  gz?: number;
  g?: number[];
}

/**
 * One chunk in SAMPLE_EVERY is also compressed alone at SAMPLE_QUALITY and with deflate (brotli 5
 * and deflate run at ~25-35 MB/s here, brotli 2 at ~60-100). Quality 5 is the lowest with literal
 * context modelling, which is most of what quality 11 gains on weights; what is left to predict is
 * the optimal parse's gain, which varies little with the kind of data.
 */
export const SAMPLE_EVERY = 4;
export const SAMPLE_QUALITY = 5;

/**
 * The fast pass: one brotli stream at FAST_QUALITY over the sources, flushed at every chunk
 * boundary so each chunk's output is counted (with the matches it finds in earlier chunks, as
 * quality 11 does), deflate on every `gzipEvery`-th chunk, and each chunk's features, computed
 * while zlib compresses it on its threads.
 */
export async function fastPass(sources: Source[], raw: number, sampleEvery = SAMPLE_EVERY): Promise<FastChunk[]> {
  const z = zlib.createBrotliCompress({ params: { [C.BROTLI_PARAM_QUALITY]: FAST_QUALITY, [C.BROTLI_PARAM_SIZE_HINT]: raw } });
  let n = 0;
  z.on('data', (d: Buffer) => { n += d.length; });
  const failed = new Promise<never>((_, reject) => z.on('error', reject));
  const out: FastChunk[] = [];
  try {
    let i = 0;
    for (const c of chunks(sources, ESTIMATE_CHUNK)) {
      const copy = Buffer.from(c);
      z.write(copy);
      const flushed = new Promise<void>((resolve) => z.flush(C.BROTLI_OPERATION_FLUSH, () => resolve()));
      const sampled = i++ % sampleEvery === 0;
      const deflated = sampled ? new Promise<number>((resolve, reject) => zlib.deflateRaw(copy, { level: 1 }, (e, r) => (e ? reject(e) : resolve(r.length)))) : null;
      const better = sampled
        ? new Promise<number>((resolve, reject) => zlib.brotliCompress(copy, { params: { [C.BROTLI_PARAM_QUALITY]: SAMPLE_QUALITY, [C.BROTLI_PARAM_SIZE_HINT]: copy.length } }, (e, r) => (e ? reject(e) : resolve(r.length))))
        : null;
      const counts = byteCounts(copy);
      await Promise.race([flushed, failed]);
      const chunk: FastChunk = { bytes: n, length: copy.length, f: features(counts, copy.length, n) };
      n = 0;
      if (deflated && better) {
        chunk.gz = await deflated; chunk.g = features(counts, copy.length, chunk.gz);
        chunk.br = await better; chunk.h = features(counts, copy.length, chunk.br);
      }
      out.push(chunk);
    }
    const ended = new Promise<void>((resolve) => z.on('end', () => resolve()));
    z.end();
    await Promise.race([ended, failed]);
  } finally { z.destroy(); }
  if (out.length) out[out.length - 1].bytes += n;
  return out;
}

/** Coefficients of the per-chunk log-ratios (see RATIO_FIT). */
export interface RatioFit {
  brotli: readonly number[]; brotliFromFast: readonly number[]; gzip: readonly number[]; gzipFromFast: readonly number[];
}

/**
 * The estimates from a fast pass. Each format: each sampled chunk's size alone (brotli 5, deflate 1)
 * times its predicted ratio, extended to the unsampled chunks through a prediction from the fast
 * stream (a ratio estimator: the sampled chunks say how far that prediction is off on this file,
 * e.g. on int8 against float32 data, or where gzip's 32 KiB window misses what brotli's finds).
 */
export function estimateFrom(fast: FastChunk[], fit: RatioFit = RATIO_FIT): { brotli: number; gzip: number; outsideFit: number; byteShare: number } {
  const one = (coef: readonly number[], fromFast: readonly number[], size: (c: FastChunk) => number | undefined, feats: (c: FastChunk) => number[] | undefined) => {
    let pred = 0, predSampled = 0, direct = 0;
    for (const c of fast) {
      const p = c.bytes * Math.exp(dot(fromFast, c.f));
      pred += p;
      const s = size(c);
      if (s !== undefined) { predSampled += p; direct += s * Math.exp(dot(coef, feats(c)!)); }
    }
    return predSampled > 0 ? (direct / predSampled) * pred : direct;
  };
  let all = 0, outside = 0, bytesKinds = 0; // fast-pass bytes
  for (const c of fast) {
    all += c.bytes;
    if (matchRich(c.f)) outside += c.bytes;
    // Byte kinds (2, 3) get the int8 tolerance. Dense float32 in small tensors can look like dense
    // bytes (tensors at mixed offsets in one chunk blur the position mod 4): pessimistic, not wrong.
    if (c.f[2] || c.f[3]) bytesKinds += c.bytes;
  }
  return {
    byteShare: all ? bytesKinds / all : 0,
    brotli: one(fit.brotli, fit.brotliFromFast, (c) => c.br, (c) => c.h),
    // A gzip stream's header and trailer: 18 bytes.
    gzip: one(fit.gzip, fit.gzipFromFast, (c) => c.gz, (c) => c.g) + 18,
    outsideFit: all ? outside / all : 0,
  };
}

async function estimate(sources: Source[], raw: number, t0: number): Promise<TransportSize> {
  const { brotli, gzip, outsideFit, byteShare } = estimateFrom(await fastPass(sources, raw));
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const within = outsideFit <= OUTSIDE_LIMIT;
  // The tolerance of the kind of data the file holds: int8-like bytes estimate less well than float32.
  const { float: tf, bytes: tb } = RATIO_FIT.maxError;
  const tol = byteShare > BYTES_LIMIT ? { brotli: Math.max(tf.brotli, tb.brotli), gzip: Math.max(tf.gzip, tb.gzip) } : { ...tf };
  return {
    raw, gzip: Math.round(gzip), brotli: Math.round(brotli), brotliQuality: 11, estimated: true,
    method: `estimated: brotli quality ${FAST_QUALITY} flushed per ${ESTIMATE_CHUNK / 1024} KiB chunk and brotli ${SAMPLE_QUALITY} + deflate on 1 chunk in ${SAMPLE_EVERY}, each chunk corrected by a ratio per kind of data fitted on ${RATIO_FIT.files - RATIO_FIT.flagged} model files (largest error measured on unseen files of this kind${byteShare > BYTES_LIMIT ? ' (bytes without float32 structure, int8-like)' : ' (float32 weights, dense or pruned)'}: brotli ${pct(tol.brotli)}, gzip ${pct(tol.gzip)})`
      + (within ? '' : `; ${pct(outsideFit)} of the data is made of repeats the fast pass does not see (tables, filter banks): the estimate may be far off, mode 'exact' measures it`),
    tolerance: within ? tol : null, outsideFit, ms: performance.now() - t0,
  };
}

async function compressedSize(sources: Source[], z: zlib.BrotliCompress | zlib.Gzip): Promise<number> {
  let n = 0;
  const done = new Promise<void>((resolve, reject) => {
    z.on('data', (d: Buffer) => { n += d.length; });
    z.on('end', resolve);
    z.on('error', reject);
  });
  for (const c of chunks(sources, 1 << 20)) {
    if (!z.write(Buffer.from(c))) await new Promise((r) => z.once('drain', r));
  }
  z.end();
  await done;
  return n;
}

/**
 * Node only: the transport size of `sources` (file paths and byte arrays, as one stream in order:
 * the model file, then its external data). Estimated by default (see TransportSizeOptions.mode).
 */
export async function transportSize(sources: Source[], opts: TransportSizeOptions = {}): Promise<TransportSize> {
  const mode = opts.mode ?? 'estimate';
  if (mode !== 'estimate' && mode !== 'exact') throw new OnnxError('unsupported', `mode must be 'estimate' or 'exact' (got "${String(mode)}")`, 'invalid_arguments');
  const quality = opts.quality ?? 11;
  if (!(Number.isInteger(quality) && quality >= 0 && quality <= 11)) throw new OnnxError('unsupported', `quality must be an integer in 0..11 (got ${quality})`, 'invalid_arguments');
  if (opts.quality !== undefined && mode !== 'exact') throw new OnnxError('unsupported', 'quality applies to mode "exact" (the estimate is of quality 11)', 'invalid_arguments');
  const t0 = performance.now();
  const raw = checkSources(sources);
  if (mode === 'estimate') return estimate(sources, raw, t0);
  const [gzip, brotli] = await Promise.all([
    compressedSize(sources, zlib.createGzip({ level: 9 })),
    compressedSize(sources, zlib.createBrotliCompress({ params: { [C.BROTLI_PARAM_QUALITY]: quality, [C.BROTLI_PARAM_SIZE_HINT]: raw } })),
  ]);
  return {
    raw, gzip, brotli, brotliQuality: quality, estimated: false,
    method: `exact: one gzip level 9 and one brotli quality ${quality} stream over the files`, tolerance: null, outsideFit: 0, ms: performance.now() - t0,
  };
}
