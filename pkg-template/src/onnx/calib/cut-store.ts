// Where a sweep's cut may go instead of memory (sweep.ts): past the cut budget, after what can be
// recomputed is left out, a capture writes the values it keeps to a store, one sample's tensor at a
// time, and reads each back when a later segment is fed it. On a decoder the cut over the budget is
// the attention output held beside the residual stream between two captures of a block (issue 40:
// SmolLM2 at 128 x 512 tokens held 303 MB of cut, two 151 MB values); recomputing it costs another
// run of q / k / v and the attention per block, reading it back costs a copy. The same values go in
// and come out, so results do not change. Node's store is an unlinked scratch file (cut-file.ts);
// without a store (the browser) the cut stays in memory.

/** Space for tensor bytes, handed out by reference and given back when the tensor is spent. */
export interface CutStore {
  /** Keeps a copy of `bytes`; returns where. */
  put(bytes: Uint8Array): number;
  /** Copies the bytes kept at `ref` (`into.length` of them, as put) into `into`. */
  read(ref: number, into: Uint8Array): void;
  /** The bytes at `ref` are no longer needed (of `length` bytes, as put). */
  free(ref: number, length: number): void;
}
