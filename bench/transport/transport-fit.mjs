// Fits RATIO_FIT of pkg-template/src/onnx/transport-size.ts: per chunk, log(exact / fast-pass size)
// as a linear function of the chunk's features, least squares weighted by the fast-pass size, on
// every file given (their exact sizes from bench/transport/transport-chunks.mjs's cache, computed if absent).
// Prints, per file, the in-sample error of the estimate against the whole-stream brotli 11 / gzip 9,
// and a leave-one-model-out error (fitted without any variant of that model), then the object to
// paste into transport-fit.ts. Usage: node bench/transport/transport-fit.mjs FILE...   (needs the build)
import fs from 'node:fs';
import path from 'node:path';
import { readCache, exactSizes } from './transport-chunks.mjs';
import { fastPass, estimateFrom, matchRich, ESTIMATE_CHUNK, SAMPLE_EVERY, OUTSIDE_LIMIT, BYTES_LIMIT, KIND_FEATURES } from '../../pkg/src/onnx/transport-size.js';

/** Solves the weighted normal equations (X'WX) b = X'Wy by Gaussian elimination. */
function lsq(rows) {
  const k = rows[0].f.length, A = Array.from({ length: k }, () => new Float64Array(k + 1));
  for (const { f, y, w } of rows) for (let i = 0; i < k; i++) { for (let j = 0; j < k; j++) A[i][j] += w * f[i] * f[j]; A[i][k] += w * f[i] * y; }
  for (let i = 0; i < k; i++) A[i][i] += 1e-9 * (A[i][i] + 1); // ridge against a constant feature column
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < k; r++) if (r !== c) { const m = A[r][c] / A[c][c]; for (let j = c; j <= k; j++) A[r][j] -= m * A[c][j]; }
  }
  return Array.from({ length: k }, (_, i) => A[i][k] / A[i][i]);
}

export async function loadRows(files) {
  const cache = readCache();
  const out = [];
  for (const f of files) {
    const bytes = fs.readFileSync(f);
    const ex = await exactSizes(bytes, path.basename(f), cache);
    if (ex.chunk !== ESTIMATE_CHUNK) throw new Error(`cache chunk ${ex.chunk} != ESTIMATE_CHUNK ${ESTIMATE_CHUNK}`);
    // Every chunk sampled for the fit; the estimate samples 1 in SAMPLE_EVERY (estimateFrom drops the others).
    const fast = await fastPass([bytes], bytes.length, 1);
    const chunks = ex.chunks.map((c, i) => ({ ...c, fast: fast[i].bytes, length: fast[i].length, f: fast[i].f, gz: fast[i].gz, g: fast[i].g, br: fast[i].br, h: fast[i].h }));
    out.push({ file: f, model: path.basename(f).split('.')[0], ex, chunks });
  }
  return out;
}

/** The fitted features: the one-hot kind (a least-squares fit on it is each kind's weighted mean log-ratio). */
const k = (f) => f.slice(0, KIND_FEATURES);

export function fit(data) {
  // Data made of repeats is outside what the estimate claims (transport-size.ts, MATCH_RICH): the
  // files the estimate flags are left out whole (their other chunks are tables too, e.g. melspectrogram's).
  const cs = data.filter((d) => !flagged(d)).flatMap((d) => d.chunks).filter((c) => !matchRich(c.f));
  return {
    brotli: lsq(cs.map((c) => ({ f: k(c.h), y: Math.log(c.q11 / c.br), w: c.br }))),
    brotliFromFast: lsq(cs.map((c) => ({ f: k(c.f), y: Math.log(c.q11 / c.fast), w: c.fast }))),
    gzip: lsq(cs.map((c) => ({ f: k(c.g), y: Math.log(c.gz9 / c.gz), w: c.gz }))),
    gzipFromFast: lsq(cs.map((c) => ({ f: k(c.f), y: Math.log(c.gz9 / c.fast), w: c.fast }))),
  };
}

