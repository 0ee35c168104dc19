// The sample the transport-size estimate (transport-size.ts) compresses: the stream is cut into
// blocks of BLOCK bytes; a systematic sample of them (phase 1, scanBudget: all of a small stream, then
// one block in k) is scanned for byte statistics, which give each block a kind of data and an
// entropy proxy x; a systematic subset of those (phase 2, up to sampleBytes) is copied into one
// stream per kind, which the estimate compresses. Per kind, compressed / x on phase 2 times x over
// phase 1 is a ratio estimator of that kind's share of the compressed stream (Cochran, "Sampling
// Techniques", 3rd ed., 1977, ch. 6 (ratio estimators) and 12 (double sampling)): x follows what a
// block compresses to far more closely than its length does, so few blocks suffice, and the kinds
// (tensors of one data type are runs of one kind) make it a stratified estimate. Blocks compressed
// together rather than alone share what a compressor learns over a stream (codes, contexts), as
// in the whole file; matches between blocks far apart are what a sample cannot see (MATCH_RICH).
import fs from 'node:fs';
import { BLOCK } from './block-sample.js';

/**
 * The kinds of data: float32 (dense; its bytes' distribution depends on their position mod 4),
 * float32 with zero runs (pruned: a zero weight is 4 zero bytes), bytes without float32 structure
 * at a high (>= BYTES_LOW bits) or low order-0 entropy (int8 per channel vs 4-bit codes, per-tensor
 * int8, sparse int8: brotli 11's optimal parse gains most on the latter), and flat data (constant
 * or nearly: zero-filled tensors).
 */
