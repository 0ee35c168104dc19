// Helpers shared by the command files of bin/commands: argument parsing with one-line usage errors,
// progress lines on stderr, samples from --eval / --calib, onnxruntime-node loading, and the exit
// codes of the CLI (0 done, 1 the model or the run failed, 2 bad usage; always one line on stderr).
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { OnnxError, makeInputSet, readCalibrationDir } from '../../src/onnx/index.js';
import { checkDisjoint, EvalUsageError } from '../fidelity-cli.js';

/** @typedef {import('../../src/onnx/index.js').OnnxModel} OnnxModel */
/** @typedef {import('../../src/onnx/index.js').OrtLike} OrtLike */
/** @typedef {import('../../src/onnx/index.js').InputSample} InputSample */
/**
 * What the CLI reads off a caught value: anything can be thrown, so every field is optional and
 * unknown until checked (a property of a primitive or of an object without it reads undefined).
 * @typedef {{ name?: unknown, message?: unknown, code?: unknown, reason?: unknown, stack?: unknown }} Thrown
 */
/**
 * The options object of node:util parseArgs.
 * @typedef {NonNullable<import('node:util').ParseArgsConfig['options']>} ArgOptions
 */

export const PROG = 'sparsekit-wasm';
export class UsageError extends Error {}
export class RunError extends Error {}

/**
 * Runs a command; its errors become the CLI's exit codes (see the file comment).
 * @param {() => Promise<unknown>} fn
 */
