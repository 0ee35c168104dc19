// The prune command's evaluation parts: --eval (held-out samples) and --metric OUTPUT=KIND, the
// label-free fidelity of every output measured with onnxruntime-node, and the transport size of the
// written files (gzip, brotli). Kept apart from sparsekit-wasm.js so the command file stays a parser
// and a printer.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { makeInputSet, readCalibrationDir, makeOrtRunner, runSet, compareSets, OUTPUT_KINDS, OnnxError } from '../src/onnx/index.js';

/** @typedef {import('../src/onnx/index.js').OnnxModel} OnnxModel */
/** @typedef {import('../src/onnx/index.js').InputSample} InputSample */
/** @typedef {import('../src/onnx/index.js').OrtLike} OrtLike */
/** @typedef {import('../src/onnx/index.js').OutputKind} OutputKind */
/** @typedef {import('../src/onnx/index.js').OutputFidelity} OutputFidelity */
/** @typedef {import('../src/onnx/index.js').FidelityReport} FidelityReport */

/** Bad usage of --eval / --metric (the command exits 2). */
export class EvalUsageError extends Error {}

/** Generated held-out samples when --eval synthetic (seeds disjoint from the calibration set's). */
export const SYNTHETIC_EVAL_COUNT = 8;

/**
 * `--metric OUTPUT=KIND` values (repeatable) as {output: kind}, checked against the model's outputs.
 * @param {string[] | undefined} list
 * @param {OnnxModel} model
 * @returns {Record<string, OutputKind>}
 */
export function parseMetrics(list, model) {
  /** @type {Record<string, OutputKind>} */
  const kinds = {};
  const names = model.outputs.map((o) => o.name);
  for (const s of list ?? []) {
    const i = s.lastIndexOf('=');
    const name = i > 0 ? s.slice(0, i) : '', kind = i > 0 ? s.slice(i + 1) : '';
    if (!name || !kind) throw new EvalUsageError(`--metric takes OUTPUT=KIND (got "${s}")`);
    if (!/** @type {readonly string[]} */ (OUTPUT_KINDS).includes(kind)) throw new EvalUsageError(`--metric ${s}: the kind is one of ${OUTPUT_KINDS.join(', ')}`);
    if (!names.includes(name)) throw new EvalUsageError(`--metric ${s}: the model has no output "${name}" (outputs: ${names.join(', ')})`);
    if (name in kinds && kinds[name] !== kind) throw new EvalUsageError(`--metric names output "${name}" twice (${kinds[name]}, ${kind})`);
    kinds[name] = /** @type {OutputKind} */ (kind); // one of OUTPUT_KINDS (checked above)
  }
  return kinds;
}

/**
 * The sample files of a --calib / --eval directory: top-level .npy / .png and the .npy of each sample folder.
 * @param {string} dir
 */
function sampleFiles(dir) {
  /** @type {fs.Dirent[]} */
  let entries;
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return []; } // the reader reports a bad directory
  /** @type {string[]} */
  const files = [];
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      for (const f of fs.readdirSync(full)) if (f.toLowerCase().endsWith('.npy')) files.push(path.join(full, f));
    } else if (/\.(npy|png)$/i.test(e.name)) files.push(full);
  }
  return files;
}

/** @param {string} f */
const digest = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');

/**
 * Refuses an --eval directory that shares a sample with --calib: the same directory, the same file
 * (by real path) or a copy of one (same bytes). A held-out score measured on calibration data would
 * flatter the pruned model.
 * @param {string} calibDir
 * @param {string} evalDir
 */
export function checkDisjoint(calibDir, evalDir) {
  /** @param {string} p */
  const real = (p) => { try { return fs.realpathSync(p); } catch { return path.resolve(p); } };
  if (real(calibDir) === real(evalDir)) throw new EvalUsageError('--eval and --calib name the same directory: held-out samples must not be calibration samples');
  const calib = sampleFiles(calibDir);
  const paths = new Set(calib.map(real));
  const sizes = new Set(calib.map((f) => fs.statSync(f).size));
  /** @type {Map<string, string> | undefined} */
  let hashes;
  for (const f of sampleFiles(evalDir)) {
    if (paths.has(real(f))) throw new EvalUsageError(`--eval and --calib share ${path.relative(evalDir, f)}: held-out samples must not be calibration samples`);
    if (!sizes.has(fs.statSync(f).size)) continue;
    hashes ??= new Map(calib.map((c) => [digest(c), c]));
    const same = hashes.get(digest(f));
    if (same) throw new EvalUsageError(`--eval ${path.relative(evalDir, f)} is a copy of --calib ${path.relative(calibDir, same)}: held-out samples must not be calibration samples`);
  }
}

