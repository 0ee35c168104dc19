// The channel options, checked in one place. planChannels, removeChannels and the calibrated removal
// all take ChannelOptions and resolve them here once (a resolved value passes through unchanged).
import { OnnxError } from '../errors.js';
import { checkSparsity } from '../prune.js';
import type { ChannelOptions, HeadUnit } from './types.js';

const RESOLVED = Symbol('resolved channel options');

export interface ResolvedChannelOptions extends ChannelOptions {
  fraction: number;
  scope: 'layer' | 'global';
  roundTo: number;
  apply: 'remove' | 'mask' | 'constant';
  scoreSlices: 'all' | 'consumers';
  heads: HeadUnit;
  fold: boolean;
  readonly [RESOLVED]: true;
}

export function resolveChannelOptions(opts: ChannelOptions): ResolvedChannelOptions {
  if ((opts as Partial<ResolvedChannelOptions>)[RESOLVED]) return opts as ResolvedChannelOptions;
  if (!opts || typeof opts !== 'object') throw new OnnxError('unsupported', 'channel options must be an object', 'invalid_arguments');
  const fraction = checkSparsity(opts.fraction, 'channel fraction');
  if (fraction >= 1) throw new OnnxError('unsupported', 'the channel fraction must be below 1', 'invalid_sparsity');
  const scope = opts.scope ?? 'layer';
  if (scope !== 'layer' && scope !== 'global') throw new OnnxError('unsupported', `scope must be layer or global (got "${String(scope)}")`, 'invalid_arguments');
  const roundTo = opts.roundTo ?? 8;
  if (!Number.isInteger(roundTo) || roundTo < 1) throw new OnnxError('unsupported', `roundTo must be a positive integer (got ${roundTo})`, 'invalid_value');
  const apply = opts.apply ?? 'remove';
  if (apply !== 'remove' && apply !== 'mask' && apply !== 'constant') throw new OnnxError('unsupported', `apply must be remove, mask or constant (got "${String(apply)}")`, 'invalid_arguments');
  const scoreSlices = opts.scoreSlices ?? 'all';
  if (scoreSlices !== 'all' && scoreSlices !== 'consumers') throw new OnnxError('unsupported', `scoreSlices must be all or consumers (got "${String(scoreSlices)}")`, 'invalid_arguments');
  const heads = opts.heads ?? 'groups';
  if (heads !== 'groups' && heads !== 'query') throw new OnnxError('unsupported', `heads must be groups or query (got "${String(heads)}")`, 'invalid_arguments');
  if (opts.filter !== undefined && typeof opts.filter !== 'function') throw new OnnxError('unsupported', 'filter must be a function', 'invalid_arguments');
  const out = { ...opts, fraction, scope, roundTo, apply, scoreSlices, heads, fold: opts.fold !== false } as ResolvedChannelOptions;
  // Not enumerable: a copy with changed fields ({ ...resolved, keep }) is checked again.
  Object.defineProperty(out, RESOLVED, { value: true, enumerable: false });
  return out;
}
