// What a tensor costs in the download: its bytes after the compression a static host applies, the
// figure the search's `bytes` objective minimises and the report splits by tensor. A weight's
// share is estimated by compressing an evenly spaced sample of its blocks (at most SAMPLE_BLOCKS of
// BLOCK bytes; all of a small tensor) and scaling by its size: pruned and dense versions of one
// weight are sampled at the same positions, so the difference the search ranks by is the
// compressor's, not the sample's. In Node the compressor is brotli at a fast quality (zlib); in a
// browser, which has no brotli compressor, deflate (CompressionStream) — both real, and the ranking
// of options is what matters here; the report's file-level brotli-11 figure (transport-size.ts)
// stays the measure of the result, and the per-tensor split is scaled to it.
import { OnnxError } from './errors.js';
import type { OnnxModel } from './model.js';
import type { TensorProto } from './tensor-data.js';
import { BLOCK, evenBlocks } from './block-sample.js';

/** Compressed size of bytes, by a real compressor; `name` says which (for the report). */
export interface ByteSizer { name: string; size(bytes: Uint8Array): Promise<number> }

const SAMPLE_BLOCKS = 64;
/** Brotli quality of the Node sizer: ~20-50 MB/s here, the transport estimate's fast quality. */
const QUALITY = 5;

const isNode = typeof process !== 'undefined' && !!(process as { versions?: { node?: string } }).versions?.node;

/** The best sizer of the environment: brotli (Node), else deflate (CompressionStream), else a typed refusal. */
export async function byteSizer(): Promise<ByteSizer> {
  if (isNode) {
    // computed specifier: bundlers leave node:zlib out of browser builds (as files.ts does with node-io)
    const zlib: typeof import('node:zlib') = await import(/* @vite-ignore */ /* webpackIgnore: true */ ['node', 'zlib'].join(':'));
    const params = { [zlib.constants.BROTLI_PARAM_QUALITY]: QUALITY };
    return {
      name: `brotli quality ${QUALITY}`,
      size: (bytes) => new Promise((resolve, reject) => zlib.brotliCompress(bytes, { params }, (e, out) => (e ? reject(e) : resolve(out.length)))),
    };
  }
  const CS = (globalThis as { CompressionStream?: new (f: string) => TransformStream<Uint8Array, Uint8Array> }).CompressionStream;
  if (!CS) throw new OnnxError('unsupported', 'the bytes objective needs a compressor: Node, or a browser with CompressionStream', 'unsupported_environment');
  return {
    name: 'deflate (CompressionStream)',
    async size(bytes) {
      const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CS('deflate-raw'));
      let n = 0;
      const reader = stream.getReader();
      for (let r = await reader.read(); !r.done; r = await reader.read()) n += r.value.length;
      return n;
    },
  };
}

/** Estimated compressed bytes of one tensor's stored bytes (see the file comment). */
export async function servedBytes(sizer: ByteSizer, bytes: Uint8Array): Promise<number> {
  if (!bytes.length) return 0;
  const sample = evenBlocks(bytes, SAMPLE_BLOCKS);
  return (await sizer.size(sample)) * (bytes.length / sample.length);
}

/** A float32 array's bytes, as a weight is stored. */
export const floatBytes = (a: Float32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Where a model's served bytes go: each initializer of at least `minBytes`, by part of the model. */
export interface ServedSplit {
  compressor: string;
  /** Estimated compressed bytes per part: embedding tables (read by Gather), the other weights, the rest of the file. */
  parts: { embeddings: number; weights: number; rest: number };
  /** Per tensor, largest first: stored bytes, estimated compressed bytes, the op that reads it. */
  tensors: { name: string; op: string; raw: number; served: number }[];
}

/** Ops that read a table by index: a tensor read (directly or through one dequantize) as their data is an embedding table. */
const TABLE_OPS = new Set(['Gather', 'GatherBlockQuantized']);
const DEQUANTIZE = new Set(['DequantizeLinear', 'Cast', 'Mul']);

/**
 * The split of `total` (the file's compressed size, e.g. transportSize's brotli) over the model's
 * initializers of at least `minBytes`: their estimates, scaled down so that they and the smaller
 * tensors (taken at their raw size) fit within `total`; whatever is left of `total` (the graph's
 * own bytes included, which are not estimated) is `parts.rest`.
 */
export async function servedSplit(model: OnnxModel, total: number, opts: { sizer?: ByteSizer; minBytes?: number } = {}): Promise<ServedSplit> {
  const sizer = opts.sizer ?? await byteSizer();
  const minBytes = opts.minBytes ?? BLOCK;
  const consumers = new Map<string, { op: string; index: number; out: string }[]>();
  for (const n of model.graph.node) {
    (n.input as string[]).forEach((name, index) => {
      if (!consumers.has(name)) consumers.set(name, []);
      consumers.get(name)!.push({ op: n.op_type, index, out: n.output[0] });
    });
  }
  const isTable = (name: string, hops = 2): boolean => (consumers.get(name) ?? []).some((c) =>
    (TABLE_OPS.has(c.op) && c.index === 0) || (hops > 0 && DEQUANTIZE.has(c.op) && isTable(c.out, hops - 1)));
  const tensors: ServedSplit['tensors'] = [];
  let small = 0;
  // initializers and Constant nodes, of every type (quantized codes too)
  for (const [name, { tensor }] of model.constants()) {
    const bytes = model.tensorBytes(tensor as TensorProto);
    if (bytes.length < minBytes) { small += bytes.length; continue; }
    tensors.push({ name, op: isTable(name) ? 'table' : (consumers.get(name)?.[0]?.op ?? ''), raw: bytes.length, served: await servedBytes(sizer, bytes) });
  }
  const estimated = tensors.reduce((a, t) => a + t.served, 0);
  // fitted to the file's figure (quality 11 gains over the sizer's fast setting); the small tensors
  // are deducted at their raw size, an upper bound that is a small share of any model
  const scale = estimated > 0 ? Math.min(1, Math.max(0, total - small) / estimated) : 0;
  for (const t of tensors) t.served *= scale;
  tensors.sort((a, b) => b.served - a.served);
  const parts = { embeddings: 0, weights: 0, rest: 0 };
  for (const t of tensors) parts[t.op === 'table' ? 'embeddings' : 'weights'] += t.served;
  parts.rest = Math.max(0, total - parts.embeddings - parts.weights);
  return { compressor: sizer.name, parts, tensors };
}
