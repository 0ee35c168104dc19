// Calibration statistics of every layer from one pass over the unpruned model, for the sensitivity
// table of wanda / sparsegpt: a cell prunes one layer alone, so its inputs are those of the unpruned
// model and one capture serves every cell (the sequential capture of calibratePrune is for the whole
// plan, applied at the end). One session, every layer input an extra output, Hessians accumulated.
import * as sk from 'sparsekit-wasm';
import type { OnnxModel } from '../model.js';
import { halfArrayToFloat } from '../fp16.js';
import type { CalibLayer } from '../calib/layers.js';
import type { LayerStats } from '../calib/layer-prune.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunOutput } from '../calib/ort-runner.js';
import { CancelledError } from '../calib/cancel.js';
import type { RunCounter } from './model-runs.js';

const asF32 = (t: RunOutput): Float32Array =>
  t.data instanceof Float32Array ? t.data : t.type === 'float16' && t.data instanceof Uint16Array ? halfArrayToFloat(t.data) : Float32Array.from(t.data as ArrayLike<number>, Number);

/** Statistics per layer name; free() releases the Hessians (wasm memory). */
export interface CapturedStats { stats: Map<string, LayerStats>; free(): void }

export async function captureAllStats(model: OnnxModel, layers: CalibLayer[], runner: ModelRunner, samples: InputSample[], count: RunCounter, signal?: AbortSignal): Promise<CapturedStats> {
  const g = model.graph;
  const graphInputs = new Set(g.input.map((i: { name: string }) => i.name));
  const need = layers.filter((l) => l.stats);
  const stats = new Map<string, LayerStats>();
  const free = () => { for (const s of stats.values()) for (const h of s.groups ?? (s.h ? [s.h] : [])) h.free(); };
  try {
    for (const l of need) stats.set(l.name, l.stats === 'grouped' ? { groups: Array.from({ length: l.group }, () => new sk.Hessian(l.cols)) } : { h: new sk.Hessian(l.cols) });
    const names = [...new Set(need.map((l) => l.input).filter((n) => !graphInputs.has(n)))];
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
        await new Promise((r) => setTimeout(r, 0));
        if (signal?.aborted) throw new CancelledError();
        t = performance.now();
        const out = names.length ? await session.run(feeds, names) : {};
        count.ms += performance.now() - t; count.runs++;
        for (const l of need) {
          const r = (out[l.input] ?? feeds[l.input]) as RunOutput;
          const x = asF32(r), s = stats.get(l.name)!;
          if (l.stats === 'conv') s.h!.addConv(x, r.dims, l.conv!);
          else if (l.stats === 'rows') s.h!.addRows(x, x.length / l.cols);
          else {
            // One Hessian per Conv group, each over its C/G input channels.
            const [N, C, H, W] = r.dims, G = l.group, Cg = C / G, plane = Cg * H * W;
            const slice = new Float32Array(N * plane);
            s.groups!.forEach((h, gi) => {
              for (let n = 0; n < N; n++) slice.set(x.subarray((n * C + gi * Cg) * H * W, (n * C + gi * Cg) * H * W + plane), n * plane);
              h.addConv(slice, [N, Cg, H, W], l.conv!);
            });
          }
        }
      }
    } finally { await session.release(); }
  } catch (e) { free(); throw e; }
  return { stats, free };
}