/**
 * The held-out samples: generated (`synthetic`) or read from a directory in the --calib formats.
 * @param {OnnxModel} model
 * @param {string} src
 * @returns {Promise<InputSample[]>}
 */
export async function loadEvalSamples(model, src) {
  if (src === 'synthetic') return makeInputSet(model, { count: SYNTHETIC_EVAL_COUNT, set: 'heldOut' });
  try {
    return await readCalibrationDir(src, model);
  } catch (e) {
    if (e instanceof OnnxError) e.message = `--eval: ${e.message.replace(/^calibration directory/, 'directory')}`;
    throw e;
  }
}

/**
 * Runs the original and the pruned model over the samples in onnxruntime-node and measures each
 * output's fidelity. `original` / `pruned` are bytes, or file paths (a model with external data is
 * run from its file, onnxruntime reading the data next to it). Returns the fidelity report with the
 * all-outputs cosine and the time spent in model runs.
 * @param {OrtLike} ort
 * @param {Uint8Array | string} original
 * @param {Uint8Array | string} pruned
 * @param {InputSample[]} samples
 * @param {Record<string, OutputKind>} kinds
 */
export async function measureFidelity(ort, original, pruned, samples, kinds) {
  const runner = makeOrtRunner(ort, { logSeverityLevel: 3 });
  const t0 = Date.now();
  // runSet declares bytes, but hands the model as given to onnxruntime's InferenceSession.create,
  // which takes a file path as well (and then reads external data next to it)
  const reference = await runSet(runner, /** @type {Uint8Array} */ (original), samples);
  const outputs = await runSet(runner, /** @type {Uint8Array} */ (pruned), samples);
  const runSeconds = (Date.now() - t0) / 1000;
  const cmp = compareSets(reference, outputs, { kinds });
  return { ...cmp.fidelity, cosine: cmp.cosine, runSeconds };
}

/** Brotli quality: 11 (what a static host precompresses with) up to 32 MiB, 9 above (q11 runs at ~1 MB/s). */
/** @param {number} bytes */
const brotliQuality = (bytes) => (bytes <= 32 * 1024 ** 2 ? 11 : 9);

/**
 * @param {string[]} files
 * @param {() => import('node:stream').Transform} make
 */
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

/**
 * What the files travel as over HTTP: their raw size and the size of one gzip (level 9) and one
 * brotli stream (quality 11, 9 above 32 MiB) over them in order (model file, then external data).
 * Zeros compress: a pruned float32 model travels smaller although its raw size is unchanged.
 * @param {string[]} files
 */
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

/**
 * The headline of one output's metrics, for the table.
 * @param {OutputFidelity} o
 */
function headline(o) {
  const m = o.metrics, p = (/** @type {number} */ x) => `${(100 * x).toFixed(1)}%`;
  switch (o.kind) {
    case 'classification': return `top-1 ${p(m.top1Agreement)}, top-5 ${p(m.top5Agreement)}, KL ${m.meanKL.toFixed(4)}`;
    case 'detection': return m.f1 === undefined ? (o.detail ?? '') : `box F1 ${m.f1.toFixed(3)} (${m.matched}/${m.referenceBoxes} kept, ${m.prunedBoxes} found), score cosine ${m.scoreCosine.toFixed(3)}`;
    case 'dense-map': return `region F1 ${m.componentF1.toFixed(3)} (${m.matched}/${m.referenceComponents}), pixel IoU ${m.iou.toFixed(3)}`;
    case 'sequence': return `CER vs original ${p(m.cerVsOriginal)}, steps ${p(m.stepAgreement)}, exact ${p(m.exactMatch)}`;
    default: return `cosine ${m.cosine.toFixed(4)}, worst channel #${m.worstChannel} off ${p(m.worstChannelRelError)}`;
  }
}

/**
 * Table rows of a fidelity report: output, kind, score, headline metrics.
 * @param {FidelityReport} report
 */
export function fidelityRows(report) {
  return report.outputs.map((o) => [o.name, o.kind, o.score.toFixed(4), headline(o)]);
}
