// Closed-form step (b): an FSKD-style least-squares refit of the pointwise (1×1) convolutions. For
// such a layer, W' = argmin ‖W'·X_student + b' − Y_teacher‖² + ridge, over the student's own input X
// (captured with the layers before it already refitted) and the teacher's output Y of the same
// tensor (its channels matched), keeping every zero weight of the student at zero.
//
// The solve goes through the package's SparseGPT kernel (its Cholesky of the damped inverse Gram
// matrix) rather than a second solver: with inputs z = [Y; X; 1] and the weight [I | 0 | 0], the
// reconstruction SparseGPT minimises, ‖Ŵz − [I|0|0]z‖² = ‖W'X + b' − Y‖², is exactly the fit when
// the Y columns are the pruned ones and the student's nonzeros (and the bias) the kept ones. SparseGPT
// removes columns left to right, each time refitting the columns to its right exactly (optimal brain
// surgeon); the Y columns come first, so every kept weight takes part in every refit. A student zero
// among the X columns is pruned after the Y columns and only passes its share to the columns right
// of it: exact for a dense row, a close approximation for a sparse one.
import * as sk from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import { Sweep } from '../calib/sweep.js';
import { asF32 } from '../calib/tensor.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunOutput } from '../calib/ort-runner.js';
import { OnnxError } from '../errors.js';
import { independentRuns, type FitLayer } from './layers.js';

/** Vectors used per fit: enough for the Gram matrix to be well determined, few enough to stay fast. */
const MIN_VECTORS = 2048;

export interface FitContext {
  runner: ModelRunner;
  teacher: OnnxModel;
  samples: InputSample[];
  /** Student channel → teacher channel per output name (from the statistics step, or identity). */
  maps: Map<string, Int32Array>;
  ridge: number;
  check: () => void;
  onLayer?: (done: number, total: number) => void;
}

/** Positions picked in each sample: every `step`-th of `inner`. */
const picksOf = (inner: number, perSample: number) => {
  const step = Math.max(1, Math.floor(inner / perSample));
  const out: number[] = [];
  for (let i = 0; i < inner && out.length < perSample; i += step) out.push(i);
  return out;
};

/** Values at the picked positions of every channel (NCHW / NC tensors), per batch item: [n][c][p]. */
function pickValues(t: RunOutput, perSample: number): { values: Float32Array[][]; inner: number } {
  const d = t.dims, x = asF32(t);
  const N = d[0], C = d[1], inner = d.slice(2).reduce((a, b) => a * b, 1);
  const pos = picksOf(inner, perSample);
  const values: Float32Array[][] = [];
  for (let n = 0; n < N; n++) {
    values.push(Array.from({ length: C }, (_, c) => Float32Array.from(pos, (p) => x[(n * C + c) * inner + p])));
  }
  return { values, inner };
}

/** Refits every pointwise layer of `layers` whose output the teacher also computes; returns the tensors written. */
export async function fitPointwise(work: OnnxModel, layers: FitLayer[], ctx: FitContext): Promise<Set<string>> {
  const teacherNames = new Set<string>();
  for (const n of ctx.teacher.graph.node) for (const o of n.output) if (o) teacherNames.add(o);
  const todo = layers.filter((l) => l.pointwise && teacherNames.has(l.output));
  const changed = new Set<string>();
  if (!todo.length) return changed;
  const perSample = (l: FitLayer) => Math.ceil(Math.max(MIN_VECTORS, 2 * (l.channels + 1)) / ctx.samples.length);
  // The teacher's outputs at the picked positions, for every layer, in one capture.
  const target = new Map<string, Float32Array[][]>(todo.map((l) => [l.output, []]));
  const byOut = new Map(todo.map((l) => [l.output, l]));
  await new Sweep(ctx.teacher, ctx.runner, ctx.samples).capture(todo.map((l) => l.output), (name, t) => {
    target.get(name)!.push(...pickValues(t, perSample(byOut.get(name)!)).values);
  }, { hold: false, onSample: () => ctx.check() });

  const sweep = new Sweep(work, ctx.runner, ctx.samples);
  const runs = independentRuns(todo);
  let done = 0;
  for (let r = 0; r < runs.length; r++) {
    const changing = new Set<string>();
    for (const later of runs.slice(r)) for (const l of later) { changing.add(l.weight); changing.add(l.bias); }
    const inputs = new Map<string, Float32Array[][]>();
    const per = new Map<string, number>();
    for (const l of runs[r]) { inputs.set(l.input, []); per.set(l.input, Math.max(per.get(l.input) ?? 0, perSample(l))); }
    await sweep.capture([...inputs.keys()], (name, t) => { inputs.get(name)!.push(...pickValues(t, per.get(name)!).values); }, { changing, onSample: () => ctx.check() });
    for (const l of runs[r]) {
      if (fitLayer(work, l, inputs.get(l.input)!, target.get(l.output)!, ctx, perSample(l))) { changed.add(l.weight); changed.add(l.bias); }
      ctx.onLayer?.(++done, todo.length);
    }
  }
  return changed;
}

