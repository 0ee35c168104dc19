// One interface over onnxruntime-node and onnxruntime-web: the caller passes its `ort` namespace (the
// package depends on neither), the pipeline sees createSession(bytes) -> {run(feeds), release()}, and
// in Node createSessionFromFile(path) for a model written to disk (calib/model-session.ts).
import type { FeedTensor } from './inputs.js';
import { guardRun } from '../run-failure.js';

/** The part of an onnxruntime namespace the pipeline uses. */
export interface OrtLike {
  InferenceSession: { create(model: Uint8Array | string, options?: object): Promise<OrtSession> };
  Tensor: new (type: string, data: unknown, dims: readonly number[]) => unknown;
}

type OrtOutputs = Record<string, { type: string; data: unknown; dims: readonly (number | bigint)[] }>;

// Two signatures, as onnxruntime declares run: one optional `fetches` would be matched against its
// (feeds, options?: RunOptions) overload and refuse the real namespace under strict TypeScript.
interface OrtSession {
  run(feeds: Record<string, unknown>): Promise<OrtOutputs>;
  run(feeds: Record<string, unknown>, fetches: string[]): Promise<OrtOutputs>;
  release?(): Promise<void>;
}

/** An output tensor: its onnxruntime type name, values (float16 as bits) and dims. */
export interface RunOutput { type: string; data: ArrayLike<number | bigint>; dims: number[] }

export interface RunnerSession {
  /** Runs one sample; returns the requested outputs (all when none are named). */
  run(feeds: Record<string, FeedTensor>, outputNames?: string[]): Promise<Record<string, RunOutput>>;
  release(): Promise<void>;
}

export interface ModelRunner {
  createSession(bytes: Uint8Array): Promise<RunnerSession>;
  /** A session of the model file at `file` (its external data beside it), read by onnxruntime itself: Node's. */
  createSessionFromFile?(file: string): Promise<RunnerSession>;
}

/** A runner over `ort`; `sessionOptions` go to InferenceSession.create (threads, execution providers). */
export function makeOrtRunner(ort: OrtLike, sessionOptions: object = {}): ModelRunner {
  return {
    async createSession(bytes) {
      return wrapSession(ort, await load(ort, bytes, sessionOptions));
    },
    async createSessionFromFile(file) {
      return wrapSession(ort, await load(ort, file, sessionOptions));
    },
  };
}

// The model's bytes stay in load's scope only: closures made in one function share its scope, so a
// session whose run / release closures were made beside the bytes kept them alive for as long as the
// session lived (issue 37: a whole model's 0.65 GB through every held-out evaluation of SmolLM2).
function load(ort: OrtLike, bytes: Uint8Array | string, sessionOptions: object): Promise<OrtSession> {
  return guardRun('onnxruntime', 'loading the model', () => ort.InferenceSession.create(bytes, sessionOptions));
}

function wrapSession(ort: OrtLike, session: OrtSession): RunnerSession {
  return {
    async run(feeds, outputNames) {
      const t: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(feeds)) t[k] = new ort.Tensor(v.type, v.data, v.dims);
      const res = await guardRun('onnxruntime', undefined, () => (outputNames ? session.run(t, outputNames) : session.run(t)));
      const out: Record<string, RunOutput> = {};
      for (const [k, v] of Object.entries(res)) out[k] = { type: v.type, data: v.data as ArrayLike<number>, dims: v.dims.map(Number) };
      return out;
    },
    async release() {
      try { await session.release?.(); } catch { /* already released */ }
    },
  };
}

/** `ort` namespace or a runner, as the options of the pipeline take either. */
export function toRunner(x: OrtLike | ModelRunner, sessionOptions?: object): ModelRunner {
  return 'createSession' in x ? x : makeOrtRunner(x, sessionOptions);
}
