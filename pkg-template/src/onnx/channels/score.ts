// Which channels stay: each group's channels scored by the L2 norm of what carries their signal (one
// BlockCoupling over all scored members), ranked per group (ScopeSpec). In global scope the kept
// counts come from one ranking over the model by signal per parameter (globalCounts); in both, the
// kept count is rounded so that each producer keeps a multiple of roundTo features.
import * as sk from 'sparsekit-wasm';
import { OnnxError } from '../errors.js';
import type { ChannelAnalysis, ChannelGroup, GroupChannel, Slice } from './types.js';
import type { ResolvedChannelOptions } from './options.js';
import { gatherSlice } from './surgery.js';

export interface ScoreInput {
  analysis: ChannelAnalysis;
  live: ChannelGroup[];
  options: ResolvedChannelOptions;
  floats: (name: string) => Float32Array;
  dims: (name: string) => number[];
}

/** Kept channels (1) per live group id. */
export function scoreChannels({ analysis, live: allLive, options: opts, floats, dims: dimsOf }: ScoreInput): Map<number, Uint8Array> {
  const { fraction, scope, roundTo } = opts;
  const { channelsOf } = analysis;
  const keepOf = new Map<number, Uint8Array>();
  const given = opts.keep ?? new Map<number, Uint8Array>();
  for (const gr of allLive) {
    const k = given.get(gr.id);
    if (!k) continue;
    if (k.length !== gr.channels) throw new OnnxError('unsupported', `keep of group ${gr.id} has ${k.length} entries for ${gr.channels} channels`, 'shape_mismatch');
    const kept = Uint8Array.from(k, (v) => (v ? 1 : 0));
    if (gr.runs && !evenRuns(kept, channelsOf.get(gr.id)!)) {
      throw new OnnxError('unsupported', `keep of group ${gr.id} must keep the same number of query heads (at least one) in each of its ${gr.runs} KV groups`, 'invalid_arguments');
    }
    keepOf.set(gr.id, kept);
  }
  const live = allLive.filter((gr) => !keepOf.has(gr.id));
  const owned: { free(): void }[] = [];
  // Global scope: each unit's squared score and the parameters its removal takes away.
  const units: GlobalUnit[][] = [];
  try {
    const scopes: sk.ScopeSpec[] = [];
    live.forEach((gr, gi) => {
      const chans = channelsOf.get(gr.id)!;
      // Scored: what carries the channel's signal (filters, depthwise filters, the consumers' input
      // slices). Biases and BN parameters are not: removal keeps their effect (the channel's constant
      // goes into the consumers' biases). Scaling filters by BN's gamma / sqrt(var + eps) was tried
      // and measured worse on PaddleOCR (a near-dead channel has a tiny running variance, which blows
      // its filter up).
      // 'consumers': only what the consumers lose is scored (calibration's fluctuation scores).
      const scored = (sl: Slice) => (opts.scoreSlices === 'consumers' ? !!sl.fold : sl.filter || sl.depthwise || sl.fold);
      const weightMembers = gr.members.filter((m) => m.kind === 'weight'
        && chans.some((ch) => ch.slices.some((sl) => sl.tensor === m.tensor && sl.axis === m.axis && scored(sl))));
      // Global scope: each unit's squared score, summed over the members as they are gathered.
      const energy = new Float64Array(chans.length);
      const specs = weightMembers.map((m) => {
        const dims = dimsOf(m.tensor);
        const data = floats(m.tensor);
        // A unit's slices of one member (an attention head has D of them): concatenated.
        const rows = chans.map((ch) => {
          const parts = ch.slices.filter((s) => s.tensor === m.tensor && s.axis === m.axis)
            .map((sl) => gatherSlice(data, dims, sl.axis, sl.pos, sl.rep, sl.fold ? opts.inputScale?.get(m.tensor) : undefined));
          if (parts.length <= 1) return parts[0];
          const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
          let o = 0;
          for (const p of parts) { out.set(p, o); o += p.length; }
          return out;
        });
        if (scope === 'global') rows.forEach((r, c) => { if (r) for (const v of r) energy[c] += v * v; });
        const width = Math.max(1, ...rows.map((r) => r?.length ?? 0));
        const flat = new Float32Array(chans.length * width);
        rows.forEach((r, c) => r && flat.set(r, c * width));
        const param = sk.Param.fromArray(flat, [chans.length, width]);
        const spec = new sk.BlockSpec(param, [1, -1], `${m.tensor}:${m.axis}`);
        owned.push(spec, param);
        return spec;
      });
      if (!specs.length) {
        // Nothing scored (no filter reachable): every channel scores zero alike.
        const param = sk.Param.fromArray(new Float32Array(chans.length), [chans.length, 1]);
        const spec = new sk.BlockSpec(param, [1, -1], `group ${gr.id}`);
        owned.push(spec, param);
        specs.push(spec);
      }
      if (scope === 'global') units.push(chans.map((ch, c) => ({ energy: energy[c], cost: unitCost(ch, dimsOf) })));
      const coupling = new sk.BlockCoupling(specs, undefined, `group ${gr.id}`);
      const sc = new sk.ScopeSpec(coupling, [-1, -1], `group ${gr.id}`);
      owned.push(sc, coupling);
      scopes.push(sc);
      opts.onProgress?.(gi + 1, live.length, `scored group ${gr.id}`);
    });
    const keepFrom = (masks: Map<sk.BlockSpec, Uint8Array>, sc: sk.ScopeSpec): Uint8Array => {
      const spec = (sc.block as sk.BlockCoupling).specs[0];
      const m = masks.get(spec);
      const n = spec.gridShape[0];
      const w = spec.view.shape[1];
      return Uint8Array.from({ length: n }, (_, c) => (m && m[c * w] ? 1 : 0));
    };
    // Kept units of a group: rounded so that every producer keeps a multiple of roundTo features
    // (what the runtimes' SIMD blocking sees), at least one unit.
    // Query heads in KV groups (gr.runs): a multiple of the group count, each group keeping as many.
    const rounded = (k: number, gr: ChannelGroup) => {
      const step = unitStep(roundTo, channelsOf.get(gr.id)!) * (gr.runs ?? 1);
      const n = gr.channels;
      if (!gr.runs && (step <= 1 || n <= step)) return Math.max(1, k);
      return Math.min(n, Math.max(step, Math.round(k / step) * step));
    };
    const counts = new Map<number, number>();
    if (scope === 'global' && scopes.length) {
      globalCounts(units, fraction).forEach((k, i) => counts.set(live[i].id, k));
    } else {
      live.forEach((gr) => counts.set(gr.id, Math.floor((1 - fraction) * gr.channels + 0.5)));
    }
    live.forEach((gr, i) => {
      const nnz = rounded(counts.get(gr.id)!, gr);
      keepOf.set(gr.id, gr.runs
        ? keepPerRun(scopes[i].blockNorms(), channelsOf.get(gr.id)!, nnz / gr.runs)
        : keepFrom(scopes[i].getMasks({ nnz }), scopes[i]));
    });
  } finally {
    for (const o of owned) o.free();
  }
  // Never empty a group; a whole-zero channel scores 0 and goes first, which is the intent.
  for (const k of keepOf.values()) if (!k.some((v) => v)) k[0] = 1;
  return keepOf;
}

