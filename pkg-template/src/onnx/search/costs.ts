// What pruning a layer saves besides parameters: multiply-accumulates, from the positions each weight
// is applied at (a Conv's output pixels, a MatMul's rows), read from one run of one sample with every
// layer's output as an extra graph output (shapes only; a model without static shapes still works).
import type { OnnxModel } from '../model.js';
import { findLayers } from '../calib/layers.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import type { RunCounter } from './model-runs.js';

/** Positions per prunable weight name (per sample). */
export async function layerPositions(model: OnnxModel, runner: ModelRunner, sample: InputSample, count: RunCounter): Promise<Map<string, number>> {
  const layers = findLayers(model);
  const byName = new Map(model.graph.node.map((n: { name: string; output: string[] }) => [n.name, n]));
  const outOf = new Map<string, string>();
  for (const l of layers) {
    const n = byName.get(l.node) as { output: string[] } | undefined;
    if (n?.output[0]) outOf.set(l.name, n.output[0]);
  }
  const g = model.graph;
  const have = new Set(g.output.map((o: { name: string }) => o.name));
  const names = [...new Set(outOf.values())];
  const before = g.output.length;
  for (const n of names) if (!have.has(n)) g.output.push({ name: n, type: { tensor_type: { elem_type: 1 } } });
  let bytes: Uint8Array;
  try { bytes = model.encode(); } finally { g.output.length = before; }
  const t = performance.now();
  const session = await runner.createSession(bytes);
  const pos = new Map<string, number>();
  try {
    const out = await session.run(sample.feeds, names);
    count.runs++;
    for (const l of layers) {
      const o = out[outOf.get(l.name) ?? ''];
      if (!o) continue;
      const numel = o.dims.reduce((a, b) => a * b, 1);
      const batch = l.op === 'Conv' || l.op === 'ConvTranspose' ? Math.max(1, o.dims[0]) : 1;
      pos.set(l.name, numel / Math.max(1, l.rows) / batch);
    }
  } finally {
    await session.release();
    count.ms += performance.now() - t;
    count.sessions++;
  }
  return pos;
}
