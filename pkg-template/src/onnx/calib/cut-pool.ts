// The buffers of a sweep's cut held in memory (sweep.ts), used again from one sample's tensor to the
// next. onnxruntime hands back every output in a new array; a cut kept as those arrays is let go
// sample by sample, but the arrays stay until V8's next full collection, and by then they are
// old: on a decoder, the residual stream being replaced at a block's boundary was held twice for a
// while (issue 40, SmolLM2 at 128 x 512 tokens: array buffers at 436 MiB against 289 of cut). Copied
// into a buffer of the pool instead, the new tensor takes the place of the one just let go, and
// onnxruntime's array dies young. A tensor of the cut is thus valid until it is let go.
export type TypedArray = Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array;
export type TypedCtor = new (n: number) => TypedArray;

export class CutPool {
  private readonly spare = new Map<TypedCtor, Map<number, TypedArray[]>>();

  /** A copy of `a` in a spare buffer of its type and length, or a new one. */
  copy(a: TypedArray): TypedArray {
    const ctor = a.constructor as TypedCtor;
    const b = this.spare.get(ctor)?.get(a.length)?.pop() ?? new ctor(a.length);
    (b as Float32Array).set(a as Float32Array);
    return b;
  }

  /** `a` is no longer read: its buffer may take the next tensor of its type and length. */
  give(a: TypedArray): void {
    const ctor = a.constructor as TypedCtor;
    let byLen = this.spare.get(ctor);
    if (!byLen) this.spare.set(ctor, (byLen = new Map()));
    let list = byLen.get(a.length);
    if (!list) byLen.set(a.length, (list = []));
    list.push(a);
  }

  /** Lets the spare buffers go (a capture's end: what its new cut did not take back). */
  clear(): void { this.spare.clear(); }
}
