// The calibration set pushed through a graph once, one segment at a time, as SparseGPT's reference
// pushes its inputs through a network block by block. Each capture runs only the nodes between the
// tensors at hand (the graph inputs and the cut cached by the previous capture) and the values asked
// for; every tensor that a node not yet run will read is cached per sample (the new cut), and the
// rest is dropped. A caller that changes weights between captures (sequential pruning) names the
// weights that may still change: what is computed from them is never cached, and is recomputed when
// needed. So a sequential calibration costs about one run of the model, plus a session per capture,
// plus what is recomputed rather than cached when the cut would pass a budget (recompute.ts).
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { indexGraph, segmentModel, segmentNodes, type CutInput, type GraphIndex } from './graph-cut.js';
import { elemTypeOf } from './tensor.js';
import { recomputable } from './recompute.js';
import type { FeedTensor, InputSample } from './inputs.js';
import type { ModelRunner, RunOutput } from './ort-runner.js';
import type { CutStore } from './cut-store.js';
import { CutPool, type TypedArray, type TypedCtor } from './cut-pool.js';

/** What a sweep cost so far: sessions and runs in onnxruntime, and the time on each side. */
export interface SweepStats {
  /** Segments run (one onnxruntime session each). */
  sessions: number;
  /** session.run calls (segments x samples). */
  runs: number;
  /** Nodes run, over all segments and per sample, and the graph's node count: their ratio is the cost in runs of the model. */
  nodeRuns: number;
  graphNodes: number;
  /** In onnxruntime: session creation, runs, release (ms). */
  ortMs: number;
  /** Of which session creation and release (ms). */
  sessionMs: number;
  /** Cutting the graph and encoding the segments (ms). */
  cutMs: number;
  /** The most cut held at once, in bytes of tensor data: the old cut being let go and the new one being made, over all samples. */
  peakCacheBytes: number;
  /** Tensor bytes handed out of onnxruntime (captured values and cuts) and fed back into it (cuts). */
  bytesOut: number;
  bytesIn: number;
  /** Values left out of the cut to be computed again by a later capture (recompute.ts), over all captures. */
  recomputed: number;
  /** Values of the cut held in the cut store instead of memory (cut-store.ts), over all captures, and their bytes. */
  stored: number;
  storedBytes: number;
}

export interface SweepOptions {
  /**
   * The most the cut may hold over all samples, in bytes (default: no bound). Over it, a capture
   * leaves out of the cut what can be computed again from what stays at hand anyway (recompute.ts),
   * and a later capture runs those nodes again: less memory, more runs of those nodes, the same values.
   */
  cacheBudget?: number;
  /**
   * Where the cut goes when, after what can be recomputed is left out, it would still pass the budget
   * (cut-store.ts): values the capture keeps, largest first, until it is under. None: memory.
   */
  cutStore?: CutStore;
  /**
   * Default false: the cut holds onnxruntime's arrays. True: copies in buffers used again from one
   * sample to the next (cut-pool.ts); a tensor of the cut handed to a capture's `fn` is then valid
   * during the call only, as is one read back from the cut store.
   */
  reuse?: boolean;
}

export interface CaptureOptions {
  /** Names of weights (initializers, Constant outputs) that may change after this capture. */
  changing?: ReadonlySet<string>;
  /** Called before each sample's run (progress; may throw to cancel). */
  onSample?: (k: number) => void;
  /** Default true: cache the new cut for the next capture; false: a last (or only) capture. */
  hold?: boolean;
}

const bytesOf = (t: RunOutput): number => {
  const d = t.data as unknown as { byteLength?: number; length: number };
  return d.byteLength ?? d.length * 8;
};

