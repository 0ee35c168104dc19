// A calibrated prune changes weights one layer after another, and may fail or be cancelled half way
// (an onnxruntime error, a singular Hessian, the user's cancel): it then puts back every weight it
// changed, so that the model is the one the caller passed. A weight stored externally or in raw_data
// is put back by where its bytes were (model.storedState), not by a copy of them: a model larger
// than memory is never held twice, nor are the changed weights of a model held in memory.
import type { StoredState, OnnxModel, OnnxWeight } from '../model.js';

export class WeightRollback {
  private readonly saved = new Map<OnnxWeight, Float32Array | StoredState>();
  constructor(private readonly model: OnnxModel) {}

  /** Writes `values` into `w`, first keeping its values from before the run (`before`, when the caller has them). */
  write(w: OnnxWeight, values: Float32Array, before?: Float32Array): void {
    if (!this.saved.has(w)) this.saved.set(w, this.model.storedState(w.tensor) ?? before ?? this.model.readFloat(w));
    this.model.writeFloat(w, values);
  }

  /** Puts back every weight written so far. */
  restore(): void {
    for (const [w, v] of this.saved) {
      if (v instanceof Float32Array) this.model.writeFloat(w, v);
      else this.model.restoreStored(v);
    }
    this.saved.clear();
  }
}

/** Runs `fn`; when it throws, every weight it wrote through the rollback is put back, and the error goes on. */
export async function withRollback<T>(model: OnnxModel, fn: (rollback: WeightRollback) => Promise<T>): Promise<T> {
  const rollback = new WeightRollback(model);
  try {
    return await fn(rollback);
  } catch (e) {
    rollback.restore();
    throw e;
  }
}
