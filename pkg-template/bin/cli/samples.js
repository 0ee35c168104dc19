// Where the CLI's samples and onnxruntime come from: --calib / --eval (a directory, or generated),
// the rule that held-out samples are not calibration samples, --metric, and onnxruntime-node
// (an optional peer dependency, loaded only by the jobs that run the model).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { makeInputSet, readCalibrationDir, OUTPUT_KINDS, OnnxError, JOB_DEFAULTS } from 'sparsekit-wasm/onnx';
import { UsageError, RunError } from './errors.js';

/** @typedef {import('sparsekit-wasm/onnx').OnnxModel} OnnxModel */
/** @typedef {import('sparsekit-wasm/onnx').OrtLike} OrtLike */
/** @typedef {import('sparsekit-wasm/onnx').InputSample} InputSample */
/** @typedef {import('sparsekit-wasm/onnx').OutputKind} OutputKind */
/** @typedef {import('./errors.js').Thrown} Thrown */

/**
 * onnxruntime-node, typed as the package's OrtLike (its overloaded create() / run() include the
 * calls the module makes but do not match OrtLike's single signatures).
 * @returns {Promise<OrtLike>}
 */
export async function loadOrt() {
  try {
    const m = await import('onnxruntime-node');
    return /** @type {OrtLike} */ (/** @type {unknown} */ (m.default ?? m));
  } catch (caught) {
    const e = /** @type {Thrown | null | undefined} */ (caught);
    if (e && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND')) throw new RunError('this job runs the model with onnxruntime-node, which is not installed: npm i onnxruntime-node');
    throw new RunError(`onnxruntime-node failed to load: ${e && e.message ? e.message : e}`);
  }
}

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
    if (!name || !kind) throw new UsageError(`--metric takes OUTPUT=KIND (got "${s}")`);
    if (!/** @type {readonly string[]} */ (OUTPUT_KINDS).includes(kind)) throw new UsageError(`--metric ${s}: the kind is one of ${OUTPUT_KINDS.join(', ')}`);
    if (!names.includes(name)) throw new UsageError(`--metric ${s}: the model has no output "${name}" (outputs: ${names.join(', ')})`);
    if (name in kinds && kinds[name] !== kind) throw new UsageError(`--metric names output "${name}" twice (${kinds[name]}, ${kind})`);
    kinds[name] = /** @type {OutputKind} */ (kind);
  }
  return kinds;
}

/** The sample files of a directory: top-level .npy / .png and the .npy of each sample folder. @param {string} dir */
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
  const refuse = (/** @type {string} */ m) => { throw new UsageError(`${m}: held-out samples must not be calibration samples`); };
  if (real(calibDir) === real(evalDir)) refuse('--eval and --calib name the same directory');
  const calib = sampleFiles(calibDir);
  const paths = new Set(calib.map(real));
  const sizes = new Set(calib.map((f) => fs.statSync(f).size));
  /** @type {Map<string, string> | undefined} */
  let hashes;
  for (const f of sampleFiles(evalDir)) {
    if (paths.has(real(f))) refuse(`--eval and --calib share ${path.relative(evalDir, f)}`);
    if (!sizes.has(fs.statSync(f).size)) continue;
    hashes ??= new Map(calib.map((c) => [digest(c), c]));
    const same = hashes.get(digest(f));
    if (same) refuse(`--eval ${path.relative(evalDir, f)} is a copy of --calib ${path.relative(calibDir, same)}`);
  }
}

/**
 * The samples of --calib or --eval: generated ('synthetic', seeds disjoint between the two sets) or
 * read from a directory (the first `count`, or all).
 * @param {'calib' | 'eval'} flag
 * @param {string} src
 * @param {OnnxModel} model
 * @param {number | undefined} count
 * @returns {Promise<InputSample[]>}
 */
export async function readSamples(flag, src, model, count) {
  if (src === '') throw new UsageError(`--${flag} needs a directory or "synthetic"`);
  if (src === 'synthetic') {
    const n = count ?? (flag === 'eval' ? JOB_DEFAULTS.generatedEvalCount : JOB_DEFAULTS.calibrationCount);
    return makeInputSet(model, { count: n, set: flag === 'eval' ? 'heldOut' : 'calibration' });
  }
  try {
    return await readCalibrationDir(src, model, count === undefined ? {} : { limit: count });
  } catch (e) {
    if (e instanceof OnnxError && flag === 'eval') e.message = `--eval: ${e.message.replace(/^calibration directory/, 'directory')}`;
    throw e;
  }
}

/**
 * --calib and --eval as given, checked before any model is read: each a directory or 'synthetic',
 * and two directories without a sample in common.
 * @param {string | undefined} calib
 * @param {string | undefined} evalSrc
 */
export function checkSources(calib, evalSrc) {
  for (const [k, d] of [['calib', calib], ['eval', evalSrc]]) {
    if (d === '') throw new UsageError(`--${k} needs a directory or "synthetic"`);
  }
  if (calib && evalSrc && calib !== 'synthetic' && evalSrc !== 'synthetic') checkDisjoint(calib, evalSrc);
}
