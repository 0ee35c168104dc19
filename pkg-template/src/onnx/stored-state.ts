// What a rollback keeps of a tensor instead of a copy of its values (OnnxModel.storedState).
import type { TensorProto } from './tensor-data.js';

/** An external tensor's dims and where its bytes were (its source when `bytes` is absent). */
export interface ExternalState {
  readonly tensor: TensorProto;
  readonly dims: unknown[];
  readonly bytes?: Uint8Array | { ref: number; length: number };
}

/** A raw_data tensor's dims and its bytes: the array that held them (never written into since), or where the spill holds them. */
export type RawState = { readonly tensor: TensorProto; readonly dims: unknown[] } & (
  { readonly raw: Uint8Array } | { readonly spilled: { ref: number; length: number } });

export type StoredState = ExternalState | RawState;
