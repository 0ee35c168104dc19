// Similarity-preserving distillation of an embedding. What a sentence embedding is used for is its
// neighbours: its cosine similarities to other embeddings, ranked. The per-sample cosine loss
// (train-setup.ts) pulls the student's embedding towards the teacher's in every direction alike, yet
// an error orthogonal to where the data lies changes no similarity, and one along it reorders
// neighbours. So the student also keeps, per sample, its cosine similarities to a bank of K of the
// teacher's embeddings (the anchors, of training samples spread over the set): the pairwise
// similarity matching of similarity-preserving distillation (Tung & Mori 2019) and relational
// distillation (Park et al. 2019), with the teacher's embedding of the other sample as the fixed side
// of each pair, so that one sample's loss needs no other sample of its batch.
//
// Per sample the loss is the mean over anchors a of (ŝ·a − t̂·a)², i.e. (ŝ − t̂)ᵀ M (ŝ − t̂) with
// M = AᵀA / K the anchors' second moment: an error counted by how much of the data lies along it.
// Unit anchors give trace M = 1, and 1 − cos ≈ |ŝ − t̂|² / 2, so the weight D / 2 puts this loss on the
// cosine loss's scale for an error spread evenly over the D directions; anisotropic embeddings (a
// sentence encoder's are) weigh the directions they use.
import type { OutputLoss, TrainGraph } from 'sparsekit-wasm';
import { OnnxError } from '../errors.js';
import type { HeldArrays } from './held-arrays.js';
import type { TrainSetup } from './train-setup.js';

/** A norm below this is taken as this (torch's F.normalize clips the same way). */
const EPS = 1e-12;

export interface Anchors {
  /** Index of the embedding among the setup's trained tensors (its targets' row in a batch). */
  output: number;
  /** The embedding tensor of the training graph. */
  tensor: string;
  /** K unit rows of D values: the teacher's embeddings of K training samples. */
  bank: Float32Array;
  k: number;
  d: number;
  /** The MSE's weight (D / 2). */
  weight: number;
}

/** `anchors` (recover's option): a count >= 0. */
export function checkAnchors(v: unknown): void {
  if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= 0)) {
    throw new OnnxError('bad_calibration', `anchors must be a count >= 0 (got ${String(v)})`, 'invalid_value');
  }
}

function unitInto(dst: Float32Array, at: number, src: Float32Array, from: number, d: number): void {
  let sq = 0;
  for (let i = 0; i < d; i++) sq += src[from + i] * src[from + i];
  const inv = 1 / Math.max(Math.sqrt(sq), EPS);
  for (let i = 0; i < d; i++) dst[at + i] = src[from + i] * inv;
}

/**
 * The anchors of `setup`'s embedding output: `count` of the teacher's embeddings of the `samples`
 * training samples, evenly spaced over them (their `targets`, per-sample `dims`). None when no trained
 * tensor is an embedding under the cosine loss, when it is not one row per sample ([1, D]: a
 * per-token output has its own cosine per token), or when fewer than two anchors can be had.
 */
export function pickAnchors(setup: TrainSetup, targets: HeldArrays, dims: number[][], samples: number, count: number): Anchors | undefined {
  const output = setup.trained.findIndex((t) => t.loss === 'cosine');
  if (output < 0 || !count) return undefined;
  const shape = dims[output];
  if (shape?.length !== 2 || shape[0] !== 1 || !(shape[1] > 0)) return undefined;
  const d = shape[1], k = Math.min(count, samples);
  if (k < 2) return undefined;
  const bank = new Float32Array(k * d);
  for (let j = 0; j < k; j++) unitInto(bank, j * d, targets.get(output, Math.floor((j * samples) / k)), 0, d);
  return { output, tensor: setup.trained[output].tensor, bank, k, d, weight: d / 2 };
}

/**
 * The trainer's graph and losses with the anchors' similarities after the other outputs: the
 * embedding L2-normalised (ReduceL2, clipped at EPS, Div) times the bank transposed, under an MSE of
 * weight D / 2.
 */
export function withAnchors(graph: TrainGraph, losses: OutputLoss[], a: Anchors | undefined): { graph: TrainGraph; losses: OutputLoss[] } {
  if (!a) return { graph, losses };
  const p = `${a.tensor}::anchors`;
  const bankT = new Float32Array(a.d * a.k);
  for (let j = 0; j < a.k; j++) for (let i = 0; i < a.d; i++) bankT[i * a.k + j] = a.bank[j * a.d + i];
  return {
    graph: {
      ...graph,
      nodes: [
        ...graph.nodes,
        { opType: 'ReduceL2', inputs: [a.tensor], outputs: [`${p}/norm`], attrs: { axes: [-1], keepdims: 1 } },
        { opType: 'Max', inputs: [`${p}/norm`, `${p}/eps`], outputs: [`${p}/clipped`] },
        { opType: 'Div', inputs: [a.tensor, `${p}/clipped`], outputs: [`${p}/unit`] },
        { opType: 'MatMul', inputs: [`${p}/unit`, `${p}/bank`], outputs: [p] },
      ],
      outputs: [...graph.outputs, p],
      initializers: [...graph.initializers, { name: `${p}/eps`, dims: [], values: Float32Array.of(EPS) }, { name: `${p}/bank`, dims: [a.d, a.k], values: bankT }],
      frozen: [...(graph.frozen ?? []), `${p}/eps`, `${p}/bank`],
    },
    losses: [...losses, { kind: 'mse', weight: a.weight }],
  };
}

/** The teacher's similarities to the anchors of a batch's embedding targets (rows of D): rows × K. */
export function anchorTargets(a: Anchors, embedding: Float32Array): Float32Array {
  const rows = embedding.length / a.d;
  const unit = new Float32Array(a.d), out = new Float32Array(rows * a.k);
  for (let r = 0; r < rows; r++) {
    unitInto(unit, 0, embedding, r * a.d, a.d);
    for (let j = 0; j < a.k; j++) {
      let s = 0;
      const at = j * a.d;
      for (let i = 0; i < a.d; i++) s += unit[i] * a.bank[at + i];
      out[r * a.k + j] = s;
    }
  }
  return out;
}
