// Float arrays a distillation keeps between steps — the teacher's targets (per trained tensor, per
// sample), the best epoch's parameters —, in memory or in a cut store (calib/cut-store.ts; Node's is
// an unlinked scratch file, cut-file.ts) when the caller gives one. A language model's targets are
// its next-token distributions, samples × tokens × vocabulary floats: 48 windows of 128 tokens of
// SmolLM2's 49 152 tokens are 1.2 GB, and its parameters 0.54 GB (issue 37), held in memory through
// the whole distillation although a step reads one batch of targets and the parameters are read
// once at the end. From the store the same bytes come back, so the training does not change.
import type { CutStore } from '../calib/cut-store.js';

type Held = Float32Array | { ref: number; length: number };

export class HeldArrays {
  /** By row (a trained tensor; 0 for parameters), then column (a sample; a parameter). */
  private readonly held: Held[][];

  /** `outputs` rows; their values in `store` when one is given, else in memory. */
  constructor(outputs: number, private readonly store?: CutStore) {
    this.held = Array.from({ length: outputs }, () => []);
  }

  /** Arrays already in memory (one per trained tensor, per sample), kept as they are. */
  static of(values: Float32Array[][]): HeldArrays {
    const t = new HeldArrays(values.length);
    values.forEach((per, o) => { t.held[o] = [...per]; });
    return t;
  }

  get outputs(): number { return this.held.length; }

  /** Arrays held in row `o`. */
  samples(o: number): number { return this.held[o]?.length ?? 0; }

  /** Keeps `values` at (`o`, `k`) (into the store: then not held by reference), replacing what was there. */
  set(o: number, k: number, values: Float32Array): void {
    const old = this.held[o][k];
    if (old && !(old instanceof Float32Array)) this.store!.free(old.ref, old.length);
    this.held[o][k] = this.store
      ? { ref: this.store.put(new Uint8Array(values.buffer, values.byteOffset, values.byteLength)), length: values.byteLength }
      : values;
  }

  /** The array at (`o`, `k`): the one held in memory, or a new one read from the store. */
  get(o: number, k: number): Float32Array {
    const h = this.held[o][k];
    if (h instanceof Float32Array) return h;
    const out = new Float32Array(h.length / 4);
    this.store!.read(h.ref, new Uint8Array(out.buffer));
    return out;
  }

  /** Every array of row `o` (read into memory from a store). */
  perSample(o: number): Float32Array[] {
    return this.held[o].map((_, k) => this.get(o, k));
  }

  /** Gives the store's space back; the arrays are gone after this. */
  release(): void {
    for (const per of this.held) {
      for (const h of per) if (!(h instanceof Float32Array)) this.store!.free(h.ref, h.length);
      per.length = 0;
    }
  }
}
