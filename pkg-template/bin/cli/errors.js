// The CLI's errors and its one way out: exit 0 done, 1 the model or the run failed, 2 bad usage,
// 130 interrupted; always one line on stderr, with the error's code and, from the ONNX layer, its
// reason. A JobError (an option of the job that cannot be right) is a usage error in the words of
// the flag that set it.
import { OnnxError, JobError } from 'sparsekit-wasm/onnx';
import { flagOf } from './options.js';

export const PROG = 'sparsekit-wasm';

/** Bad usage: exit 2. */
export class UsageError extends Error {}
/** A run that cannot proceed: exit 1. */
export class RunError extends Error {}

/**
 * What the CLI reads off a caught value: anything can be thrown, so every field is optional.
 * @typedef {{ name?: unknown, message?: unknown, code?: unknown, reason?: unknown, stack?: unknown, syscall?: unknown }} Thrown
 */

/** @param {unknown} m */
const line = (m) => String(m).replace(/\s*\n\s*/g, ' ');

/**
 * The exit code and the one line for a caught value.
 * @param {unknown} caught
 * @returns {{ code: number, message: string }}
 */
export function describe(caught) {
  const e = /** @type {Thrown | null | undefined} */ (caught);
  if (e instanceof UsageError) return { code: 2, message: line(e.message) };
  if (e instanceof RunError) return { code: 1, message: line(e.message) };
  if (e instanceof JobError) {
    const flag = flagOf(e.option);
    return { code: 2, message: line(flag ? `${flag} ${e.detail}` : e.message) };
  }
  if (e instanceof OnnxError) return { code: 1, message: `${line(e.message)} [${e.code}${e.reason ? `, ${e.reason}` : ''}]` };
  if (e && typeof e.code === 'string' && e.name !== 'Error') return { code: 1, message: `${line(e.message)} [${e.code}]` };
  // The system's refusals (a missing directory, a full disk, no permission): the environment's, not a bug.
  if (e && typeof e.code === 'string' && /^E[A-Z0-9]+$/.test(e.code) && typeof e.syscall === 'string') return { code: 1, message: `${line(e.message)} [${e.code}]` };
  // Anything else is a bug: one line still (the stack with SPARSEKIT_DEBUG=1).
  const what = e instanceof RangeError ? 'out of memory or nested too deep' : 'unexpected error';
  const detail = process.env.SPARSEKIT_DEBUG && e && e.stack ? e.stack : `${e && e.name ? `${e.name}: ` : ''}${e && e.message !== undefined ? e.message : e}`;
  return { code: 1, message: `${what}: ${line(detail)} (a bug: please report it with the model)` };
}

/**
 * Runs a command and turns what it throws into the exit code and one line.
 * @param {() => Promise<unknown>} fn
 */
export async function run(fn) {
  try {
    await fn();
  } catch (caught) {
    const { code, message } = describe(caught);
    process.stderr.write(`${PROG}: ${message}\n`);
    process.exit(code);
  }
}
