// Module worker: runs a model with onnxruntime-web (wasm backend) on a deterministic input.
import * as ort from 'onnxruntime-web/wasm';
import { ORT_TYPES } from 'sparsekit-wasm/onnx';
import { makeInputData } from './model-input.js';

ort.env.wasm.numThreads = 1;   // the pruning worker gets the cores; one inference at a time is plenty

const median = (xs) => { const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const feedsOf = (inputs) => Object.fromEntries(inputs.map((inp) =>
  [inp.name, new ort.Tensor(ORT_TYPES[inp.elemType] ?? 'float32', makeInputData(inp.shape, inp.elemType), inp.shape)]));
const floatOutputs = (out) => {
  const outputs = {}, shapes = {};
  for (const [k, v] of Object.entries(out)) { outputs[k] = v.data instanceof Float32Array ? v.data : Float32Array.from(v.data, Number); shapes[k] = v.dims; }
  return { outputs, shapes };
};

/**
 * Latency of two models on the same input: one warm-up run each, then `runs` rounds alternating
 * a / b (so that a slow spell of the shared machine hits both), median per model.
 */
async function bench({ jobId, a, b, inputs, runs }) {
  const sessions = [];
  try {
    for (const m of [a, b]) sessions.push(await ort.InferenceSession.create(m, { executionProviders: ['wasm'] }));
    const feeds = feedsOf(inputs);
    const last = [];
    for (const s of sessions) last.push(await s.run(feeds));
    const times = [[], []];
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        last[i] = await sessions[i].run(feeds);
        times[i].push(performance.now() - t0);
      }
    }
    const [ra, rb] = last.map(floatOutputs);
    self.postMessage({ type: 'bench', jobId, a: { ...ra, medianMs: median(times[0]), times: times[0] }, b: { ...rb, medianMs: median(times[1]), times: times[1] } });
  } catch (e) {
    self.postMessage({ type: 'error', jobId, error: { name: e?.name ?? 'Error', message: String(e?.message ?? e) } });
  } finally {
    for (const s of sessions) { try { await s.release(); } catch { /* ignore */ } }
  }
}

self.onmessage = async (ev) => {
  if (ev.data.type === 'bench') { await bench(ev.data); return; }
  const { jobId, model, externalData, inputs } = ev.data;
  let session;
  try {
    const t0 = performance.now();
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['wasm'],
      externalData: externalData && externalData.length ? externalData : undefined,
    });
    const feeds = feedsOf(inputs);
    const t1 = performance.now();
    const out = await session.run(feeds);
    const t2 = performance.now();
    self.postMessage({ type: 'outputs', jobId, ...floatOutputs(out), loadMs: t1 - t0, runMs: t2 - t1 });
  } catch (e) {
    self.postMessage({ type: 'error', jobId, error: { name: e?.name ?? 'Error', message: String(e?.message ?? e) } });
  } finally {
    try { await session?.release(); } catch { /* ignore */ }
  }
};
