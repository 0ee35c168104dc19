// Evenly spaced blocks of a byte stream: the sample both size estimates compress — the report's
// transport size (transport-sample.ts, transport-size.ts) and the search's served bytes
// (served-bytes.ts). No Node imports: served-bytes runs in a page too.

/** The unit of sampling: small, so that a sample spans many tensors. */
export const BLOCK = 4096;

/**
 * `count` blocks of BLOCK bytes evenly spaced through `bytes`, concatenated (the last block may be
 * short); `bytes` itself when it holds no more than `count` blocks.
 */
export function evenBlocks(bytes: Uint8Array, count: number): Uint8Array {
  const blocks = Math.ceil(bytes.length / BLOCK);
  const take = Math.max(1, Math.floor(count));
  if (take >= blocks) return bytes;
  const out = new Uint8Array(take * BLOCK);
  const step = blocks / take;
  let o = 0;
  for (let i = 0; i < take; i++) {
    const at = Math.floor(i * step) * BLOCK;
    const b = bytes.subarray(at, at + BLOCK);
    out.set(b, o);
    o += b.length;
  }
  return out.subarray(0, o);
}