export async function runCommand(fn) {
  try {
    await fn();
  } catch (caught) {
    const e = /** @type {Thrown | null | undefined} */ (caught);
    /** @param {unknown} m */
    const line = (m) => String(m).replace(/\s*\n\s*/g, ' ');
    if (e instanceof UsageError) { process.stderr.write(`${PROG}: ${line(e.message)}\n`); process.exit(2); }
    if (e instanceof RunError) { process.stderr.write(`${PROG}: ${line(e.message)}\n`); process.exit(1); }
    if (e instanceof OnnxError || (e && typeof e.code === 'string' && e.name !== 'Error')) {
      process.stderr.write(`${PROG}: ${line(e.message)}${e.code ? ` [${e.code}]` : ''}\n`);
      process.exit(1);
    }
    process.stderr.write(`${PROG}: unexpected error: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  }
}

/**
 * parseArgs in strict mode with positionals; the values are typed after `options`.
 * @template {ArgOptions} O
 * @param {string[]} args
 * @param {O} options
 */
export function parse(args, options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(String(/** @type {Thrown} */ (e).message).split('\n')[0].replace(/\. To specify a positional.*$/, ''));
  }
}

/**
 * @param {string} name
 * @param {string | undefined} s
 */
export function num(name, s) {
  const x = Number(s);
  if (s === undefined || s === '' || !Number.isFinite(x)) throw new UsageError(`--${name} needs a number (got "${s}")`);
  return x;
}

/**
 * @param {string} name
 * @param {string | undefined} s
 * @param {number} dflt
 */
export function posInt(name, s, dflt) {
  if (s === undefined) return dflt;
  const x = Number(s);
  if (!Number.isInteger(x) || x < 1) throw new UsageError(`--${name} needs a positive integer (got "${s}")`);
  return x;
}

/**
 * "0.25,0.5" -> [0.25, 0.5].
 * @param {string} name
 * @param {string | undefined} s
 */
export function levelList(name, s) {
  const xs = String(s).split(',').map((x) => x.trim()).filter(Boolean).map(Number);
  if (!xs.length || xs.some((x) => !Number.isFinite(x))) throw new UsageError(`--${name} needs a comma-separated list of numbers (got "${s}")`);
  return xs;
}

/**
 * Progress on stderr: one line per step at most every 5% (a redrawn line on a terminal).
 * @param {boolean | undefined} quiet
 * @returns {(st: string, done: number, total: number, label?: string) => void}
 */
export function progressLine(quiet) {
  const tty = process.stderr.isTTY;
  let last = -1, stage = '';
  return (st, done, total, label = '') => {
    if (quiet) return;
    const pct = total ? Math.floor((100 * done) / total) : 100;
    if (tty) {
      const cols = (process.stderr.columns || 100) - 1;
      process.stderr.write(`\r${`${st} ${done}/${total} ${label}`.slice(0, cols).padEnd(cols)}`);
      if (done >= total) process.stderr.write('\n');
    } else if (st !== stage || pct >= last + 5 || done >= total) {
      process.stderr.write(`${st}: ${done}/${total}${label ? ` ${label}` : ''}\n`);
      last = pct; stage = st;
    }
  };
}

/**
 * onnxruntime-node (optional peer dependency). Typed as the package's OrtLike, the part of it the
 * pipeline calls: onnxruntime-node's overloaded declarations of create() and run() include those
 * calls but do not match OrtLike's single signatures, so the namespace is viewed through it (as
 * the playground does with onnxruntime-web).
 * @returns {Promise<OrtLike>}
 */
export async function loadOrt() {
  try {
    const m = await import('onnxruntime-node');
    return /** @type {OrtLike} */ (/** @type {unknown} */ (m.default ?? m));
  } catch (caught) {
    const e = /** @type {Thrown | null | undefined} */ (caught);
    if (e && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND')) throw new RunError('this command runs the model with onnxruntime-node, which is not installed: npm i onnxruntime-node');
    throw new RunError(`onnxruntime-node failed to load: ${e && e.message ? e.message : e}`);
  }
}

/**
 * --eval and --calib samples; the two must not share files.
 * @param {OnnxModel} model
 * @param {{ evalDir: string | undefined, evalCount: number, calibSrc: string | undefined, calibCount: number, needCalib: boolean }} opts
 * @returns {Promise<{ evalSet: InputSample[], calibration: InputSample[] | undefined }>}
 */
export async function readSets(model, { evalDir, evalCount, calibSrc, calibCount, needCalib }) {
  if (!evalDir) throw new UsageError('--eval DIR (held-out samples) is required');
  if (!fs.existsSync(evalDir) || !fs.statSync(evalDir).isDirectory()) throw new UsageError(`--eval ${evalDir} is not a directory`);
  if (calibSrc && calibSrc !== 'synthetic') {
    if (!fs.existsSync(calibSrc) || !fs.statSync(calibSrc).isDirectory()) throw new UsageError(`--calib ${calibSrc} is not a directory`);
    // The one disjointness rule of the CLI (same directory, same files, or byte-identical copies).
    try { checkDisjoint(calibSrc, evalDir); } catch (e) { throw e instanceof EvalUsageError ? new UsageError(e.message) : e; }
  }
  const evalSet = await readCalibrationDir(evalDir, model, { limit: evalCount });
  let calibration;
  if (needCalib) {
    calibration = !calibSrc || calibSrc === 'synthetic' ? makeInputSet(model, { count: calibCount }) : await readCalibrationDir(calibSrc, model, { limit: calibCount });
  }
  return { evalSet, calibration };
}

/**
 * Seconds as 1h02m / 3m07s ('?' when unknown), for ETAs and elapsed times on progress lines.
 * @param {number | undefined} s
 */
export const clock = (s) => (s === undefined ? '?' : s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`);

/**
 * Samples for --calib / --eval: generated (absent or 'synthetic') or read from a directory.
 * @param {string | undefined} src
 * @param {OnnxModel} model
 * @param {number} count
 * @param {'calibration' | 'heldOut'} set
 * @returns {Promise<InputSample[]>}
 */
export async function samplesOf(src, model, count, set) {
  return !src || src === 'synthetic' ? makeInputSet(model, { count, set }) : readCalibrationDir(src, model, { limit: count });
}

/**
 * The --calib / --eval pair of a training command: each a directory or 'synthetic'; two directories
 * must not share files (the one disjointness rule of the CLI).
 * @param {string | undefined} calib
 * @param {string | undefined} evalDir
 */
export function checkTrainingSets(calib, evalDir) {
  if (calib === '' || evalDir === '') throw new UsageError('--calib / --eval need a directory or "synthetic"');
  for (const [k, d] of [['calib', calib], ['eval', evalDir]]) {
    if (d && d !== 'synthetic' && !(fs.existsSync(d) && fs.statSync(d).isDirectory())) throw new UsageError(`--${k} ${d} is not a directory`);
  }
  if (calib && evalDir && calib !== 'synthetic' && evalDir !== 'synthetic') {
    try { checkDisjoint(calib, evalDir); } catch (e) { throw e instanceof EvalUsageError ? new UsageError(e.message) : e; }
  }
}

/**
 * The distillation options two training commands share: --features N|NAME,NAME (matched block
 * outputs), --feature-weight W, --loss logits|kl.
 * @param {{ features?: string, 'feature-weight'?: string, loss?: string }} values
 * @returns {{ features?: number | string[], featureWeight?: number, softmaxLoss?: 'logits' | 'kl' }}
 */
export function distillFlags(values) {
  /** @type {number | string[] | undefined} */
  let features;
  const f = values.features;
  if (f !== undefined) {
    if (/^\d+$/.test(f)) features = Number(f);
    else {
      features = f.split(',').map((x) => x.trim());
      if (!f.trim() || features.some((x) => !x)) throw new UsageError(`--features takes a count or a list of tensor names (got "${f}")`);
    }
  }
  const featureWeight = values['feature-weight'] === undefined ? undefined : num('feature-weight', values['feature-weight']);
  if (featureWeight !== undefined && !(featureWeight > 0)) throw new UsageError(`--feature-weight must be > 0 (got ${featureWeight})`);
  if (values.loss !== undefined && !['logits', 'kl'].includes(values.loss)) throw new UsageError(`--loss must be logits or kl (got "${values.loss}")`);
  return { features, featureWeight, softmaxLoss: /** @type {'logits' | 'kl' | undefined} */ (values.loss) };
}

/**
 * Progress of a training run on stderr: a line at most every 2 s and at the end of each phase,
 * with the epoch, the loss, the fidelity, the ETA and the elapsed time; `extra` adds a field.
 * @template {{ phase: string, step: number, steps: number, epoch?: number, epochs?: number, loss?: number, fidelity?: number, eta?: number }} P
 * @param {boolean | undefined} quiet
 * @param {(p: P) => string} [extra]
 * @returns {(p: P) => void}
 */
export function trainingProgress(quiet, extra = () => '') {
  const t0 = Date.now();
  let lastLine = 0;
  return (p) => {
    if (quiet) return;
    const t = Date.now();
    if (p.step !== p.steps && t - lastLine < 2000) return;
    lastLine = t;
    const ep = p.epoch ? ` epoch ${p.epoch}${p.epochs !== undefined && Number.isFinite(p.epochs) ? `/${p.epochs}` : ''}` : '';
    const loss = p.loss !== undefined ? ` loss ${p.loss.toPrecision(4)}` : '';
    const fid = p.fidelity !== undefined ? ` fidelity ${p.fidelity.toFixed(4)}` : '';
    const eta = p.eta !== undefined ? ` ETA ${clock(p.eta)}` : '';
    process.stderr.write(`${p.phase}${ep} ${p.step}/${p.steps}${extra(p)}${loss}${fid}${eta} [${clock((t - t0) / 1000)}]\n`);
  };
}

/**
 * Ctrl-C during a long run: aborts the returned signal (the run stops at its next step and writes
 * nothing); `release()` removes the handler.
 * @param {boolean | undefined} quiet
 */
export function interruptible(quiet) {
  const ac = new AbortController();
  const onSigint = () => { ac.abort(); if (!quiet) process.stderr.write('\ninterrupted: stopping, nothing will be written\n'); };
  process.on('SIGINT', onSigint);
  return { signal: ac.signal, release: () => process.off('SIGINT', onSigint) };
}
