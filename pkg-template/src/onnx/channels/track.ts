// A Track: the channels a value carries along one of its axes. Rules read the tracks of a node's
// inputs and set the tracks of its outputs.
import type { Hop } from './types.js';

export interface Track {
  /** Channel ids, one per carried channel (an id may appear twice: a value concatenated with itself). */
  ids: number[];
  /** Position of ids[c] along the axis, in units of `span` (a Split piece, or a Concat with a value that carries no channels, leaves gaps). */
  at: number[];
  /** Extent of the axis in units of `span` (at least every at[c] + 1). */
  size: number;
  /** Channel axis: >= 0 when the rank is known, else negative (from the end). */
  axis: number;
  rank?: number;
  /** Channel c spans positions [at[c]·span, (at[c]+1)·span) of the axis (after a Flatten, or heads merged back); 1 otherwise. */
  span: number;
  /** Set by Flatten / Reshape(…, -1): span is resolved by the consumer's K. */
  flat?: boolean;
  /** Channel c's (spatially constant) value when its producers' filters are zero. */
  value?: (c: number) => number | undefined;
  /** K/V heads repeated for grouped-query attention: where the graph writes the repeat (rules/repeat.ts). */
  repeat?: RepeatSite;
}

/** An entry of an integer vector, as one use reads it (rewritten through that use). */
export interface ShapeEntry { tensor: string; index: number; use: Hop[] }

/**
 * Where a K/V repeat is written: entries that count the copies (n_rep: the Expand's shape entry,
 * torch's factor in Shape(k)[1] · n_rep) and entries that count the merged heads (Hkv · n_rep: the
 * Reshape's constant). When query heads go within their KV groups, these are the counts that shrink.
 */
export interface RepeatSite { copies: ShapeEntry[]; merged: ShapeEntry[] }

/** A track whose channels fill the axis in order. */
export function denseTrack(ids: number[], axis: number, rank: number | undefined, value?: Track['value']): Track {
  return { ids, at: ids.map((_, c) => c), size: ids.length, axis, rank, span: 1, value };
}

/** The channel axis counted from the start, when it can be told. */
export const positiveAxis = (t: Track): number | undefined => (t.axis >= 0 ? t.axis : t.rank !== undefined ? t.rank + t.axis : undefined);

/** The channel axis counted from the end, when it can be told. */
export const negativeAxis = (t: Track): number | undefined => (t.axis < 0 ? t.axis : t.rank !== undefined ? t.axis - t.rank : undefined);

/** An axis attribute (possibly negative) against a rank; undefined when it cannot be placed. */
export function normalizeAxis(axis: number, rank: number | undefined): number | undefined {
  if (axis >= 0) return rank === undefined || axis < rank ? axis : undefined;
  return rank === undefined ? undefined : axis + rank >= 0 ? axis + rank : undefined;
}

/** Does `axis` (an attribute, possibly negative) name the channel axis of t? undefined: cannot tell. */
export function isChannelAxis(t: Track, axis: number): boolean | undefined {
  if (axis >= 0) { const p = positiveAxis(t); return p === undefined ? undefined : p === axis; }
  const n = negativeAxis(t);
  return n === undefined ? undefined : n === axis;
}

/** Same channels at the same positions (two operands of an elementwise op can then be tied). */
export const sameLayout = (a: Track, b: Track): boolean =>
  a.size === b.size && a.ids.length === b.ids.length && a.span === b.span && !a.flat && !b.flat && a.at.every((p, c) => p === b.at[c]);

/** The part of a track at positions [from, to) of its axis, renumbered from 0. */
export function sliceTrack(t: Track, from: number, to: number): Track {
  const ids: number[] = [], at: number[] = [], local: number[] = [];
  t.ids.forEach((id, c) => { if (t.at[c] >= from && t.at[c] < to) { ids.push(id); at.push(t.at[c] - from); local.push(c); } });
  return { ...t, ids, at, size: to - from, value: (c) => t.value?.(local[c]) };
}
