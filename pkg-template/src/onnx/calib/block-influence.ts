// ShortGPT's block influence, measured: BI = 1 − cos(hidden state in, hidden state out) per token,
// averaged over the calibration samples' tokens. A block whose output points where its input did
// changes the stream least; removing the blocks of lowest influence is ShortGPT's layer removal.
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { CancelledError, turn } from './cancel.js';
import type { InputSample } from './inputs.js';
import type { ModelRunner } from './ort-runner.js';
import { outputAsFloat } from './evaluate.js';
import { findResidualBlocks, type ResidualBlock } from '../residual-blocks.js';
import { rowDistance } from './row-distance.js';

export interface BlockInfluence { block: ResidualBlock; influence: number; tokens: number }

/** The influence of every residual block of `model` on `samples` (one onnxruntime session). */
export async function blockInfluence(model: OnnxModel, runner: ModelRunner, samples: InputSample[], opts: { blocks?: ResidualBlock[]; signal?: AbortSignal } = {}): Promise<BlockInfluence[]> {
  const blocks = opts.blocks ?? findResidualBlocks(model);
  if (!blocks.length) throw new OnnxError('unsupported', 'the model has no residual blocks (Add of a value and a branch computed from it)', 'invalid_arguments');
  if (!samples.length) throw new OnnxError('unsupported', 'block influence needs calibration samples', 'invalid_arguments');
  const g = model.graph;
  const names = [...new Set(blocks.flatMap((b) => [b.input, b.output]))];
  const have = new Set(g.output.map((o: { name: string }) => o.name));
  const before = g.output.length;
  for (const n of names) if (!have.has(n)) g.output.push({ name: n, type: { tensor_type: { elem_type: 1 } } });
  let bytes: Uint8Array;
  try { bytes = model.encode(); } finally { g.output.length = before; }
  const sums = blocks.map(() => [0, 0]);
  const session = await runner.createSession(bytes);
  try {
    for (const { feeds } of samples) {
      await turn();
      if (opts.signal?.aborted) throw new CancelledError();
      const out = await session.run(feeds, names);
      blocks.forEach((b, k) => {
        const x = out[b.input], y = out[b.output];
        const width = x.dims[x.dims.length - 1];
        if (!width || x.dims.join() !== y.dims.join()) throw new OnnxError('unsupported', `block ${k}: its input ${b.input} and output ${b.output} differ in shape`, 'shape_mismatch');
        const [s, n] = rowDistance(outputAsFloat(x), outputAsFloat(y), width);
        sums[k][0] += s;
        sums[k][1] += n;
      });
    }
  } finally { await session.release(); }
  return blocks.map((block, k) => ({ block, influence: sums[k][1] ? sums[k][0] / sums[k][1] : 0, tokens: sums[k][1] }));
}

/** How many of `blocks` may go at once: the removable ones (residual-blocks.ts), and one block stays. */
export function mostRemovable(blocks: ResidualBlock[]): number {
  return Math.min(blocks.length - 1, blocks.filter((b) => b.removable).length);
}

/** Refuses a count of blocks to remove that is not between 1 and mostRemovable, naming the blocks that cannot go. */
export function checkRemovalCount(blocks: ResidualBlock[], count: number): void {
  const most = mostRemovable(blocks);
  if (Number.isInteger(count) && count >= 1 && count <= most) return;
  const fixed = blocks.filter((b) => !b.removable);
  const why = fixed.length ? `; ${fixed.length} cannot be removed: ${fixed.map((b) => `block ${b.index} ${b.why}`).join(', ')}` : '';
  throw new OnnxError('unsupported', `cannot remove ${count} of ${blocks.length} blocks (at least 1, at most ${most}${why})`, 'invalid_value');
}

/** The `count` removable blocks of lowest influence (ties to the later block), in block order. */
export function leastInfluential(influence: BlockInfluence[], count: number): number[] {
  checkRemovalCount(influence.map((b) => b.block), count);
  const order = influence.map((b, k) => k).filter((k) => influence[k].block.removable).sort((p, q) => influence[p].influence - influence[q].influence || q - p);
  return order.slice(0, count).sort((a, b) => a - b);
}
