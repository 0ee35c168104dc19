// Which channels stay: each group's channels scored by the L2 norm of what carries their signal (one
// BlockCoupling over all scored members), ranked per group (ScopeSpec) or over the model
// (ScopeCoupling), the kept count rounded so that each producer keeps a multiple of roundTo features.
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
    keepOf.set(gr.id, Uint8Array.from(k, (v) => (v ? 1 : 0)));
  }
  const live = allLive.filter((gr) => !keepOf.has(gr.id));
  const owned: { free(): void }[] = [];
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
        const width = Math.max(1, ...rows.map((r) => r?.length ?? 0));
        const flat = new Float32Array(chans.length * width);
        rows.forEach((r, c) => r && flat.set(r, c * width));
        const param = sk.Param.fromArray(flat, [chans.length, width]);
        const spec = new sk.BlockSpec(param, [1, -1], `${m.tensor}:${m.axis}`);
        owned.push(spec, param);
        return { spec, param, width };
      });
      if (!specs.length) {
        // Nothing scored (no filter reachable): every channel scores zero alike.
        const param = sk.Param.fromArray(new Float32Array(chans.length), [chans.length, 1]);
        const spec = new sk.BlockSpec(param, [1, -1], `group ${gr.id}`);
        owned.push(spec, param);
        specs.push({ spec, param, width: 1 });
      }
      const per = specs.reduce((a, s) => a + s.width, 0);
      if (scope === 'global' && per > 0 && opts.scoreSlices !== 'consumers') {
        const f = 1 / Math.sqrt(per);
        for (const s of specs) s.param.set(s.param.toArray().map((v) => v * f));
      }
      const coupling = new sk.BlockCoupling(specs.map((s) => s.spec), undefined, `group ${gr.id}`);
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
    const rounded = (k: number, gr: ChannelGroup) => {
      const step = unitStep(roundTo, channelsOf.get(gr.id)!);
      const n = gr.channels;
      if (step <= 1 || n <= step) return Math.max(1, k);
      return Math.min(n, Math.max(step, Math.round(k / step) * step));
    };
    const counts = new Map<number, number>();
    if (scope === 'global' && scopes.length) {
      const coupled = new sk.ScopeCoupling(scopes, undefined, 'model');
      owned.push(coupled);
      const masks = coupled.getMasks({ sparsity: fraction });
      live.forEach((gr, i) => counts.set(gr.id, keepFrom(masks, scopes[i]).reduce((a, b) => a + b, 0)));
    } else {
      live.forEach((gr) => counts.set(gr.id, Math.floor((1 - fraction) * gr.channels + 0.5)));
    }
    live.forEach((gr, i) => {
      const nnz = rounded(counts.get(gr.id)!, gr);
      keepOf.set(gr.id, keepFrom(scopes[i].getMasks({ nnz }), scopes[i]));
    });
  } finally {
    for (const o of owned) o.free();
  }
  // Never empty a group; a whole-zero channel scores 0 and goes first, which is the intent.
  for (const k of keepOf.values()) if (!k.some((v) => v)) k[0] = 1;
  return keepOf;
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
  const width = new Map<string, number>();
  for (const sl of units[0].slices) {
    if (!sl.filter) continue;
    const key = `${sl.tensor}\u0000${sl.axis}`;
    width.set(key, (width.get(key) ?? 0) + sl.rep);
  }
  if (!width.size) return roundTo;
  let step = 1;
  for (const w of width.values()) {
    const need = roundTo / gcd(roundTo, w);
    step = (step * need) / gcd(step, need);
  }
  return step;
}
