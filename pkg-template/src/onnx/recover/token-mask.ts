// Padded text in a distillation. A text encoder's samples are padded to one length so that they
// stack into batches, and the attention mask says which tokens are real. A mean squared error over
// a per-token tensor ([1, S, C] per sample: a hidden state, a block output) would also pull the
// student towards the teacher's values at the padded positions, which nothing reads: attention
// masks them out as keys, mean pooling skips them, and an application reading per-token states
// (transformers.js' feature extraction) pools with the same mask. Matching them spends a pruned
// student's capacity on values without a use; short sentences padded to a common length are mostly
// padding. So the teacher's targets are zeroed at the padded tokens, and for a mean squared error
// the student's tensor is multiplied by the mask in the trainer's graph (a Mul appended after it:
// its gradient is zero there). A per-token cosine loss needs only the targets: the training core
// leaves a target row of zero norm out of the loss and its mean (src/train/loss.rs). Other losses
// (a pooled embedding's cosine, a language model's KL over windows without padding) are untouched.
import type { OutputLoss, TrainGraph } from 'sparsekit-wasm';
import type { InputSample } from '../calib/inputs.js';
import { HeldArrays } from './held-arrays.js';

/** The input name every transformers export and the text module give the padding mask. */
export const MASK = 'attention_mask';

/**
 * What the distillation masks: the mask input, its length S, the trained tensors whose targets are
 * zeroed at padded tokens (`masked`), and those of them also masked in the graph (`inGraph`: MSE).
 */
export interface TokenMask { input: string; tokens: number; masked: boolean[]; inGraph: boolean[] }

/**
 * The padding of `samples` for a trainer with `inputs`, the per-sample `dims` of its trained tensors
 * (outputs, then features) and their `losses`: masked are the tensors of dims [1, S, C] under a mean
 * squared error or a cosine, when the trainer reads `attention_mask` of dims [1, S], its values are 0
 * or 1, and some sample pads (holds a 0). Undefined when nothing is masked.
 */
export function tokenMask(samples: InputSample[], inputs: readonly string[], dims: readonly (readonly number[])[], losses: readonly OutputLoss[]): TokenMask | undefined {
  if (!inputs.includes(MASK) || !samples.length) return undefined;
  const first = samples[0].feeds[MASK];
  if (!first || first.dims.length !== 2 || first.dims[0] !== 1) return undefined;
  const tokens = first.dims[1];
  let pads = false;
  for (const s of samples) {
    const m = s.feeds[MASK];
    if (!m || m.dims.length !== 2 || m.dims[0] !== 1 || m.dims[1] !== tokens) return undefined;
    for (let i = 0; i < m.data.length; i++) {
      const v = Number(m.data[i]);
      if (v === 0) pads = true;
      else if (v !== 1) return undefined;
    }
  }
  if (!pads) return undefined;
  const perToken = (d: readonly number[]) => d.length === 3 && d[0] === 1 && d[1] === tokens && d[2] > 0;
  const masked = dims.map((d, i) => (losses[i]?.kind === 'mse' || losses[i]?.kind === 'cosine') && perToken(d));
  const inGraph = masked.map((m, i) => m && losses[i].kind === 'mse');
  return masked.some(Boolean) ? { input: MASK, tokens, masked, inGraph } : undefined;
}

/** The trainer's graph with each output masked in the graph replaced by itself times the mask (broadcast over its last axis). */
export function maskGraph(graph: TrainGraph, mask: TokenMask): TrainGraph {
  if (!mask.inGraph.some(Boolean)) return graph;
  const asFloat = `${mask.input}::float`, column = `${mask.input}::column`;
  const nodes = [
    ...graph.nodes,
    { opType: 'Cast', inputs: [mask.input], outputs: [asFloat], attrs: { to: 1 } },
    { opType: 'Unsqueeze', inputs: [asFloat], outputs: [column], attrs: { axes: [-1] } },
  ];
  const outputs = graph.outputs.map((o, i) => {
    if (!mask.inGraph[i]) return o;
    const kept = `${o}::tokens`;
    nodes.push({ opType: 'Mul', inputs: [o, column], outputs: [kept], attrs: {} });
    return kept;
  });
  return { ...graph, nodes, outputs };
}

/**
 * Zeroes, in place, the padded tokens of a target stacked from samples `idx` ([N, T, C]), T being the
 * samples' mask length: S, or the L of a batch trimmed to its longest real token (trim-padding.ts).
 */
export function zeroPadded(values: Float32Array, samples: InputSample[], idx: readonly number[], mask: TokenMask): void {
  if (!idx.length) return;
  const tokens = samples[idx[0]].feeds[mask.input].dims[1];
  const per = values.length / idx.length, width = per / tokens;
  idx.forEach((k, j) => {
    const m = samples[k].feeds[mask.input].data;
    for (let t = 0; t < tokens; t++) if (Number(m[t]) === 0) values.fill(0, j * per + t * width, j * per + (t + 1) * width);
  });
}

/** What a distillation trains once the padding is masked: the graph, and the features' targets of a batch masked the same way. */
export interface MaskedTraining { graph: TrainGraph; mask?: TokenMask; features: (values: Float32Array[], idx: readonly number[], from?: InputSample[]) => Float32Array[] }

/**
 * The padding of a distillation (see tokenMask) applied: the graph with its per-token outputs
 * masked, and the output targets (`targets[o][sample]`, in graph.outputs order before the features)
 * zeroed at the padded tokens (in place in memory, again in their store); per batch, `features` does the same to the features' targets
 * (of samples `idx` of the training set, or of `from`).
 */
export function maskPadding(samples: InputSample[], graph: TrainGraph, losses: readonly OutputLoss[], dims: readonly (readonly number[])[], targets: Float32Array[][] | HeldArrays): MaskedTraining {
  const mask = tokenMask(samples, graph.inputs, dims, losses);
  if (!mask) return { graph, features: (v) => v };
  const held = Array.isArray(targets) ? HeldArrays.of(targets) : targets;
  // in place in memory; a stored target is read, zeroed and stored again
  for (let o = 0; o < held.outputs; o++) {
    if (!mask.masked[o]) continue;
    for (let k = 0; k < held.samples(o); k++) { const t = held.get(o, k); zeroPadded(t, samples, [k], mask); held.set(o, k, t); }
  }
  const first = held.outputs;
  return {
    graph: maskGraph(graph, mask),
    mask,
    // `from`: the batch's samples when they are not the training set's (trimmed copies, trim-padding.ts)
    features: (values, idx, from = samples) => { values.forEach((v, j) => { if (mask.masked[first + j]) zeroPadded(v, from, idx, mask); }); return values; },
  };
}
