// Calibration statistics of every layer from one pass over the unpruned model, for the sensitivity
// table of wanda / sparsegpt: a cell prunes one layer alone, so its inputs are those of the unpruned
// model and one capture serves every cell (the sequential capture of calibratePrune is for the whole
// plan, applied at the end). One session, every layer input an extra output, Hessians accumulated
// (one per distinct input: calib/shared-stats.ts).
import type { OnnxModel } from '../model.js';
import { halfArrayToFloat } from '../fp16.js';
import type { CalibLayer } from '../calib/layers.js';
import type { LayerStats } from '../calib/layer-prune.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunOutput } from '../calib/ort-runner.js';
import { CancelledError, turn } from '../calib/cancel.js';
import { SharedStats } from '../calib/shared-stats.js';
import type { RunCounter } from './model-runs.js';

const asF32 = (t: RunOutput): Float32Array =>
  t.data instanceof Float32Array ? t.data : t.type === 'float16' && t.data instanceof Uint16Array ? halfArrayToFloat(t.data) : Float32Array.from(t.data as ArrayLike<number>, Number);

/** Statistics per layer name; free() releases the Hessians (wasm memory). */
export interface CapturedStats { stats: Map<string, LayerStats>; free(): void }

export async function captureAllStats(model: OnnxModel, layers: CalibLayer[], runner: ModelRunner, samples: InputSample[], count: RunCounter, signal?: AbortSignal): Promise<CapturedStats> {
  const g = model.graph;
  const graphInputs = new Set(g.input.map((i: { name: string }) => i.name));
  const need = layers.filter((l) => l.stats);
  // Layers reading one tensor the same way share one Hessian (calib/shared-stats.ts).
  const shared = new SharedStats(need);
  const free = () => shared.free();
  try {
    const inputs = shared.inputs();
    const names = inputs.filter((n) => !graphInputs.has(n));
    const have = new Set(g.output.map((o: { name: string }) => o.name));
    const before = g.output.length;
    for (const n of names) if (!have.has(n)) g.output.push({ name: n, type: { tensor_type: { elem_type: 1 } } });
    let bytes: Uint8Array;
    try { bytes = model.encode(); } finally { g.output.length = before; }
    let t = performance.now();
    const session = await runner.createSession(bytes);
    count.ms += performance.now() - t; count.sessions++;
    try {
      for (const { feeds } of samples) {
        await turn();
        if (signal?.aborted) throw new CancelledError();
        t = performance.now();
        const out = names.length ? await session.run(feeds, names) : {};
        count.ms += performance.now() - t; count.runs++;
        for (const n of inputs) {
          const r = (out[n] ?? feeds[n]) as RunOutput;
          shared.add(n, asF32(r), r.dims);
        }
      }
    } finally { await session.release(); }
  } catch (e) { free(); throw e; }
  return { stats: new Map(need.map((l) => [l.name, shared.get(l)!])), free };
}