/** A sample's tensor of the cut held in the cut store: what it takes to read it back. */
interface Stored { stored: true; ref: number; type: string; dims: number[]; ctor: TypedCtor; length: number; bytes: number }
type Held = RunOutput | Stored;
const isStored = (t: Held): t is Stored => (t as Stored).stored === true;
/** Bytes a held tensor takes in memory. */
const memBytes = (t: Held): number => (isStored(t) ? 0 : bytesOf(t));
const storable = (t: RunOutput) => ArrayBuffer.isView(t.data) && !(t.data instanceof DataView);
const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export class Sweep {
  private readonly ix: GraphIndex;
  /** The cut: per value, its tensor in each sample (undefined once the segment that read it last is done with that sample). */
  private readonly cache = new Map<string, (Held | undefined)[]>();
  /** Values the current capture keeps in the cut store rather than memory. */
  private readonly toStore = new Set<string>();
  /** Per value, the array a stored tensor is read back into (one sample at a time: onnxruntime reads its feeds during the run). */
  private readonly readBack = new Map<string, TypedArray>();
  private readonly store?: CutStore;
  private readonly pool?: CutPool;
  /** Nodes whose outputs are final and were either cached or read by every consumer. */
  private readonly ran = new Set<number>();
  readonly stats: SweepStats;

  /** The layers' weights (prunable weights, and what Cast / Identity make of them). */
  private readonly layerWeights = new Set<string>();

  /** The most the cut may hold over all samples before values are recomputed instead (bytes). */
  private readonly cacheBudget: number;

  constructor(private readonly model: OnnxModel, private readonly runner: ModelRunner, private readonly samples: InputSample[], opts: SweepOptions = {}) {
    this.cacheBudget = opts.cacheBudget ?? Infinity;
    this.store = opts.cutStore;
    if (opts.reuse) this.pool = new CutPool();
    this.ix = indexGraph(model);
    this.stats = { sessions: 0, runs: 0, nodeRuns: 0, graphNodes: this.ix.nodes.length, ortMs: 0, sessionMs: 0, cutMs: 0, peakCacheBytes: 0, bytesOut: 0, bytesIn: 0, recomputed: 0, stored: 0, storedBytes: 0 };
    for (const w of model.prunable()) this.layerWeights.add(w.name);
    for (const n of this.ix.nodes) if ((n.op_type === 'Cast' || n.op_type === 'Identity') && this.layerWeights.has(n.input[0])) this.layerWeights.add(n.output[0]);
  }

  private feed(name: string, k: number): FeedTensor {
    const t = this.samples[k].feeds[name];
    if (!t) throw new OnnxError('bad_calibration', `the calibration sample ${k} does not feed "${name}"`, 'invalid_value');
    return t;
  }

  /** A tensor of the cut to keep: written to the cut store when its value goes there. */
  private hold(v: string, t: RunOutput): Held {
    const d = t.data as unknown as TypedArray;
    if (!this.toStore.has(v)) return this.pool && storable(t) ? { type: t.type, data: this.pool.copy(d) as unknown as ArrayLike<number>, dims: t.dims } : t;
    const ref = this.store!.put(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
    this.stats.storedBytes += d.byteLength;
    return { stored: true, ref, type: t.type, dims: t.dims, ctor: d.constructor as TypedCtor, length: d.length, bytes: d.byteLength };
  }

  /** A held tensor as a run output; a stored one is read back into its value's array, valid until the next read of that value. */
  private tensor(v: string, t: Held): RunOutput {
    if (!isStored(t)) return t;
    let a = this.readBack.get(v);
    if (!a || a.constructor !== t.ctor || a.length !== t.length) this.readBack.set(v, (a = new t.ctor(t.length)));
    this.store!.read(t.ref, new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    return { type: t.type, data: a as unknown as ArrayLike<number>, dims: t.dims };
  }

  /** Lets a held tensor go (a stored one's space goes back to the store). */
  private drop(t: Held | undefined): void {
    if (!t) return;
    if (isStored(t)) this.store!.free(t.ref, t.bytes);
    else if (this.pool && storable(t)) this.pool.give(t.data as unknown as TypedArray);
  }

  private dropValue(v: string): void {
    for (const t of this.cache.get(v) ?? []) this.drop(t);
    this.cache.delete(v);
    this.readBack.delete(v);
  }

  /**
   * Computes `names` on every sample with the model's weights as they are now and calls
   * fn(name, tensor, sample) for each (in sample order, then name order); then holds the new cut.
   */
  async capture(names: string[], fn: (name: string, t: RunOutput, k: number) => void, opts: CaptureOptions = {}): Promise<void> {
    const { ix, cache } = this;
    const wanted = [...new Set(names)];
    const atHand = (v: string) => ix.feeds.has(v) || cache.has(v);
    const t0 = now();
    const nodes = segmentNodes(ix, wanted.filter((v) => !atHand(v) || ix.constant.has(v)), atHand);
    // Values computed from weights that may still change are not final: neither cached nor counted as run.
    const changing = opts.changing ?? new Set<string>();
    const stale = new Set<string>();
    for (const i of nodes) {
      if (ix.inputs[i].some((x) => changing.has(x) || stale.has(x))) for (const o of ix.nodes[i].output) if (o) stale.add(o);
    }
    const produced = new Set<string>();
    for (const i of nodes) {
      for (const o of ix.nodes[i].output) if (o) produced.add(o);
      if (!ix.nodes[i].output.some((o: string) => stale.has(o))) this.ran.add(i);
    }
    const pending = (v: string) => (ix.consumers.get(v) ?? []).some((c) => !this.ran.has(c));
    const keep = opts.hold === false ? [] : [...produced].filter((v) => !stale.has(v) && !ix.constant.has(v) && pending(v));
    const outputs = [...new Set([...wanted.filter((v) => produced.has(v)), ...keep])];
    // The segment's inputs: graph inputs and cached tensors its nodes read.
    const reads = new Set<string>();
    for (const i of nodes) for (const x of ix.inputs[i]) if (!produced.has(x) && atHand(x) && !ix.constant.has(x)) reads.add(x);
    const cut: CutInput[] = [...reads].filter((v) => cache.has(v)).map((v) => {
      const ts = cache.get(v)! as Held[];
      const dims: (number | null)[] = ts[0].dims.slice();
      for (const t of ts) t.dims.forEach((d, j) => { if (dims[j] !== d) dims[j] = null; });
      // Dims that differ between samples become symbolic; a rank that differs leaves the shape out.
      return { name: v, elemType: elemTypeOf(ts[0].type), dims: ts.every((t) => t.dims.length === dims.length) ? dims : undefined };
    });
    const bytes = nodes.length ? segmentModel(this.model, ix, nodes, cut, outputs) : null;
    this.stats.cutMs += now() - t0;

    const kept = new Map<string, Held[]>(keep.map((v) => [v, []]));
    this.toStore.clear();
    // What the old cut holds that nothing after this segment reads is let go as soon as this segment
    // is done with it: before the runs when the segment does not read it, else sample by sample after
    // each run. So the cut is held about once, plus a sample, not twice at the segment's end (on a
    // decoder the residual stream of every window would be held twice: issue 40's 128 x 512 tokens).
    const used = new Set([...reads, ...wanted]);
    for (const v of [...cache.keys()]) if (!pending(v) && !used.has(v)) this.dropValue(v);
    const spent = [...cache.keys()].filter((v) => !pending(v));
    let held = 0;
    for (const ts of cache.values()) for (const t of ts) if (t) held += memBytes(t);
    let session: Awaited<ReturnType<ModelRunner['createSession']>> | null = null;
    let fetched = outputs;
    try {
      if (bytes) {
        const t1 = now();
        session = await this.runner.createSession(bytes);
        this.stats.ortMs += now() - t1;
        this.stats.sessionMs += now() - t1;
        this.stats.sessions++;
      }
      for (let k = 0; k < this.samples.length; k++) {
        opts.onSample?.(k);
        let out: Record<string, RunOutput> = {};
        if (session) {
          const feeds: Record<string, FeedTensor> = {};
          for (const v of reads) {
            if (ix.feeds.has(v)) { feeds[v] = this.feed(v, k); continue; }
            const t = this.tensor(v, cache.get(v)![k]!);
            feeds[v] = t as unknown as FeedTensor;
            this.stats.bytesIn += bytesOf(t);
          }
          const t2 = now();
          out = await session.run(feeds, fetched);
          this.stats.ortMs += now() - t2;
          this.stats.runs++;
          this.stats.nodeRuns += nodes.length;
          for (const t of Object.values(out)) this.stats.bytesOut += bytesOf(t);
        }
        for (const v of wanted) {
          const c = cache.get(v)?.[k];
          const t = out[v] ?? (c && this.tensor(v, c)) ?? (ix.feeds.has(v) ? (this.feed(v, k) as unknown as RunOutput) : undefined);
          if (!t) throw new OnnxError('unsupported', `the segment computing "${v}" gave no tensor for it`, 'invalid_value');
          fn(v, t, k);
        }
        for (const [v, ts] of kept) { const t = this.hold(v, out[v]); ts.push(t); held += memBytes(t); }
        if (k === 0 && kept.size) {
          held -= this.trim(kept, nodes, wanted, spent);
          // what the cut leaves out is not fetched again: onnxruntime's copies of it would be garbage
          fetched = outputs.filter((v) => wanted.includes(v) || kept.has(v));
        }
        this.stats.peakCacheBytes = Math.max(this.stats.peakCacheBytes, held);
        for (const v of spent) {
          const ts = cache.get(v)!;
          if (ts[k]) held -= memBytes(ts[k]!);
          this.drop(ts[k]);
          ts[k] = undefined;
        }
      }
    } catch (e) {
      // the capture's new cut is not kept: what of it went to the store goes back
      for (const ts of kept.values()) for (const t of ts) this.drop(t);
      throw e;
    } finally {
      if (session) {
        const t3 = now();
        await session.release();
        this.stats.ortMs += now() - t3;
        this.stats.sessionMs += now() - t3;
      }
    }
    for (const v of spent) this.dropValue(v);
    for (const [v, ts] of kept) cache.set(v, ts);
    this.pool?.clear();
  }

  /**
   * After the first sample's run: when the cut would hold more than the budget over all samples (the
   * first sample's sizes times the samples), leaves out of it what can be computed again from what
   * stays at hand anyway (recompute.ts); those values' nodes count as not run, so what they read stays
   * at hand for the capture that runs them again. Returns the bytes of the first sample let go.
   */
  private trim(kept: Map<string, Held[]>, nodes: number[], wanted: string[], spent: string[]): number {
    if (!kept.size) return 0;
    const gone = new Set(spent);
    let perSample = 0;
    for (const ts of kept.values()) perSample += memBytes(ts[0]);
    for (const [v, ts] of this.cache) if (!gone.has(v) && ts[0]) perSample += memBytes(ts[0]);
    if (perSample * this.samples.length <= this.cacheBudget) return 0;
    const { ix } = this;
    const again = recomputable({
      ix, nodes, keep: new Set(kept.keys()), wanted, cached: (v) => this.cache.has(v), ran: this.ran,
      layerNode: (i) => ix.inputs[i].some((x) => this.layerWeights.has(x)), layerInputs: !this.store,
      sampleBytes: (v) => memBytes(kept.get(v)![0]),
    });
    for (const i of again.nodes) this.ran.delete(i);
    let freed = 0;
    for (const i of again.nodes) {
      for (const o of ix.nodes[i].output) {
        const ts = o ? kept.get(o) : undefined;
        if (ts) { freed += memBytes(ts[0]); kept.delete(o); }
      }
    }
    this.stats.recomputed += again.values.size;
    // Still over: the kept values go to the cut store, largest first, until the cut is under the budget.
    if (this.store) {
      let left = perSample - freed;
      const order = [...kept].filter(([, ts]) => !isStored(ts[0]) && storable(ts[0] as RunOutput)).sort((a, b) => memBytes(b[1][0]) - memBytes(a[1][0]));
      for (const [v, ts] of order) {
        if (left * this.samples.length <= this.cacheBudget) break;
        this.toStore.add(v);
        const b = memBytes(ts[0]);
        const inMemory = ts[0] as RunOutput;
        ts[0] = this.hold(v, inMemory);
        this.drop(inMemory);
        left -= b; freed += b;
        this.stats.stored++;
      }
    }
    return freed;
  }

  /** Drops the cut (the sweep can go on: what is needed again is recomputed from the graph inputs). */
  clear(): void { for (const v of [...this.cache.keys()]) this.dropValue(v); this.ran.clear(); this.pool?.clear(); }
}

/** One capture from the graph inputs, nothing kept: `names` on every sample with the weights as they are now. */
export async function capture(runner: ModelRunner, model: OnnxModel, names: string[], calibration: InputSample[], fn: (name: string, t: RunOutput, k: number) => void, check: () => void = () => {}): Promise<void> {
  await new Sweep(model, runner, calibration).capture(names, fn, { onSample: check, hold: false });
}
