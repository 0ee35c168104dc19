// Where the CLI's samples and onnxruntime come from: --calib / --eval (a directory, or generated),
// the rule that held-out samples are not calibration samples, --metric, and onnxruntime-node
// (an optional peer dependency, loaded only by the jobs that run the model).
import fs from 'node:fs';
import path from 'node:path';
import { makeInputSet, readCalibrationDir, readTextSamples, checkDisjointSamples, OUTPUT_KINDS, OnnxError, JOB_DEFAULTS } from 'sparsekit-wasm/onnx';
import { UsageError, RunError } from './errors.js';

/** Tokens per text sample unless --seq-len or the model's position table says otherwise. */
const DEFAULT_SEQ_LEN = 256;

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

/**
 * Refuses an --eval directory that is the --calib directory (a held-out score measured on calibration
 * data would flatter the pruned model); shared samples are found once both are read (checkSamples).
 * @param {string} calibDir
 * @param {string} evalDir
 */
export function checkDisjoint(calibDir, evalDir) {
  /** @param {string} p */
  const real = (p) => { try { return fs.realpathSync(p); } catch { return path.resolve(p); } };
  if (real(calibDir) === real(evalDir)) throw new UsageError('--eval and --calib name the same directory: held-out samples must not be calibration samples');
}

/**
 * The samples of --calib or --eval: generated ('synthetic', seeds disjoint between the two sets) or
 * read from a directory (the first `count`, or all).
 * @param {'calib' | 'eval'} flag
 * @param {string} src
 * @param {OnnxModel} model
 * @param {number | undefined} count
 * @param {{ tokenizer?: string, seqLen?: number, model?: string }} [text] text files: the tokenizer (default: tokenizer.json beside the model file), tokens per sample
 * @param {boolean} [training] the samples train (recovery, prox): generated ones are checked against the job's bound on training inputs before they are made
 * @returns {Promise<InputSample[]>}
 */
export async function readSamples(flag, src, model, count, text = {}, training = false) {
  if (src === '') throw new UsageError(`--${flag} needs a directory or "synthetic"`);
  if (/\.(txt|jsonl)$/i.test(src)) {
    // text for a text model: windows (decoder) or lines (encoder) tokenized with the model's tokenizer
    const tokenizer = parsedTokenizer(text);
    if (!tokenizer) throw new UsageError(`--${flag} ${src} is text: give --tokenizer tokenizer.json (none beside the model)`);
    const set = await readTextSamples(src, { tokenizer, seqLen: text.seqLen ?? DEFAULT_SEQ_LEN, inputs: model.inputs, outputs: model.outputs, limit: count });
    return set.samples;
  }
  if (src === 'synthetic') {
    const n = count ?? (flag === 'eval' ? JOB_DEFAULTS.generatedEvalCount : JOB_DEFAULTS.calibrationCount);
    const set = flag === 'eval' ? 'heldOut' : 'calibration';
    // a training run's bound is checked from the shapes before n are made (the job checks the same bound on what it is given)
    try {
      return makeInputSet(model, { count: n, set, maxBytes: training ? JOB_DEFAULTS.maxTrainingBytes : undefined });
    } catch (e) {
      if (training && e instanceof OnnxError && e.reason === 'too_large') throw new UsageError(`--${flag}-count ${n} for training: ${e.message}`);
      throw e;
    }
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
  if (calib && evalSrc && calib !== 'synthetic' && evalSrc !== 'synthetic' && !/\.(txt|jsonl)$/i.test(calib) && !/\.(txt|jsonl)$/i.test(evalSrc)) checkDisjoint(calib, evalSrc);
}

/**
 * The held-out samples against the calibration samples, sample by sample (all inputs of a sample
 * together: padded sentences share a mask file without being copies of each other).
 * @param {InputSample[] | undefined} calibration
 * @param {InputSample[] | undefined} heldOut
 */
export function checkSamples(calibration, heldOut) {
  if (!calibration || !heldOut) return;
  try { checkDisjointSamples(calibration, heldOut); } catch (e) {
    if (e instanceof OnnxError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * The tokenizer the job zeroes unreachable token rows with (PruneJob.tokenizer): parsed when every
 * sample source given is text it tokenizes, so that no sample holds an id it cannot produce (a
 * generated or a directory sample set may hold any id); undefined otherwise.
 * @param {{ tokenizer?: string, model?: string }} text textOptions' result
 * @param {(string | undefined)[]} sources --calib and --eval as the job reads them
 * @returns {Record<string, unknown> | undefined}
 */
export function jobTokenizer(text, sources) {
  const given = sources.filter((s) => s !== undefined);
  if (!given.length || !given.every((s) => /\.(txt|jsonl)$/i.test(/** @type {string} */ (s)))) return undefined;
  return parsedTokenizer(text);
}

/** @type {WeakMap<object, Record<string, unknown> | undefined>} */
const parsed = new WeakMap();

/**
 * The tokenizer text files are read with (--tokenizer, or tokenizer.json beside the model), parsed
 * once per run: the samples of --calib and --eval and the job share it. Undefined when there is none.
 * @param {{ tokenizer?: string, model?: string }} text textOptions' result
 * @returns {Record<string, unknown> | undefined}
 */
function parsedTokenizer(text) {
  if (parsed.has(text)) return parsed.get(text);
  const file = text.tokenizer ?? (text.model ? path.join(path.dirname(text.model), 'tokenizer.json') : undefined);
  let json;
  if (file && fs.existsSync(file)) {
    try { json = JSON.parse(fs.readFileSync(file, 'utf8')); } catch (e) { throw new UsageError(`--tokenizer ${file}: ${e instanceof SyntaxError ? 'not JSON' : /** @type {Error} */ (e).message}`); }
  }
  parsed.set(text, json);
  return json;
}

/**
 * --tokenizer and --seq-len for text files given to --calib / --eval.
 * @param {Record<string, unknown>} values
 * @param {{ model: string, tokenizer?: string }} input the model file (its folder may hold tokenizer.json), and a model folder's tokenizer
 */
export function textOptions(values, input) {
  const given = values['seq-len'] === undefined ? undefined : Number(values['seq-len']);
  if (given !== undefined && !(Number.isInteger(given) && given >= 2)) throw new UsageError(`--seq-len needs an integer >= 2 (got "${values['seq-len']}")`);
  // by default no longer than the model's position table (a small BERT's 128), which longer samples would overrun
  const positions = configPositions(input);
  const seqLen = given ?? (positions !== undefined && positions < DEFAULT_SEQ_LEN ? positions : undefined);
  return { tokenizer: /** @type {string | undefined} */ (values.tokenizer) ?? input.tokenizer, seqLen, model: input.model };
}

/**
 * The positions a text model takes, from the config.json of its folder (or beside the file):
 * max_position_embeddings (BERT, Llama), n_positions (GPT-2); undefined without one.
 * @param {{ model: string, folder?: string }} input
 * @returns {number | undefined}
 */
function configPositions(input) {
  for (const dir of [input.folder, path.dirname(input.model)]) {
    const file = dir ? path.join(dir, 'config.json') : undefined;
    if (!file || !fs.existsSync(file)) continue;
    let cfg;
    try { cfg = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { return undefined; }
    const n = cfg?.max_position_embeddings ?? cfg?.n_positions;
    return Number.isInteger(n) && n >= 2 ? n : undefined;
  }
  return undefined;
}