function fitLayer(work: OnnxModel, l: FitLayer, xs: Float32Array[][], ys: Float32Array[][], ctx: FitContext, perSample: number): boolean {
  if (xs.length !== ys.length) throw new OnnxError('bad_calibration', `layer ${l.node.name}: ${xs.length} input items against ${ys.length} teacher items`, 'shape_mismatch');
  const consts = work.constants();
  const wT = consts.get(l.weight)!.tensor, bT = consts.get(l.bias)!.tensor;
  const w = work.readFloat(wT);
  const R = l.channels, Cin = w.length / R;
  const map = ctx.maps.get(l.output) ?? Int32Array.from({ length: R }, (_, i) => i);
  const cols = R + Cin + 1;
  const h = new sk.Hessian(cols);
  try {
    const rows: number[] = [];
    for (let n = 0; n < xs.length; n++) {
      const x = xs[n], y = ys[n];
      if (x.length !== Cin) throw new OnnxError('bad_calibration', `layer ${l.node.name}: input of ${x.length} channels for a weight of ${Cin}`, 'shape_mismatch');
      const P = Math.min(x[0].length, y[0].length, perSample);
      for (let p = 0; p < P; p++) {
        for (let o = 0; o < R; o++) rows.push(y[map[o]][p]);
        for (let c = 0; c < Cin; c++) rows.push(x[c][p]);
        rows.push(1);
      }
    }
    const count = rows.length / cols;
    h.addRows(Float32Array.from(rows), count);
    const aug = new Float32Array(R * cols);
    const keep = new Uint8Array(R * cols);
    for (let o = 0; o < R; o++) {
      aug[o * cols + o] = 1;
      for (let c = 0; c < Cin; c++) keep[o * cols + R + c] = w[o * Cin + c] !== 0 ? 1 : 0;
      keep[o * cols + R + Cin] = 1;
    }
    const p = sk.Param.fromArray(aug, [R, cols]);
    let out: Float32Array;
    try {
      sk.sparseGpt(p, h, { keep, blockSize: 128, percDamp: ctx.ridge });
      out = p.toArray();
    } finally { p.free(); }
    const w2 = new Float32Array(w.length), b2 = new Float32Array(R);
    for (let o = 0; o < R; o++) {
      for (let c = 0; c < Cin; c++) w2[o * Cin + c] = keep[o * cols + R + c] ? out[o * cols + R + c] : 0;
      b2[o] = out[o * cols + R + Cin];
    }
    if (!w2.every(Number.isFinite) || !b2.every(Number.isFinite)) return false; // a degenerate fit leaves the layer as it was
    // The solve is in float32 on a Gram matrix that can be ill-conditioned: the fit is kept only if it
    // reconstructs the teacher's output better than the layer as it is, on (a subsample of) the same vectors.
    const bOld = work.readFloat(bT);
    const errOf = (wv: Float32Array, bv: Float32Array) => {
      let e = 0;
      const stride = Math.max(1, Math.floor(count / 512));
      for (let v = 0; v < count; v += stride) {
        const o0 = v * cols;
        for (let o = 0; o < R; o++) {
          let y = bv[o];
          for (let c = 0; c < Cin; c++) y += wv[o * Cin + c] * rows[o0 + R + c];
          const d = y - rows[o0 + o];
          e += d * d;
        }
      }
      return e;
    };
    if (!(errOf(w2, b2) < errOf(w, bOld))) return false;
    work.writeFloat(wT, w2);
    work.writeFloat(bT, b2);
    return true;
  } finally { h.free(); }
}
