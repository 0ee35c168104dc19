// What model files travel as over HTTP (raw, gzip level 9, brotli quality 11: what a static host
// precompresses with), estimated at a small fraction of the cost of compressing. Brotli at quality
// 11 runs at ~0.1-0.5 MB/s here: on a 12 MB model it cost 40 s per file, far more than the pruning
// it reports on (issue 40), and no faster setting has a stable ratio to it (quality 5-9 come out
// 1% to 18% larger depending on the data: quality 11's optimal parse gains most on low-entropy
// bytes, 4-bit codes and sparse int8, where greedy parsing takes matches that cost more than the
// literals they replace; Alakuijala et al., "Brotli: A general-purpose data compressor", ACM TOIS
// 37(1), 2019). So the estimate compresses a sample (transport-sample.ts: 4 KiB blocks, grouped by
// kind of data, scaled by a ratio estimator) with brotli quality 5 and deflate level 4, and
// corrects each kind's figure by its ratio to quality 11 / gzip 9: measured on a sub-sample where
// the job is large enough to pay for it (MEASURE_SHARE), else fitted on a corpus of models
// (RATIO_FIT: bench/transport/transport-fit.mjs on PaddleOCR, openwakeword and MiniLM, as shipped,
// pruned 50% / 2:4, channel-removed, int8 and 4-bit by the CLI and by onnxruntime's quantizers),
// and states as its tolerance the largest error measured on models the fit did not see. Data made
// of repeats (tables, filter banks) is beyond a sample: the estimate detects it and says so instead
// of claiming a tolerance. mode 'exact' compresses the whole stream (the figure the estimate is
// checked against).
import fs from 'node:fs';
import zlib from 'node:zlib';
import { OnnxError } from './errors.js';
import { RATIO_FIT } from './transport-fit.js';
import { KINDS, sampleStream, type Kind } from './transport-sample.js';
import { BLOCK, evenBlocks } from './block-sample.js';
import { servedSplit, type ServedSplit } from './served-bytes.js';
import type { OnnxModel } from './model.js';

