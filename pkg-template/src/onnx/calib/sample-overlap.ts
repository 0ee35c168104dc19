// Whether a held-out set shares a sample with the calibration set. A sample is all of its inputs
// together: padded sentences of the same length share their attention mask (and token_type_ids)
// byte for byte, so comparing input files one by one flags every such held-out sentence as a copy
// (issue 37). Two samples are the same when every feed has the same name, type, dims and bytes.
import { OnnxError } from '../errors.js';
import type { FeedTensor, InputSample } from './inputs.js';

const bytesOf = (f: FeedTensor) => new Uint8Array(f.data.buffer, f.data.byteOffset, f.data.byteLength);

/** FNV-1a (32-bit) over a sample's names, types, dims and bytes, in input-name order: a bucket key, confirmed by a full comparison. */
function sampleHash(s: InputSample): number {
  let h = 0x811c9dc5;
  const mix = (b: number) => { h ^= b; h = Math.imul(h, 0x01000193) >>> 0; };
  for (const name of Object.keys(s.feeds).sort()) {
    const f = s.feeds[name];
    for (const c of `${name}\u0000${f.type}\u0000${f.dims.join(',')}\u0000`) mix(c.charCodeAt(0) & 0xff);
    const b = bytesOf(f);
    for (let i = 0; i < b.length; i++) mix(b[i]);
  }
  return h;
}

function sameSample(a: InputSample, b: InputSample): boolean {
  const ka = Object.keys(a.feeds).sort(), kb = Object.keys(b.feeds).sort();
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  for (const k of ka) {
    const x = a.feeds[k], y = b.feeds[k];
    if (x.type !== y.type || x.dims.length !== y.dims.length || x.dims.some((d, i) => d !== y.dims[i])) return false;
    const bx = bytesOf(x), by = bytesOf(y);
    if (bx.length !== by.length) return false;
    for (let i = 0; i < bx.length; i++) if (bx[i] !== by[i]) return false;
  }
  return true;
}

/** The first held-out sample that equals a calibration sample (all inputs together), or null. */
export function findSharedSample(calibration: readonly InputSample[], heldOut: readonly InputSample[]): { heldOut: number; calibration: number } | null {
  const buckets = new Map<number, number[]>();
  calibration.forEach((s, i) => {
    const h = sampleHash(s);
    const b = buckets.get(h);
    if (b) b.push(i); else buckets.set(h, [i]);
  });
  for (let j = 0; j < heldOut.length; j++) {
    for (const i of buckets.get(sampleHash(heldOut[j])) ?? []) {
      if (sameSample(calibration[i], heldOut[j])) return { heldOut: j, calibration: i };
    }
  }
  return null;
}

/**
 * Refuses (OnnxError 'bad_calibration') a held-out set with a sample equal to a calibration sample:
 * a held-out score measured on calibration data flatters the pruned model. The message names both
 * samples by their `source`.
 */
export function checkDisjointSamples(calibration: readonly InputSample[], heldOut: readonly InputSample[]): void {
  const hit = findSharedSample(calibration, heldOut);
  if (hit) {
    const e = heldOut[hit.heldOut], c = calibration[hit.calibration];
    throw new OnnxError('bad_calibration', `held-out sample ${e.source} is a copy of calibration sample ${c.source} (all its inputs are equal): held-out samples must not be calibration samples`, 'invalid_value');
  }
}