/** Does every run keep the same number of units, at least one? */
function evenRuns(keep: Uint8Array, units: GroupChannel[]): boolean {
  const kept = new Map<number, number>();
  units.forEach((u, c) => kept.set(u.run!, (kept.get(u.run!) ?? 0) + keep[c]));
  const counts = [...kept.values()];
  return counts[0] >= 1 && counts.every((n) => n === counts[0]);
}

/** The `per` strongest units of each run (a query head's KV group), ties to the first. */
function keepPerRun(norms: Float32Array, units: GroupChannel[], per: number): Uint8Array {
  if (norms.length !== units.length) throw new OnnxError('unsupported', `${norms.length} scores for ${units.length} query heads`, 'shape_mismatch');
  const keep = new Uint8Array(units.length);
  const byRun = new Map<number, number[]>();
  units.forEach((u, c) => (byRun.get(u.run!) ?? byRun.set(u.run!, []).get(u.run!)!).push(c));
  for (const members of byRun.values()) {
    members.sort((a, b) => norms[b] - norms[a] || a - b);
    for (const c of members.slice(0, per)) keep[c] = 1;
  }
  return keep;
}

interface GlobalUnit { energy: number; cost: number }

/** Parameters a unit's removal takes away: every weight slice it has (filters and consumers' inputs). */
function unitCost(ch: GroupChannel, dimsOf: (name: string) => number[]): number {
  let n = 0;
  for (const sl of ch.slices) {
    if (sl.kind !== 'weight') continue;
    const d = dimsOf(sl.tensor);
    n += (d.reduce((a, b) => a * b, 1) / Math.max(1, d[sl.axis])) * sl.rep;
  }
  return Math.max(1, n);
}