export interface TransportSizeOptions {
  /**
   * 'estimate' (default): fast compressors on a sample, corrected per kind of data (see the file comment).
   * 'exact': brotli at `quality` and gzip level 9 over the whole stream (~3 s per MB at quality 11).
   */
  mode?: 'estimate' | 'exact';
  /** Brotli quality of the exact mode, 0..11 (default 11). */
  quality?: number;
  /** Also split the brotli figure over this model's tensors (`split` of the result; served-bytes.ts): the model the files hold. */
  split?: OnnxModel;
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
  /** With the `split` option: where the brotli bytes go, per tensor and by part of the model. */
  split?: ServedSplit;
  /** How the figures were made, for the report. */
  method: string;
  /**
   * Estimates only: the largest relative error measured on files the fit did not see
   * (RATIO_FIT.maxError); null when exact, and when part of the data lies outside the fit.
   */
  tolerance: { brotli: number; gzip: number } | null;
  /** Estimates only: the share of the estimate in kinds of data outside the fit (repeats, widened 16-bit floats: KindPart.rich); above OUTSIDE_LIMIT the estimate may be far off (use mode 'exact'). */
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

/**
 * The sample's compressors: brotli at FAST_QUALITY with a 2^FAST_LGWIN window (quality 5 is the
 * lowest with literal context modelling; a small window keeps its hash chains short on zero runs,
 * where a large one made quality 5 run at ~2 MB/s here) and deflate at GZIP_LEVEL (level 9's lazy
 * search is as slow on zero runs).
 */
export const FAST_QUALITY = 5;
const FAST_LGWIN = 16;
export const GZIP_LEVEL = 4;

/**
 * A kind's compressed sample, at most this many times smaller than its entropy proxy (order 0),
 * is made of repeats (tables, filter banks: openwakeword's melspectrogram), which brotli 11's and
 * gzip 9's searches exploit far better than the fast compressors do and blocks far apart cannot
 * show: no fitted ratio holds there. An estimate that meets them says so (`outsideFit`).
 */
export const MATCH_RICH = 1.3;

/**
 * A float32 kind whose anchored strings repeat within brotli's window more often than this
 * (transport-sample.ts, repeats) is made of repeats too: float32 weights hardly repeat (< 5% on
 * the corpus's and the test models', dense or pruned), silero_vad's tables do (~44%). Quantized codes
 * do repeat (whole channels alike) without moving quality 11 away from the sample's figure.
 */
const REPEATS = 0.1;

/**
 * A float32 kind more than this share of which holds 16-bit floats widened to float32 (SmolLM2's
 * export: bfloat16 weights written as float32) is outside the fit too (transport-sample.ts, BlockStats.t).
 */
const WIDENED = 0.5;

/**
 * The share of the estimate in kinds outside the fit (made of repeats, or widened 16-bit floats) above which the estimate claims no
 * tolerance (a small table in a file of weights does not move the total).
 */
export const OUTSIDE_LIMIT = 0.08;

/** The share of the estimate in byte kinds (int8, 4-bit) above which a file gets their tolerance. */
const BYTES_LIMIT = 0.1;

/** One kind's part of the stream: the fast compressors' sizes scaled to the stream, and the features of its correction. */
export interface KindPart {
  kind: Kind;
  brotli: number;
  gzip: number;
  /** The fitted corrections' features (kindFeatures). */
  f: number[];
  /** Outside the fit: made of repeats (MATCH_RICH, REPEATS), or 16-bit floats widened to float32 (WIDENED). */
  rich: boolean;
  /** The sample's bytes (for the fit, which compresses them at quality 11 too). */
  sample: Uint8Array;
  /** The sample's entropy proxy (transport-sample.ts) and fast sizes, unscaled. */
  proxy: number;
  brotliSample: number;
  gzipSample: number;
  /** The corrections measured on a sub-sample of `bytes` (brotli 11 / fast, gzip 9 / fast), where the budget allowed. */
  measured: { brotli: number; gzip: number; bytes: number } | null;
}

/**
 * The features of a kind's correction log(quality 11 / fast), log(gzip 9 / fast): the kind one-hot,
 * then for the byte kinds how far below 8 bits their order-0 entropy is (where brotli 11's optimal
 * parse gains most over a greedy one: short matches found by chance in low-entropy bytes cost
 * more than the literals they replace), the zero share of low-entropy bytes, and for pruned
 * float32 the share of zeros in long runs (LONG_RUN: unstructured rather than N:M).
 */
export function kindFeatures(k: number, h: number, z: number, l: number): number[] {
  const f = KINDS.map((_, i) => +(i === k));
  return [...f, k === 1 ? l : 0, k === 2 ? 1 - h / 8 : 0, k === 3 ? 1 - h / 8 : 0, k === 3 ? z : 0];
}

const compress = (b: Uint8Array, brotli: number | null, level = GZIP_LEVEL) => new Promise<number>((resolve, reject) => {
  const done = (e: Error | null, r: Buffer) => (e ? reject(e) : resolve(r.length));
  if (brotli === null) zlib.deflateRaw(b, { level }, done);
  else zlib.brotliCompress(b, { params: { [C.BROTLI_PARAM_QUALITY]: brotli, [C.BROTLI_PARAM_SIZE_HINT]: b.length, ...(brotli === FAST_QUALITY ? { [C.BROTLI_PARAM_LGWIN]: FAST_LGWIN } : {}) } }, done);
});

/**
 * Where the job is large enough to pay for it, the correction of a kind is measured instead of
 * fitted: brotli 11 and gzip 9 on a sub-sample of its sample (one block in k), against the fast
 * compressors on the same bytes. Brotli 11 runs at ~0.2-0.5 MB/s here, a magnitude prune at
 * ~25-40 ns per byte of model: a budget of MEASURE_SHARE of the stream keeps the cost within a few
 * percent of the job; a kind gets a measured correction when its part of the budget reaches
 * MEASURE_MIN bytes (below, the ratio of a few blocks says less than the fit).
 */
const MEASURE_SHARE = 1 / 8192;
const MEASURE_MIN = 32 * 1024;

/** Options of the sample (the bench varies them; transportSize uses the defaults). */
export interface SampleOptions { sampleBytes?: number; measureBytes?: number }

/** The sample of the sources (transport-sample.ts), each kind's part compressed (on zlib's threads) and scaled to the stream. */
export async function kindParts(sources: Source[], opts: SampleOptions = {}): Promise<{ raw: number; scanned: number; sampled: number; parts: KindPart[] }> {
  const s = sampleStream(sources, opts.sampleBytes);
  const fast = await Promise.all(s.kinds.map(async (k) => (k ? Promise.all([compress(k.bytes, FAST_QUALITY), compress(k.bytes, null)]) : null)));
  const measureBytes = opts.measureBytes ?? Math.floor(s.raw * MEASURE_SHARE);
  const total = fast.reduce((a, f, i) => a + (f ? f[0] * s.kinds[i]!.xScan / s.kinds[i]!.xSample : 0), 0);
  const parts = await Promise.all(s.kinds.map(async (k, i) => {
    if (!k) return null;
    const [br, gz] = fast[i]!;
    // The ratio estimator: compressed per unit of proxy on the sample, times the proxy of the kind in the stream.
    const scale = (k.xScan / k.xSample) * (s.raw / s.scanned);
    const part: KindPart = {
      kind: KINDS[i], brotli: br * scale, gzip: gz * scale, f: kindFeatures(i, k.h, k.z, k.l),
      rich: KINDS[i] !== 'flat' && (br * MATCH_RICH < k.xSample || (i <= 1 && (k.r > REPEATS || k.t > WIDENED))), sample: k.bytes, proxy: k.xSample, brotliSample: br, gzipSample: gz, measured: null,
    };
    // The budget shared by the kinds' parts of the estimate.
    const mine = total ? (measureBytes * br * k.xScan) / k.xSample / total : 0;
    if (mine >= MEASURE_MIN && KINDS[i] !== 'flat') {
      const sub = evenBlocks(k.bytes, Math.round(Math.min(mine, k.bytes.length) / BLOCK));
      const [b11, b5, g9, g4] = await Promise.all([compress(sub, 11), compress(sub, FAST_QUALITY), compress(sub, null, 9), compress(sub, null)]);
      part.measured = { brotli: b11 / b5, gzip: g9 / g4, bytes: sub.length };
    }
    return part;
  }));
  return { raw: s.raw, scanned: s.scanned, sampled: s.sampled, parts: parts.filter((p): p is KindPart => p !== null) };
}

/** Coefficients of the corrections per kind (see RATIO_FIT). */
export interface RatioFit { brotli: readonly number[]; gzip: readonly number[] }

/**
 * The estimates from the kinds' parts: each corrected by its measured ratio or its fitted one,
 * summed; `measuredShare` is the share of the brotli estimate whose correction was measured.
 */
export function estimateFrom(parts: KindPart[], fit: RatioFit = RATIO_FIT): { brotli: number; gzip: number; outsideFit: number; byteShare: number; measuredShare: number } {
  let brotli = 0, gzip = 0, outside = 0, bytes = 0, measured = 0;
  for (const p of parts) {
    const b = p.brotli * (p.measured ? p.measured.brotli : Math.exp(dot(fit.brotli, p.f)));
    brotli += b;
    gzip += p.gzip * (p.measured ? p.measured.gzip : Math.exp(dot(fit.gzip, p.f)));
    if (p.measured) measured += b;
    if (p.rich) outside += b;
    if (p.kind === 'bytes-high' || p.kind === 'bytes-low') bytes += b;
  }
  // A gzip stream's header and trailer: 18 bytes.
  return { brotli, gzip: gzip + 18, outsideFit: brotli ? outside / brotli : 0, byteShare: brotli ? bytes / brotli : 0, measuredShare: brotli ? measured / brotli : 0 };
}

/**
 * Which stated error applies: 'measured' when the corrections of at least MEASURED_LIMIT of the
 * estimate were measured, else the fitted figure of the file's data (float32, or bytes: int8, 4-bit).
 */
const MEASURED_LIMIT = 0.9;
export function domainOf(e: { byteShare: number; measuredShare: number }): 'measured' | 'float' | 'bytes' {
  return e.measuredShare >= MEASURED_LIMIT ? 'measured' : e.byteShare > BYTES_LIMIT ? 'bytes' : 'float';
}

async function estimate(sources: Source[], raw: number, t0: number): Promise<TransportSize> {
  const { parts, sampled } = await kindParts(sources);
  const e = estimateFrom(parts);
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const within = e.outsideFit <= OUTSIDE_LIMIT;
  const domain = domainOf(e), tol = { ...RATIO_FIT.maxError[domain] };
  const share = raw ? sampled / raw : 1;
  const what = { measured: 'corrections measured on the file', float: 'float32 weights, dense or pruned', bytes: 'bytes without float32 structure: int8, 4-bit' }[domain];
  const how = domain === 'measured'
    ? `each kind corrected by brotli 11 / gzip 9 measured on a sub-sample of ${(100 * parts.reduce((a, p) => a + (p.measured?.bytes ?? 0), 0) / (raw || 1)).toPrecision(2)}% of the data`
    : `each kind corrected by a ratio fitted on ${RATIO_FIT.files - RATIO_FIT.flagged} model files`;
  return {
    raw, gzip: Math.round(e.gzip), brotli: Math.round(e.brotli), brotliQuality: 11, estimated: true,
    method: `estimated: brotli quality ${FAST_QUALITY} and deflate level ${GZIP_LEVEL} on ${share >= 1 ? 'all the data' : `a sample of ${pct(share)} of the data (${BLOCK / 1024} KiB blocks, by kind of data)`}, ${how} (largest error measured on unseen models, ${what}: brotli ${pct(tol.brotli)}, gzip ${pct(tol.gzip)})`
      + (within ? '' : `; ${pct(e.outsideFit)} of the data lies outside what the estimate was fitted and checked on (repeats that a sample does not show: tables, filter banks; or 16-bit floats widened to float32): it may be far off, mode 'exact' measures it`),
    tolerance: within ? tol : null, outsideFit: e.outsideFit, ms: performance.now() - t0,
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
  const withSplit = async (t: TransportSize) => (opts.split ? { ...t, split: await servedSplit(opts.split, t.brotli) } : t);
  if (mode === 'estimate') return withSplit(await estimate(sources, raw, t0));
  const [gzip, brotli] = await Promise.all([
    compressedSize(sources, zlib.createGzip({ level: 9 })),
    compressedSize(sources, zlib.createBrotliCompress({ params: { [C.BROTLI_PARAM_QUALITY]: quality, [C.BROTLI_PARAM_SIZE_HINT]: raw } })),
  ]);
  return withSplit({
    raw, gzip, brotli, brotliQuality: quality, estimated: false,
    method: `exact: one gzip level 9 and one brotli quality ${quality} stream over the files`, tolerance: null, outsideFit: 0, ms: performance.now() - t0,
  });
}
