// The shapes of a fidelity report, shared by the per-kind metrics and the entry point (index.ts).
import type { SampleInputs } from './token-inputs.js';

/** One output's values as float32, with its dims when they are known (runSet sets them). */
export type OutputArray = Float32Array & { dims?: number[] };

/**
 * One sample's outputs by name. The arrays are plain Float32Arrays carrying their dims as a `.dims`
 * property, which a structured clone (postMessage) drops: pass `shapes` to fidelity() then.
 */
export type Outputs = Record<string, OutputArray>;

/** What an output holds, which decides how its agreement with the original is measured. */
export type OutputKind = 'classification' | 'detection' | 'dense-map' | 'sequence' | 'language-model' | 'embedding' | 'generic';

/** The agreement of one output of the pruned model with the same output of the original. */
export interface OutputFidelity {
  name: string;
  kind: OutputKind;
  /** In [0, 1]; 1 = the pruned model decides exactly as the original on every sample. */
  score: number;
  /** The kind's own figures (agreement rates, KL divergence, F1, cosine...), by name. */
  metrics: Record<string, number>;
  /** One line on how the output was read (layout, thresholds, why a kind was chosen). */
  detail?: string;
  /** How many counted decisions `score` is a share of; absent for generic outputs. */
  decisions?: number;
}

/** Every output's fidelity; the model's is its worst output's. */
export interface FidelityReport {
  /** The worst output's score. */
  score: number;
  /** The name of that output. */
  worst: string;
  outputs: OutputFidelity[];
  /** Samples compared. */
  samples: number;
}

/** Options of the detection metric (YOLO-style heads). */
export interface DetectionOptions {
  /** Boxes whose class score is below this are dropped before NMS (default 0.25). */
  scoreThreshold?: number;
  /** NMS overlap: a box overlapping a higher-scored box of its class above this is dropped (default 0.45). */
  nmsIou?: number;
  /** A pruned box matches an original one of the same class at IoU >= this (default 0.5). */
  matchIou?: number;
  /**
   * Whether column 4 of each anchor is an objectness score multiplying the class scores (YOLOv5 /
   * v7 (N, A, 5+C)). Default: true when anchors come first (N, A, K), false when channels come
   * first (N, 4+C, A), the layouts those exports use.
   */
  objectness?: boolean;
}

/** Options of the dense-map metric. */
export interface DenseMapOptions {
  /** Single-channel maps are thresholded here (default 0.3, DB's binarisation threshold). */
  threshold?: number;
  /** Components smaller than this many pixels are ignored (default 4). */
  minArea?: number;
  /** Components whose bounding box is thinner than this are ignored (default 3, DB's min_size; 1: none). */
  minSide?: number;
  /** Single-channel maps: components whose mean value is below this are ignored (default 0.6, DB's box_thresh; 0: none). */
  minScore?: number;
}

/** Options of {@link fidelity}. */
export interface FidelityOptions {
  /** The kind per output name; outputs not named are detected from their shape and values. */
  kinds?: Record<string, OutputKind>;
  /** Dims per output name, for arrays that do not carry their own (`.dims`). */
  shapes?: Record<string, number[]>;
  detection?: DetectionOptions;
  denseMap?: DenseMapOptions;
  /** Index of the CTC blank class for sequences (default 0, as PaddleOCR and most CTC heads). */
  blank?: number;
  /**
   * The samples the outputs were computed on (the held-out InputSample[], same order). Text models:
   * their `input_ids` are the targets of the language-model kind's perplexity, their
   * `attention_mask` leaves padding out of both text kinds, and token inputs let those kinds be
   * detected. Sensitivity, compress, recover and evaluate pass their held-out samples here.
   */
  inputs?: readonly SampleInputs[];
  /** The tokenizer's vocabulary size: a [B, S, V] output with V >= it is read as next-token logits. */
  vocabSize?: number;
}

/** One sample of one output: the original's values, the pruned model's, and their dims. */
export interface Pair {
  ref: Float32Array;
  out: Float32Array;
  dims: number[];
}

/** What a per-kind metric returns. */
export interface KindResult {
  score: number;
  metrics: Record<string, number>;
  detail?: string;
  /**
   * How many counted decisions the score is a share of (rows, symbols, boxes or regions of both
   * models); absent where the score is not such a share (cosines and errors of generic outputs).
   */
  decisions?: number;
}