/**
 * Kept units per group for global scope: `fraction` of the parameters the groups' units hold is
 * removed, the units that carry the least squared score per parameter first (a greedy knapsack), each
 * group keeping at least one unit. Counting units instead would weigh an attention head (4·d·h
 * parameters) like one FFN neuron (2·d), and a global cut of a transformer would then take FFN
 * neurons only; per parameter, a head competes for what it costs, which is also what it saves at run
 * time where the work is in the weights' products. Ties go to the group listed first, then the
 * channel order, so that the result depends on the scores only.
 */
function globalCounts(units: GlobalUnit[][], fraction: number): number[] {
  const order: { g: number; c: number; density: number }[] = [];
  let total = 0;
  units.forEach((us, g) => us.forEach((u, c) => {
    total += u.cost;
    order.push({ g, c, density: u.energy / u.cost });
  }));
  order.sort((a, b) => a.density - b.density || a.g - b.g || a.c - b.c);
  const kept = units.map((us) => us.length);
  let removed = 0;
  const budget = fraction * total;
  for (const o of order) {
    if (removed >= budget) break;
    // Half a unit's cost decides whether it fits: the budget is met as closely as units allow.
    const cost = units[o.g][o.c].cost;
    if (kept[o.g] <= 1 || removed + cost / 2 > budget) continue;
    kept[o.g]--;
    removed += cost;
  }
  return kept;
}

/** The features a unit spans in each producer's filter (per tensor and axis): 1 for a channel or a neuron, the head width for an attention head. */
export function filterWidths(unit: GroupChannel): Map<string, number> {
  const width = new Map<string, number>();
  for (const sl of unit.slices) {
    if (!sl.filter) continue;
    const key = `${sl.tensor}\u0000${sl.axis}`;
    width.set(key, (width.get(key) ?? 0) + sl.rep);
  }
  return width;
}

const gcd = (a: number, b: number): number => (b ? gcd(b, a % b) : a);

/**
 * The multiple of units a group keeps so that each producer's kept features are a multiple of
 * `roundTo`: a unit is a channel (one feature) or an attention head (its head width in each of
 * q, k, v), so 12 heads of 32 may keep any count at roundTo 8, where FFN neurons keep multiples
 * of 8. The widths are the filter slices of the first unit, per producer tensor and axis.
 */
export function unitStep(roundTo: number, units: GroupChannel[]): number {
  if (roundTo <= 1 || !units.length) return Math.max(1, roundTo);
  const width = filterWidths(units[0]);
  if (!width.size) return roundTo;
  let step = 1;
  for (const w of width.values()) {
    const need = roundTo / gcd(roundTo, w);
    step = (step * need) / gcd(step, need);
  }
  return step;
}
