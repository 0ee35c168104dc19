// Bounds on what a file may make the reader build, so that memory and time stay proportional to
// the bytes really present. Overridable per call (ParseOptions.limits) for unusual models.
import { OnnxError } from './errors.js';

/** Limits the reader enforces before it decodes or walks a model. */
export interface OnnxLimits {
  /**
   * Nesting of protobuf messages. A subgraph level takes three (Graph > Node > Attribute) and a
   * nested TypeProto one per level; the decoder recurses once per level.
   */
  maxMessageDepth: number;
  /** Nesting of subgraphs (If / Loop / Scan bodies inside bodies). */
  maxSubgraphDepth: number;
  /**
   * Objects the decoder would create (messages, strings and byte fields, 64-bit integers), at most.
   * A two-byte empty message becomes an object of about 200 bytes of heap.
   */
  maxObjects: number;
  /**
   * Bytes of file per decoded object beyond the first FREE_OBJECTS: with 8, a file of tiny entries
   * claims at most about 25 times its size in heap (real models: hundreds of bytes per object with
   * their weights inline, tens without).
   */
  bytesPerObject: number;
}

/** Objects any file may decode into, whatever its size. */
export const FREE_OBJECTS = 1 << 16;

export const DEFAULT_LIMITS: OnnxLimits = {
  maxMessageDepth: 100,
  maxSubgraphDepth: 16,
  maxObjects: 8_000_000,
  bytesPerObject: 8,
};

/**
 * A tensor with no elements (a 0 among its dims) holds no bytes that could vouch for its other
 * dims; the product of those stays under this bound, so code that walks a dim of it stays short.
 */
export const EMPTY_TENSOR_DIM_PRODUCT = 1 << 20;

export function limitsOf(partial?: Partial<OnnxLimits>): OnnxLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const k of Object.keys(DEFAULT_LIMITS) as (keyof OnnxLimits)[]) {
    const v = partial?.[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v) || v < 1) throw new OnnxError('bad_option', `limits.${k} must be a positive integer (got ${v})`, 'invalid_arguments');
    out[k] = v;
  }
  return out;
}
