// Fits RATIO_FIT of pkg-template/src/onnx/transport-fit.ts on a corpus of model files
// (bench/transport/transport-corpus.sh) and states the error it carries. Per file: the estimate's
// sample (kindParts: each kind's blocks, compressed by the fast compressors), the same samples at
// brotli quality 11 and gzip level 9 (the fit's targets: log(11 / fast) per kind, least squares
// weighted by each kind's share of its file, so that every file counts alike), and the whole file's
// exact sizes (bench/transport/transport-exact.mjs's cache, computed if absent) that the estimate
// is checked against: in-sample, and leave-one-model-out (fitted without any variant of that model:
// what a model the fit has not seen may expect, the tolerance the estimate states). The samples'
// quality-11 sizes are cached in bench/out/transport-fit.jsonl. Prints a table per file, then the
// object to paste into transport-fit.ts. Usage: node bench/transport/transport-fit.mjs FILE...   (needs the build)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { readCache, exactSizes, sha } from './transport-exact.mjs';
import { kindParts, estimateFrom, domainOf, OUTSIDE_LIMIT } from '../../pkg/src/onnx/transport-size.js';

const C = zlib.constants;
const FIT_CACHE = new URL('../out/transport-fit.jsonl', import.meta.url).pathname;

/** Solves the weighted normal equations (X'WX) b = X'Wy (a small ridge keeps kinds absent from the data at 0). */
function lsq(rows, k) {
  const A = Array.from({ length: k }, () => new Float64Array(k + 1));
  for (const { f, y, w } of rows) for (let i = 0; i < k; i++) { for (let j = 0; j < k; j++) A[i][j] += w * f[i] * f[j]; A[i][k] += w * f[i] * y; }
  for (let i = 0; i < k; i++) A[i][i] += 1e-6;
  for (let c = 0; c < k; c++) {
    let p = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(A[r][c]) > Math.abs(A[p][c])) p = r;
    [A[c], A[p]] = [A[p], A[c]];
    for (let r = 0; r < k; r++) if (r !== c) { const m = A[r][c] / A[c][c]; for (let j = c; j <= k; j++) A[r][j] -= m * A[c][j]; }
  }
  return Array.from({ length: k }, (_, i) => A[i][k] / A[i][i]);
}

function readFitCache() {
  const m = new Map();
  if (fs.existsSync(FIT_CACHE)) for (const line of fs.readFileSync(FIT_CACHE, 'utf8').split('\n')) if (line) { const r = JSON.parse(line); m.set(r.key, r.sizes); }
  return m;
}

