// Module worker of the goal card: the package's job in search mode (sparsekit-wasm/onnx runJob, as the
// CLI's `prune --min-fidelity` runs it: sensitivity of every layer or channel group, then plans
// allocated from it and verified on the whole model until the fidelity floor holds) with
// onnxruntime-web as the runner, as calib-worker does.
import * as ort from 'onnxruntime-web/wasm';
import init from 'sparsekit-wasm';
import { OnnxModel, makeOrtRunner, makeInputSet, runJob, FloorError, resolveInputShape, isImageShape, checkGeneratedShape, type InputSample, type OrtLike, type CompressResult } from 'sparsekit-wasm/onnx';
import { loadUserImages } from '../calib/user-images.js';
import { serve, PlaygroundError } from '../protocol.js';
import type { SearchApi } from './api.js';

ort.env.wasm.numThreads = 1;
const runner = makeOrtRunner(ort as unknown as OrtLike, { executionProviders: ['wasm'] });
let ready: Promise<void> | null = null;

/** All weights' elements, and the zeros of the prunable ones (what N:M adds). */
function figures(m: OnnxModel): { params: number; zeros: number } {
  let zeros = 0;
  for (const w of m.prunable()) { const v = m.readFloat(w); for (let i = 0; i < v.length; i++) if (v[i] === 0) zeros++; }
  return { params: m.weights.reduce((a, w) => a + w.numel, 0), zeros };
}

/**
 * The samples the fidelity is measured on: the user's images first (drawn at the model's input size),
 * then `generated` ones. Generated alone: held-out seeds, inputs no calibration would have seen; with
 * images, makeInputSet's image slots take them (the search fits nothing to its samples, so the seeds
 * of the generated rest do not matter).
 */
async function searchSamples(model: OnnxModel, files: File[], generated: number): Promise<InputSample[]> {
  if (!files.length) return makeInputSet(model, { count: generated, set: 'heldOut' });
  const inp = model.inputs[0];
  const shape = inp ? resolveInputShape(inp, model.outputs) : [];
  if (model.inputs.length !== 1 || !isImageShape(shape)) {
    throw new PlaygroundError('invalid_arguments', `your images need a model with one image input (N, 1|3, H, W); this one takes ${model.inputs.map((i) => `${i.name} [${i.dims.join(', ')}]`).join(', ')}`);
  }
  checkGeneratedShape(inp.name, shape);
  const images = await loadUserImages(files, [shape[2], shape[3]]);
  return makeInputSet(model, { count: images.length + generated, set: 'calibration', images });
}

serve<SearchApi>({
  async run(msg, ctx) {
    await (ready ??= init({ threads: false }));
    const files = msg.images ?? [];
    if (!(msg.samples >= 0 && msg.samples + files.length >= 1)) throw new PlaygroundError('invalid_arguments', 'the search needs at least one sample (generated or yours)');
    const t0 = performance.now();
    const model = OnnxModel.parse(msg.bytes);
    const before = figures(model);
    const samples = await searchSamples(model, files, Math.floor(msg.samples));
    const channels = msg.goal !== 'nm';
    let chosen: OnnxModel | null = null;
    let res: Omit<CompressResult, 'model' | 'report'>;
    try {
      const out = await runJob(model, {
        mode: {
          kind: 'search', target: channels ? 'channels' : 'nm', nm: channels ? undefined : [2, 4], minFidelity: msg.minFidelity,
          objective: msg.goal === 'faster' ? 'latency' : 'params', levels: channels ? msg.levels : undefined, maxSteps: msg.maxSteps,
        },
        eval: { samples },
      }, { ort: runner, signal: ctx.signal, onProgress: (p) => ctx.progress({ phase: p.phase as 'sensitivity' | 'verify', done: p.done, total: p.total, label: p.label ?? '' }) });
      chosen = out.model;
      res = out.report.search!; // a search job reports its search
    } catch (e) {
      // no plan met the floor: the page shows what the search measured, with nothing to download
      if (!(e instanceof FloorError && e.search)) throw e;
      res = e.search;
    }
    const after = chosen ? figures(chosen) : before;
    const bytes = chosen ? chosen.encode() : null;
    if (bytes) ctx.transfer.push(bytes.buffer);
    return {
      bytes, recipe: JSON.stringify(res.recipe, null, 2), table: res.table, steps: res.steps, fidelity: res.fidelity,
      params: { before: before.params, after: after.params }, zeros: { before: before.zeros, after: after.zeros },
      runs: res.runs, sessions: res.sessions, measuredOn: { images: files.length, generated: samples.length - files.length }, ms: performance.now() - t0,
    };
  },
});
