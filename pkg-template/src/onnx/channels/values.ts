// Float values of the model's constants, read once and shared by the analysis (removed channels'
// constants), the scoring and the removal. Writes go through the model; `forget` drops a stale copy.
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import type { ModelConstant } from './constants.js';

export class ConstantValues {
  private readonly cache = new Map<string, Float32Array>();
  constructor(private readonly model: OnnxModel, readonly constants: Map<string, ModelConstant>) {}

  tensor(name: string) {
    const c = this.constants.get(name);
    if (!c) throw new OnnxError('unsupported', `"${name}" is not a constant of the model`, 'invalid_arguments');
    return c.tensor;
  }

  floats(name: string): Float32Array {
    let v = this.cache.get(name);
    if (!v) { v = this.model.readFloat(this.tensor(name)); this.cache.set(name, v); }
    return v;
  }

  /** Values changed outside (calibration rewrote a weight): read them again next time. */
  forget(name?: string): void {
    if (name === undefined) this.cache.clear();
    else this.cache.delete(name);
  }
}