/** Quality 11 and gzip 9 of a sample (cached by its content). */
function slowSizes(bytes, cache) {
  const key = sha(bytes);
  if (cache.has(key)) return cache.get(key);
  const sizes = { q11: zlib.brotliCompressSync(bytes, { params: { [C.BROTLI_PARAM_QUALITY]: 11, [C.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length, gz9: zlib.deflateRawSync(bytes, { level: 9 }).length };
  fs.mkdirSync(path.dirname(FIT_CACHE), { recursive: true });
  fs.appendFileSync(FIT_CACHE, JSON.stringify({ key, sizes }) + '\n');
  cache.set(key, sizes);
  return sizes;
}

/** The measured path's sub-sample when the bench forces it on every file (the default budget gives it only to large files). */
export const FORCED_MEASURE = 128 * 1024;

export async function loadData(files, opts = {}) {
  const exact = readCache(), fitCache = readFitCache();
  const out = [];
  for (const f of files) {
    const ex = await exactSizes(f, exact);
    const t = performance.now();
    const { parts } = await kindParts([f], opts);
    const ms = performance.now() - t;
    for (const p of parts) { p.slow = slowSizes(p.sample, fitCache); p.length = p.sample.length; delete p.sample; }
    out.push({ file: f, model: path.basename(f).split('.')[0], ex, parts, ms });
  }
  return out;
}

const isFlagged = (d) => estimateFrom(d.parts, { brotli: d.parts[0].f.map(() => 0), gzip: d.parts[0].f.map(() => 0) }).outsideFit > OUTSIDE_LIMIT;

export function fit(data) {
  const k = data[0].parts[0].f.length, rb = [], rg = [];
  for (const d of data) {
    if (isFlagged(d)) continue;
    const tb = d.parts.reduce((a, p) => a + p.brotli, 0), tg = d.parts.reduce((a, p) => a + p.gzip, 0);
    for (const p of d.parts) {
      if (p.rich) continue;
      rb.push({ f: p.f, y: Math.log(p.slow.q11 / p.brotliSample), w: p.brotli / tb });
      rg.push({ f: p.f, y: Math.log(p.slow.gz9 / p.gzipSample), w: p.gzip / tg });
    }
  }
  return { brotli: lsq(rb, k), gzip: lsq(rg, k) };
}

export function errorsOf(d, beta) {
  const e = estimateFrom(d.parts, beta);
  return { brotli: e.brotli / d.ex.q11 - 1, gzip: e.gzip / d.ex.gz9 - 1, outside: e.outsideFit, kind: domainOf(e) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  const data = await loadData(files);
  // The measured path on every file (a sub-sample of FORCED_MEASURE bytes per kind's budget): what large files get.
  const forced = await loadData(files, { measureBytes: FORCED_MEASURE });
  const beta = fit(data);
  const pct = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}%`;
  const zero = () => ({ brotli: 0, gzip: 0 });
  const maxIn = { float: zero(), bytes: zero(), measured: zero() }, maxOut = { float: zero(), bytes: zero(), measured: zero() };
  const keep = (m, e) => { for (const k of ['brotli', 'gzip']) m[k] = Math.max(m[k], Math.abs(e[k])); };
  console.log('| file | raw | brotli 11 | gzip 9 | in-sample brotli, gzip | leave-model-out brotli, gzip | stated as | measured path brotli, gzip | sample ms, measured ms |');
  console.log('|---|---:|---:|---:|---:|---:|---|---:|---:|');
  const models = [...new Set(data.map((d) => d.model))];
  const outBeta = new Map(models.map((m) => [m, fit(data.filter((d) => d.model !== m))]));
  data.forEach((d, i) => {
    const e = errorsOf(d, beta), o = errorsOf(d, outBeta.get(d.model)), m = errorsOf(forced[i], outBeta.get(d.model));
    const flagged = e.outside > OUTSIDE_LIMIT;
    if (!flagged) { keep(maxIn[e.kind], e); keep(maxOut[o.kind], o); if (m.kind === 'measured') keep(maxOut.measured, m); }
    console.log(`| ${path.basename(d.file)} | ${d.ex.raw} | ${d.ex.q11} | ${d.ex.gz9} | ${pct(e.brotli)}, ${pct(e.gzip)} | ${pct(o.brotli)}, ${pct(o.gzip)} | ${o.kind}${flagged ? ` (flagged: ${pct(e.outside)} outside the fit)` : ''} | ${pct(m.brotli)}, ${pct(m.gzip)}${m.kind === 'measured' ? '' : ' (part fitted)'} | ${d.ms.toFixed(0)}, ${forced[i].ms.toFixed(0)} |`);
  });
  for (const kind of ['float', 'bytes', 'measured']) console.log(`max |error| over the files stated as ${kind}, not flagged, in-sample: brotli ${pct(maxIn[kind].brotli)}, gzip ${pct(maxIn[kind].gzip)}; leave-one-model-out: brotli ${pct(maxOut[kind].brotli)}, gzip ${pct(maxOut[kind].gzip)}`);
  const r = (v) => v.map((x) => +x.toPrecision(6));
  const up = (x) => Math.ceil(x * 1000) / 1000; // the stated tolerance, rounded up to 0.1%
  console.log(JSON.stringify({ brotli: r(beta.brotli), gzip: r(beta.gzip), maxError: Object.fromEntries(['float', 'bytes', 'measured'].map((k) => [k, { brotli: up(maxOut[k].brotli), gzip: up(maxOut[k].gzip) }])), files: data.length, flagged: data.filter(isFlagged).length }));
}