/** Whether the estimate flags the file as made of repeats (its share of the fast output above OUTSIDE_LIMIT). */
function flagged(d) {
  const all = d.chunks.reduce((a, c) => a + c.fast, 0), rich = d.chunks.reduce((a, c) => a + (matchRich(c.f) ? c.fast : 0), 0);
  return rich > OUTSIDE_LIMIT * all;
}

/** The relative errors of the estimate of one file, the chunks sampled for gzip as the estimate samples them. */
export function estimateOf(d, beta) {
  const fast = d.chunks.map((c, i) => ({ bytes: c.fast, length: c.length, f: c.f, ...(i % SAMPLE_EVERY === 0 ? { gz: c.gz, g: c.g, br: c.br, h: c.h } : {}) }));
  const e = estimateFrom(fast, beta);
  return { brotli: e.brotli / d.ex.q11 - 1, gzip: e.gzip / d.ex.gz9 - 1, outside: e.outsideFit, kind: e.byteShare > BYTES_LIMIT ? 'bytes' : 'float' };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const data = await loadRows(process.argv.slice(2));
  const beta = fit(data);
  const pct = (x) => `${(100 * x).toFixed(2)}%`;
  const zero = () => ({ brotli: 0, gzip: 0 });
  const maxIn = { float: zero(), bytes: zero() }, maxOut = { float: zero(), bytes: zero() };
  console.log('file | raw | brotli 11 | fast sum / q11 | in-sample err brotli, gzip | leave-model-out err brotli, gzip | kind');
  const models = [...new Set(data.map((d) => d.model))];
  const outBeta = new Map(models.map((m) => [m, fit(data.filter((d) => d.model !== m))]));
  for (const d of data) {
    const e = estimateOf(d, beta), o = estimateOf(d, outBeta.get(d.model));
    const q1 = d.chunks.reduce((a, c) => a + c.fast, 0);
    // Files with repeats the estimate flags (no tolerance claimed) are shown but not counted in the stated error.
    // The stated errors are per kind of file: ONNX models (float32 weights) and int8-like byte streams (.bin).
    const kind = d.file.endsWith('.bin') ? 'bytes' : 'float';
    if (e.outside <= OUTSIDE_LIMIT) for (const k of ['brotli', 'gzip']) { maxIn[kind][k] = Math.max(maxIn[kind][k], Math.abs(e[k])); maxOut[kind][k] = Math.max(maxOut[kind][k], Math.abs(o[k])); }
    console.log(`${path.basename(d.file)} | ${d.ex.raw} | ${d.ex.q11} | ${(q1 / d.ex.q11).toFixed(4)} | ${pct(e.brotli)}, ${pct(e.gzip)} | ${pct(o.brotli)}, ${pct(o.gzip)} | ${e.kind} (${kind})${e.outside > OUTSIDE_LIMIT ? ` (flagged: ${pct(e.outside)} of the data is repeats)` : ''}`);
  }
  for (const kind of ['float', 'bytes']) console.log(`max |error| over the ${kind} files not flagged, in-sample: brotli ${pct(maxIn[kind].brotli)}, gzip ${pct(maxIn[kind].gzip)}; leave-one-model-out: brotli ${pct(maxOut[kind].brotli)}, gzip ${pct(maxOut[kind].gzip)}`);
  const r = (v) => v.map((x) => +x.toPrecision(6));
  // The stated tolerance is the leave-one-model-out one: what a model the fit has not seen may expect.
  console.log(JSON.stringify({ brotli: r(beta.brotli), brotliFromFast: r(beta.brotliFromFast), gzip: r(beta.gzip), gzipFromFast: r(beta.gzipFromFast), maxError: Object.fromEntries(['float', 'bytes'].map((k) => [k, { brotli: +maxOut[k].brotli.toPrecision(3), gzip: +maxOut[k].gzip.toPrecision(3) }])), files: data.length, flagged: data.filter((d) => estimateOf(d, beta).outside > OUTSIDE_LIMIT).length }));
}
