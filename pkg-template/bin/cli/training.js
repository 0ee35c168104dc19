// The training flags (prune --recover / --prox, recover), read in one place: both commands hand the
// same options to the package, and a flag is checked the same way wherever it is given.
import { num, posInt } from './args.js';
import { UsageError } from './errors.js';

/** The flags that only mean something when the run trains. */
export const TRAINING_FLAGS = ['epochs', 'minutes', 'lr', 'batch', 'features'];

/**
 * @param {Record<string, string | boolean | string[] | undefined>} values
 * @returns {{ epochs?: number, minutes?: number, lr?: number, batchSize?: number, features?: number | string[], schedule?: 'constant' | 'cosine' }}
 */
export function trainingOptions(values) {
  const minutes = values.minutes === undefined ? undefined : num('minutes', values.minutes);
  if (minutes !== undefined && !(minutes > 0)) throw new UsageError(`--minutes must be > 0 (got ${minutes})`);
  // --lr LR (constant over the run) or cosine:LR (LR the schedule's peak): the lr and its course are one setting
  const m = values.lr === undefined ? undefined : /** @type {RegExpExecArray} */ (/^(?:([a-z]+):)?(.*)$/.exec(String(values.lr))); // the pattern matches any string
  if (m?.[1] !== undefined && m[1] !== 'constant' && m[1] !== 'cosine') throw new UsageError(`--lr takes LR, constant:LR or cosine:LR (got "${values.lr}")`);
  const lr = m === undefined ? undefined : num('lr', m[2]);
  if (lr !== undefined && !(lr > 0)) throw new UsageError(`--lr must be > 0 (got ${lr})`);
  const schedule = /** @type {'constant' | 'cosine' | undefined} */ (m?.[1]);
  return {
    epochs: values.epochs === undefined ? undefined : posInt('epochs', values.epochs),
    minutes, lr, schedule,
    batchSize: values.batch === undefined ? undefined : posInt('batch', values.batch),
    features: values.features === undefined ? undefined : featuresOf(String(values.features)),
  };
}

/** --features N|A,B. @param {string} f @returns {number | string[]} */
function featuresOf(f) {
  if (/^\d+$/.test(f) && Number(f) >= 1) return Number(f);
  const names = f.split(',').map((x) => x.trim());
  if (!f.trim() || /^\d+$/.test(f) || names.some((x) => !x)) throw new UsageError(`--features takes a count or a list of tensor names (got "${f}")`);
  return names;
}
