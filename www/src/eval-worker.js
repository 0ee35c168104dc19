// Module worker: runs a model with onnxruntime-web (wasm backend) on a deterministic input.
import * as ort from 'onnxruntime-web/wasm';
import { makeInputData, ORT_TYPES } from './model-input.js';

ort.env.wasm.numThreads = 1;   // the pruning worker gets the cores; one inference at a time is plenty

self.onmessage = async (ev) => {
  const { jobId, model, externalData, inputs } = ev.data;
  let session;
  try {
    const t0 = performance.now();
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['wasm'],
      externalData: externalData && externalData.length ? externalData : undefined,
    });
    const feeds = {};
    for (const inp of inputs) {
      feeds[inp.name] = new ort.Tensor(ORT_TYPES[inp.elemType] ?? 'float32', makeInputData(inp.shape, inp.elemType), inp.shape);
    }
    const t1 = performance.now();
    const out = await session.run(feeds);
    const t2 = performance.now();
    const outputs = {};
    const shapes = {};
    for (const [k, v] of Object.entries(out)) {
      outputs[k] = v.data instanceof Float32Array ? v.data : Float32Array.from(v.data, Number);
      shapes[k] = v.dims;
    }
    self.postMessage({ type: 'outputs', jobId, outputs, shapes, loadMs: t1 - t0, runMs: t2 - t1 });
  } catch (e) {
    self.postMessage({ type: 'error', jobId, error: { name: e?.name ?? 'Error', message: String(e?.message ?? e) } });
  } finally {
    try { await session?.release(); } catch { /* ignore */ }
  }
};