export const KINDS = ['float', 'float-sparse', 'bytes-high', 'bytes-low', 'flat'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Thresholds of the kinds: bits per byte, the zero share of sparse data, the share of its zero runs
 * shorter than 4 bytes below which it is float32.
 */
const FLOAT_BITS = 0.25;
const SPARSE_ZEROS = 0.1;
const SHORT_RUNS = 0.3;
const BYTES_LOW = 6;
const FLAT_BITS = 1;

/**
 * A block's kind (index in KINDS), order-0 entropy h (bits per byte), zero share z, share l of its
 * zeros in runs longer than LONG_RUN bytes, t = 1 when it holds 16-bit floats widened to float32
 * (brotli 11 gains ~17% over quality 5 there, and a sample of blocks from many tensors compresses
 * ~10% worse than the tensors do: no corpus model holds such data, so the estimate flags it), and
 * length n.
 */
export interface BlockStats { kind: number; h: number; z: number; l: number; t: number; n: number }

/**
 * Zero runs longer than 4 float32 weights: an N:M pattern (2:4) has none, unstructured pruning
 * some, and brotli 11 gains more over quality 5 on the latter (~4.5% vs ~1% on PaddleOCR's and
 * openwakeword's weights).
 */
export const LONG_RUN = 16;

const NLOGN = new Float64Array(BLOCK + 1).map((_, k) => (k ? k * Math.log2(k) : 0));

/** The statistics and kind of one block (at most BLOCK bytes). */
function blockStats(b: Uint8Array, counts = new Uint32Array(1024)): BlockStats {
  counts.fill(0);
  const n = b.length;
  // Zero runs, and those shorter than a float32 (int8 zeros; a pruned float32 weight is 4 zero bytes).
  let run = 0, runs = 0, short = 0, long = 0;
  for (let i = 0; i < n; i++) {
    const v = b[i];
    counts[((i & 3) << 8) | v]++;
    if (v === 0) run++;
    else if (run) { runs++; if (run < 4) short++; else if (run > LONG_RUN) long += run; run = 0; }
  }
  if (run) { runs++; if (run < 4) short++; else if (run > LONG_RUN) long += run; }
  // n log n - sum k log k over the 256 values (order 0) and over the four positions.
  let s0 = 0, sPos = 0;
  for (let v = 0; v < 256; v++) {
    const a = counts[v], c = counts[256 | v], d = counts[512 | v], e = counts[768 | v];
    s0 += NLOGN[a + c + d + e];
    sPos += NLOGN[a] + NLOGN[c] + NLOGN[d] + NLOGN[e];
  }
  let nPos = 0;
  for (let p = 0; p < 4; p++) { const m = (n + 3 - p) >> 2; nPos += NLOGN[m]; }
  const h = n ? (NLOGN[n] - s0) / n : 0, hPos = n ? (nPos - sPos) / n : 0;
  const zeros = counts[0] + counts[256] + counts[512] + counts[768], z = n ? zeros / n : 0;
  let kind: number;
  if (h < FLAT_BITS) kind = 4;
  else if (h - hPos > FLOAT_BITS || (z >= SPARSE_ZEROS && short < SHORT_RUNS * runs)) kind = z >= SPARSE_ZEROS ? 1 : 0;
  else kind = h >= BYTES_LOW ? 2 : 3;
  // float32 holding float16 / bfloat16 values: the low mantissa byte (one or two positions of
  // four) zero in nearly every weight, while another position is mostly non-zero (not pruning).
  let zeroPositions = 0, busyPositions = 0;
  for (let p = 0; p < 4; p++) {
    const share = counts[p << 8] / Math.max(1, (n + 3 - p) >> 2);
    if (share > 0.9) zeroPositions++;
    else if (share < 0.5) busyPositions++;
  }
  return { kind, h, z, l: zeros ? long / zeros : 0, t: kind !== 4 && zeroPositions && busyPositions ? 1 : 0, n };
}

/** The entropy proxy of a block: its order-0 entropy in bytes, plus a little for what any block costs. */
export const proxy = (s: BlockStats) => (s.h * s.n) / 8 + 8;

/**
 * Repeats of 16-byte strings within brotli's window (WINDOW, the exact mode's), found from
 * content-defined anchors (a byte pair's hash picks ~1 position in 256, so a string repeated at any
 * shift is anchored alike, as in rsync's and LBFS's chunking: Muthitacharoen et al., "A
 * low-bandwidth network file system", SOSP 2001). Strings of mostly zeros (12 of 16) are skipped:
 * zero runs are what pruning makes, and the sample shows them. Counts anchors and those seen before.
 */
const WINDOW = (1 << 22) - 16;
// 1 byte pair in 256 anchors (not a pair of zeros: runs of zeros would anchor at every byte).
const ANCHOR = new Uint8Array(65536).map((_, p) => +(p !== 0 && (Math.imul(p, 0x9e3779b1) >>> 24) === 17));
export function repeats(b: Uint8Array, offset: number, seen: Map<number, number>, out: { anchors: number; hits: number }): void {
  for (let i = 1; i + 16 <= b.length; i++) {
    if (!ANCHOR[(b[i - 1] << 8) | b[i]]) continue;
    let h1 = 0x811c9dc5, h2 = 0x27d4eb2f, zeros = 0;
    for (let j = i; j < i + 16; j++) {
      const v = b[j];
      if (v === 0) zeros++;
      h1 = Math.imul(h1 ^ v, 0x01000193);
      h2 = Math.imul(h2 + v, 0x165667b1) ^ (h2 >>> 15);
    }
    if (zeros >= 12) continue;
    // 31 bits: small integers keep the Map fast; chance collisions among ~10^5 anchors are negligible.
    const key = (h1 ^ h2) >>> 1, at = offset + i, prev = seen.get(key);
    out.anchors++;
    if (prev !== undefined && at - prev <= WINDOW) out.hits++;
    seen.set(key, at);
  }
}

type Source = string | Uint8Array;

/** Reads the stream (sources concatenated) at an offset. */
class StreamReader {
  private fds: (number | null)[];
  private ends: number[] = [];
  constructor(private sources: Source[]) {
    this.fds = sources.map((s) => (typeof s === 'string' ? fs.openSync(s, 'r') : null));
    let end = 0;
    for (const s of sources) { end += typeof s === 'string' ? fs.fstatSync(this.fds[this.ends.length]!).size : s.length; this.ends.push(end); }
  }
  get size() { return this.ends.length ? this.ends[this.ends.length - 1] : 0; }
  /** Fills `buf` from `offset` (short at the end of the stream); returns the bytes read. */
  read(buf: Uint8Array, offset: number): number {
    let got = 0;
    for (let i = 0; i < this.sources.length && got < buf.length; i++) {
      const start = i ? this.ends[i - 1] : 0, end = this.ends[i];
      const at = offset + got;
      if (at >= end) continue;
      const k = Math.min(buf.length - got, end - at), local = at - start, s = this.sources[i];
      if (typeof s === 'string') {
        let r = 0;
        while (r < k) { const m = fs.readSync(this.fds[i]!, buf, got + r, k - r, local + r); if (m === 0) break; r += m; }
        got += r;
        if (r < k) break;
      } else { buf.set(s.subarray(local, local + k), got); got += k; }
    }
    return got;
  }
  close() { for (const fd of this.fds) if (fd !== null) fs.closeSync(fd); }
}

/** Per kind: the phase-2 blocks concatenated, their proxy sum, and the phase-1 proxy sum and statistics. */
export interface KindSample {
  bytes: Uint8Array;
  xSample: number;
  /** Phase 1: proxy sum, bytes scanned, and the means of the blocks' h, z and l, weighted by bytes. */
  xScan: number;
  nScan: number;
  h: number;
  z: number;
  l: number;
  /** Phase 1: the share of the kind's bytes in blocks of 16-bit floats widened to float32 (BlockStats.t). */
  t: number;
  /** Phase 1: the share of anchored strings seen before within the window (repeats). */
  r: number;
}

export interface StreamSample {
  raw: number;
  /** Bytes scanned (phase 1) and compressed (phase 2). */
  scanned: number;
  sampled: number;
  kinds: (KindSample | null)[];
}

/**
 * Phase 1 covers this many bytes (a systematic one block in k): its statistics cost a few ns per
 * byte, too much for a whole file at the budget of a job of ~40 ns per byte.
 */
function scanBudget(raw: number): number {
  return Math.min(raw, Math.max(512 * 1024, 2 * sampleBudget(raw)));
}

/** The phase-2 budget for a stream of `raw` bytes: all of a small stream, then a share, bounded. */
function sampleBudget(raw: number): number {
  return Math.min(raw, Math.max(128 * 1024, Math.min(4 * 1024 * 1024, Math.round(raw / 64))));
}

/**
 * Draws the two-phase sample of the sources as one stream. Deterministic (systematic from a
 * block's index), so the same bytes give the same estimate.
 */
export function sampleStream(sources: Source[], sampleBytes?: number): StreamSample {
  const reader = new StreamReader(sources);
  try {
    const raw = reader.size, nBlocks = Math.ceil(raw / BLOCK);
    const scanStep = Math.max(1, Math.floor(raw / scanBudget(raw)));
    const nScan = Math.ceil(nBlocks / scanStep);
    const budget = sampleBytes ?? sampleBudget(raw);
    const sampleStep = Math.max(1, Math.floor(nScan / Math.max(1, Math.ceil(budget / BLOCK))));
    const parts: Uint8Array[][] = KINDS.map(() => []);
    const acc = KINDS.map(() => ({ xSample: 0, xScan: 0, nScan: 0, h: 0, z: 0, l: 0, t: 0, rep: { anchors: 0, hits: 0 } }))
    const seen = new Map<number, number>();;
    const counts = new Uint32Array(1024);
    // Sequential reads in large pieces when every block is scanned; one read per block otherwise.
    const run = scanStep === 1 ? 256 : 1;
    const buf = new Uint8Array(BLOCK * run);
    let scanned = 0, sampled = 0;
    for (let j = 0; j < nScan; j += run) {
      const got = reader.read(buf, j * scanStep * BLOCK);
      for (let r = 0; r * BLOCK < got && j + r < nScan; r++) {
        const b = buf.subarray(r * BLOCK, Math.min(got, (r + 1) * BLOCK));
        const s = blockStats(b, counts), a = acc[s.kind], x = proxy(s);
        if (s.kind !== 4) repeats(b, (j + r) * scanStep * BLOCK, seen, a.rep);
        a.xScan += x; a.nScan += s.n; a.h += s.h * s.n; a.z += s.z * s.n; a.l += s.l * s.n; a.t += s.t * s.n;
        scanned += s.n;
        // The first block of each kind is always drawn, so that no kind scanned goes unestimated.
        if ((j + r) % sampleStep === 0 || !parts[s.kind].length) { parts[s.kind].push(b.slice()); a.xSample += x; sampled += s.n; }
      }
    }
    const kinds = KINDS.map((_, k) => {
      const a = acc[k];
      if (!a.nScan || !parts[k].length) return null;
      const bytes = new Uint8Array(parts[k].reduce((n, p) => n + p.length, 0));
      let o = 0;
      for (const p of parts[k]) { bytes.set(p, o); o += p.length; }
      return { bytes, xSample: a.xSample, xScan: a.xScan, nScan: a.nScan, h: a.h / a.nScan, z: a.z / a.nScan, l: a.l / a.nScan, t: a.t / a.nScan, r: a.rep.anchors ? a.rep.hits / a.rep.anchors : 0 };
    });
    return { raw, scanned, sampled, kinds };
  } finally { reader.close(); }
}
