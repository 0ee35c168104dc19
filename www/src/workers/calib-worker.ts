// Module worker of the calibration card: runs the package's calibration pipeline
// (sparsekit-wasm/onnx calibratePrune) with onnxruntime-web, single-threaded sparsekit-wasm.
import * as ort from 'onnxruntime-web/wasm';
import init from 'sparsekit-wasm';
import { OnnxModel, makeOrtRunner, makeInputSet, calibratePrune, runSet, compareSets, type CalibLayer, type CalibProgress, type Criterion, type OrtLike } from 'sparsekit-wasm/onnx';
import { serve } from '../protocol.js';
import type { CalibApi, CalibRequest, CalibStep } from './api.js';

ort.env.wasm.numThreads = 1;
// (OrtLike declares one create(bytes) signature; onnxruntime-web's overloads include it)
const runner = makeOrtRunner(ort as unknown as OrtLike, { executionProviders: ['wasm'] });
const ENGINE = 'sparsekit-wasm (single-threaded SIMD128)';
let ready: Promise<void> | null = null;

async function prune(bytes: Uint8Array, msg: CalibRequest, criterionFor: (l: CalibLayer) => string | undefined, signal: AbortSignal, onProgress: (p: CalibProgress) => void) {
  const model = OnnxModel.parse(bytes);
  const calibration = makeInputSet(model, { count: msg.pages + msg.images.length, set: 'calibration', normalization: msg.normalization, images: msg.images });
  const report = await calibratePrune(model, {
    ort: runner, calibration, sequential: msg.sequential, blockSize: msg.blockSize, percDamp: msg.percDamp,
    criterion: (l) => (criterionFor(l) ?? 'dense') as Criterion | 'dense', ...msg.target, signal, onProgress,
  });
  return { model, report };
}

/** The reference outputs on the held-out inputs (never the calibration set). */
async function reference(msg: CalibRequest, signal: AbortSignal) {
  await (ready ??= init({ threads: false }));
  const heldOut = makeInputSet(OnnxModel.parse(msg.bytes), { count: msg.heldOut, set: 'heldOut', normalization: msg.normalization });
  return { heldOut, outputs: await runSet(runner, msg.bytes, heldOut, signal) };
}

serve<CalibApi>({
  async run(msg, ctx) {
    const ref = await reference(msg, ctx.signal);
    const { model, report } = await prune(msg.bytes, msg, (l) => msg.perLayer[l.name] ?? msg.criterion, ctx.signal, ctx.progress);
    const bytes = model.encode();
    const cmp = compareSets(ref.outputs, await runSet(runner, bytes, ref.heldOut, ctx.signal));
    ctx.transfer.push(bytes.buffer);
    return { bytes, report, cosine: cmp, engine: ENGINE };
  },
  async compare(msg, ctx) {
    const ref = await reference(msg, ctx.signal);
    const rows = [];
    const criteria = ['magnitude', 'wanda', 'sparsegpt'];
    for (let i = 0; i < criteria.length; i++) {
      const c = criteria[i];
      const step = (p: CalibProgress): CalibStep => ({ ...p, done: i * p.total + p.done, total: p.total * criteria.length, phase: `${c}: ${p.phase}` });
      const { model, report } = await prune(msg.bytes, msg, (l) => (msg.perLayer[l.name] === 'dense' ? 'dense' : c), ctx.signal, (p) => ctx.progress(step(p)));
      const cmp = compareSets(ref.outputs, await runSet(runner, model.encode(), ref.heldOut, ctx.signal));
      rows.push({ criterion: c, fidelity: cmp.fidelity.score, worst: cmp.fidelity.worst, cosine: cmp.cosine, min: cmp.min, layers: report.layers.filter((l) => l.method !== 'dense').length });
    }
    return { rows, engine: ENGINE };
  },
});
