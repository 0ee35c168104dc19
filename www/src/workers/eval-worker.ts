// Module worker: runs two models with onnxruntime-web (wasm backend) on the same deterministic input,
// interleaved, and returns their outputs and timings.
import * as ort from 'onnxruntime-web/wasm';
import { ORT_TYPES, MAX_GENERATED_ELEMENTS } from 'sparsekit-wasm/onnx';
import { makeInputData } from '../model-input.js';
import { PlaygroundError, serve } from '../protocol.js';
import type { BenchSide, EvalApi, InputSpec, ModelFiles } from './api.js';

ort.env.wasm.numThreads = 1;   // the job worker gets the other core; one inference at a time is plenty

const median = (xs: number[]) => { const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const message = (e: unknown) => String((e as { message?: unknown })?.message ?? e);

function feedsOf(inputs: InputSpec[]): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const inp of inputs) {
    if (!inp.shape.length || !inp.shape.every((d) => Number.isInteger(d) && d > 0)) {
      throw new PlaygroundError('invalid_input_shape', `invalid test input shape [${inp.shape.join(', ')}] for ${inp.name}`);
    }
    // A model may declare (or a user type) a shape too large to generate: an error, not a dead tab.
    if (inp.shape.reduce((a, b) => a * b, 1) > MAX_GENERATED_ELEMENTS) {
      throw new PlaygroundError('invalid_input_shape', `test input shape [${inp.shape.join(', ')}] for ${inp.name} holds more than ${MAX_GENERATED_ELEMENTS} elements: set a smaller shape`);
    }
    const type = (ORT_TYPES[inp.elemType] ?? 'float32') as ort.Tensor.Type;
    feeds[inp.name] = new ort.Tensor(type, makeInputData(inp.shape, inp.elemType), inp.shape);
  }
  return feeds;
}

function floatOutputs(out: ort.InferenceSession.OnnxValueMapType): Pick<BenchSide, 'outputs' | 'shapes'> {
  const outputs: Record<string, Float32Array> = {}, shapes: Record<string, readonly number[]> = {};
  for (const [k, v] of Object.entries(out)) {
    const d = v.data;
    outputs[k] = d instanceof Float32Array ? d : Float32Array.from(d as ArrayLike<number | bigint>, Number);
    shapes[k] = v.dims;
  }
  return { outputs, shapes };
}

async function open(m: ModelFiles): Promise<ort.InferenceSession> {
  try {
    return await ort.InferenceSession.create(m.model, {
      executionProviders: ['wasm'], externalData: m.externalData.length ? m.externalData : undefined,
    });
  } catch (e) {
    throw new PlaygroundError('ort_session_failed', `onnxruntime-web could not load the model: ${message(e)}`);
  }
}

async function run(s: ort.InferenceSession, feeds: Record<string, ort.Tensor>, inputs: InputSpec[]) {
  try {
    return await s.run(feeds);
  } catch (e) {
    throw new PlaygroundError('ort_run_failed', `onnxruntime-web could not run the model on ${inputs.map((i) => `${i.name} ${i.shape.join('×')}`).join(', ')}: ${message(e)}`);
  }
}

serve<EvalApi>({
  async bench({ a, b, inputs, runs, warmup }, ctx) {
    const sessions: ort.InferenceSession[] = [];
    try {
      const feeds = feedsOf(inputs);
      for (const m of [a, b]) sessions.push(await open(m));
      const last: ort.InferenceSession.OnnxValueMapType[] = [];
      for (let w = 0; w < Math.max(1, warmup); w++) {
        last[0] = await run(sessions[0], feeds, inputs);
        last[1] = await run(sessions[1], feeds, inputs);
      }
      const times: number[][] = [[], []];
      for (let r = 0; r < runs; r++) {
        if (ctx.signal.aborted) throw Object.assign(new Error('cancelled'), { name: 'AbortError', code: 'cancelled' });
        for (let i = 0; i < 2; i++) {
          const t0 = performance.now();
          last[i] = await run(sessions[i], feeds, inputs);
          times[i].push(performance.now() - t0);
        }
      }
      const side = (i: number): BenchSide => ({ ...floatOutputs(last[i]), medianMs: times[i].length ? median(times[i]) : NaN, times: times[i] });
      return { a: side(0), b: side(1) };
    } finally {
      for (const s of sessions) { try { await s.release(); } catch { /* released */ } }
    }
  },
});
