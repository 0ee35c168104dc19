// The model runs of the search, counted and timed: one onnxruntime session over the model with its
// prunable weights turned into graph inputs, fed on every run (the original values, or a cell's pruned
// one), so a sensitivity cell costs its runs instead of a serialisation and a session; and whole-model
// runs (one session each) for changes a feed cannot express (removed channels); weights stored as Constant nodes become inputs as initializers do.
// Why not "overridable initializers" (an initializer also listed as a graph input): onnxruntime-node
// passes only the session's input names to the runtime and drops any other feed, so the override
// never arrives. Measured on PaddleOCR det (320x320, one thread): a run with weights fed 177 ms
// against 132 ms with constant weights, but a new session costs 148 ms to encode + 642 ms to create.
import type { OnnxModel, TensorProto } from '../model.js';
import { DT } from '../model.js';
import { floatArrayToHalf } from '../fp16.js';
import { outputAsFloat, type Outputs } from '../calib/evaluate.js';
import type { FeedTensor, InputSample } from '../calib/inputs.js';
import type { ModelRunner, RunnerSession } from '../calib/ort-runner.js';
import { CancelledError, turn } from '../calib/cancel.js';

/** What the runs cost: sessions created, model runs, and the milliseconds spent inside onnxruntime. */
export interface RunCounter { sessions: number; runs: number; ms: number }

export const newCounter = (): RunCounter => ({ sessions: 0, runs: 0, ms: 0 });


/** Runs every sample through `session`, counted; each output as float32. */
async function runAll(session: RunnerSession, set: InputSample[], count: RunCounter, extra: Record<string, FeedTensor> = {}, signal?: AbortSignal): Promise<Outputs[]> {
  const outs: Outputs[] = [];
  for (const { feeds } of set) {
    await turn(); // a macrotask turn: a worker's 'cancel' message gets through (calibrate.ts)
    if (signal?.aborted) throw new CancelledError();
    const t = performance.now();
    const o = await session.run({ ...feeds, ...extra });
    count.ms += performance.now() - t;
    count.runs++;
    const r: Outputs = {};
    for (const [k, v] of Object.entries(o)) r[k] = Object.assign(outputAsFloat(v), { dims: [...v.dims] });
    outs.push(r);
  }
  return outs;
}

/** One session over `bytes` (counted), every sample run, the session released. */
export async function runBytes(runner: ModelRunner, bytes: Uint8Array, set: InputSample[], count: RunCounter, signal?: AbortSignal): Promise<Outputs[]> {
  const t = performance.now();
  const session = await runner.createSession(bytes);
  count.ms += performance.now() - t;
  count.sessions++;
  try { return await runAll(session, set, count, {}, signal); } finally { await session.release(); }
}

/** A weight's values as the feed of its initializer (float32, or float16 bits for a float16 tensor). */
export function weightFeed(t: TensorProto, values: Float32Array): FeedTensor {
  const dims = (t.dims as unknown[]).map(Number);
  return t.data_type === DT.FLOAT16 ? { type: 'float16', data: floatArrayToHalf(values), dims } : { type: 'float32', data: values, dims };
}

/**
 * A session in which the named initializers can be replaced by feeds. `swappable(name)` says whether
 * a weight can be fed (an initializer of the main graph in float32 / float16).
 */
export class SwapSession {
  private constructor(private session: RunnerSession, readonly names: Set<string>, private base: Record<string, FeedTensor>, private set: InputSample[], private count: RunCounter) {}

  static async open(model: OnnxModel, runner: ModelRunner, names: string[], set: InputSample[], count: RunCounter): Promise<SwapSession> {
    const g = model.graph;
    // Initializers and Constant nodes of the main graph: both become graph inputs.
    const consts = model.constants();
    const inits = new Map<string, TensorProto>([...consts].map(([n, c]) => [n, c.tensor]));
    const declared = new Set(g.input.map((i: { name: string }) => i.name));
    const ok = names.filter((n) => inits.has(n) && (inits.get(n).data_type === DT.FLOAT || inits.get(n).data_type === DT.FLOAT16));
    const base: Record<string, FeedTensor> = {};
    for (const n of ok) base[n] = weightFeed(inits.get(n), model.readFloat(inits.get(n)));
    const keepInits = g.initializer, keepNodes = g.node, before = g.input.length, moved = new Set(ok);
    const constNodes = new Set(ok.map((n) => consts.get(n)!.node).filter((x) => x));
    g.initializer = keepInits.filter((t: TensorProto) => !moved.has(t.name));
    g.node = keepNodes.filter((x: unknown) => !constNodes.has(x));
    // Models of IR < 4 list every initializer as a graph input already: only the initializer goes.
    for (const n of ok.filter((x) => !declared.has(x))) {
      const t = inits.get(n);
      g.input.push({ name: n, type: { tensor_type: { elem_type: t.data_type, shape: { dim: (t.dims as unknown[]).map((d) => ({ dim_value: Number(d) })) } } } });
    }
    let bytes: Uint8Array;
    try { bytes = model.encode(); } finally { g.input.length = before; g.initializer = keepInits; g.node = keepNodes; }
    const t = performance.now();
    const session = await runner.createSession(bytes);
    count.ms += performance.now() - t;
    count.sessions++;
    return new SwapSession(session, new Set(ok), base, set, count);
  }

  /** The outputs of every sample with `feeds` replacing their initializers (none: the model as it is). */
  run(feeds: Record<string, FeedTensor> = {}, signal?: AbortSignal): Promise<Outputs[]> {
    for (const k of Object.keys(feeds)) if (!this.names.has(k)) throw new Error(`${k} is not a swappable weight of this session`);
    return runAll(this.session, this.set, this.count, { ...this.base, ...feeds }, signal);
  }

  release(): Promise<void> { return this.session.release(); }
}
