// The APIs of the page's workers (types only): what each operation takes, returns and reports.
// The page calls them with WorkerClient<…Api>.request(op, payload); each worker serve()s its handlers.
import type { CompressResult, JobMethod, JobReport } from 'sparsekit-wasm/onnx';
import type { LayerResult } from '../layer-result.js';

/**
 * How the job worker's sparsekit-wasm started (shown in the badge, exposed as its data-attributes):
 * the bundled single-threaded build that runJob runs on, in the page as in the CLI.
 */
export interface EngineInfo {
  /** The wasm build in use ('simd'). */
  variant: string | null;
  cores: number;
  /** The page is cross-origin isolated (onnxruntime-web may use SharedArrayBuffer). */
  isolated: boolean;
}

/** One input of a test run: its name, ONNX element type and concrete shape. */
export interface InputSpec { name: string; elemType: number; shape: number[] }
/** A model as onnxruntime-web takes it: its bytes and its external data files. */
export interface ModelFiles { model: Uint8Array; externalData: { path: string; data: Uint8Array }[] }
/** One model's side of an interleaved timing: its outputs (as float) and its run times after warm-up. */
export interface BenchSide {
  outputs: Record<string, Float32Array>;
  shapes: Record<string, readonly number[]>;
  medianMs: number;
  times: number[];
}

export type EvalApi = {
  /**
   * Both models on the same deterministic input: `warmup` runs each (discarded), then `runs` rounds
   * alternating a / b, so that a slow spell of the shared machine hits both; medians per model.
   * Errors: 'ort_session_failed' (the model does not load), 'ort_run_failed' (it does not run on
   * these inputs), 'invalid_input_shape'.
   */
  bench: { req: { a: ModelFiles; b: ModelFiles; inputs: InputSpec[]; runs: number; warmup: number }; res: { a: BenchSide; b: BenchSide } };
};

/** The calibration card's settings, as the calibration worker builds its jobs from them. */
export interface CalibRequest {
  bytes: Uint8Array;
  /** The job's method (the comparison runs all three). */
  criterion: JobMethod;
  /** Layers the card keeps dense (by name): the job becomes a recipe with these left out. */
  dense: Record<string, true>;
  target: { sparsity: number } | { nm: [number, number] };
  pages: number;
  heldOut: number;
  images: { rgba: Uint8ClampedArray; w: number; h: number; name: string }[];
  sequential: boolean;
  percDamp: number;
  normalization: 'symmetric' | 'imagenet';
}

/** Calibration progress: the job's phase, layers done of total, the current layer. */
export interface CalibStep { done: number; total: number; phase: string; layer?: string }

export interface CalibCompareRow { criterion: string; fidelity: number; worst: string; cosine: number; layers: number }

export type CalibApi = {
  run: { req: CalibRequest; res: { bytes: Uint8Array; report: JobReport; engine: string }; progress: CalibStep };
  compare: { req: CalibRequest; res: { rows: CalibCompareRow[]; engine: string }; progress: CalibStep };
};

/** A channel group as the card shows it: counts and members, no internal maps. */
export interface GroupSummary {
  id: number;
  producers: string[];
  channels: number;
  prunable: boolean;
  reason?: string;
  /** Query heads within KV groups (heads 'query'): how many KV groups share the units. */
  runs?: number;
  members: { tensor: string; axis: number; kind: string }[];
}

/** Grouped-query attention's unit: whole KV groups, or query heads within them (the package's HeadUnit). */
export type HeadUnit = 'groups' | 'query';

/** What the card reads of removeChannels' report (a JSON copy of it). */
export interface ChannelsReport {
  params: { before: number; after: number };
  groups: { removed: { id: number; channelsAfter: number }[]; kept: unknown[] };
  folded: { biases: number; created?: number };
}

export type ChannelsApi = {
  groups: { req: { bytes: Uint8Array; heads: HeadUnit }; res: { groups: GroupSummary[] } };
  remove: {
    req: { bytes: Uint8Array; fraction: number; scope: 'layer' | 'global'; roundTo: number; heads: HeadUnit };
    res: { groups: GroupSummary[]; report: ChannelsReport; bytes: Uint8Array; ms: number };
  };
};

/**
 * The job card's settings (workers/job-worker.ts builds one PruneJob from them, as the CLI's `prune`
 * builds one from its flags, and runs the package's runJob).
 */
export interface JobRequest {
  bytes: Uint8Array;
  /**
   * smaller / faster: remove channels (faster: the search minimises measured latency); nm: N:M;
   * sparsity: unstructured; recipe: the per-layer table's settings (`recipe`); layers: whole residual
   * blocks, least influential on the calibration samples first (ShortGPT).
   */
  goal: 'smaller' | 'faster' | 'nm' | 'sparsity' | 'recipe' | 'layers';
  /** goal recipe: the recipe JSON the layer table wrote (layer-recipe.ts), as `prune --recipe` reads it. */
  recipe?: object | null;
  /** The model's external data files (a model saved with them), by the location the model names. */
  external?: { path: string; data: Uint8Array }[];
  /** The name the result's data file takes when the input's external data came in several files. */
  dataName?: string;
  /** A fidelity floor: the job searches per-layer settings down to it; null: the fixed amount below everywhere. */
  floor: number | null;
  /** Fixed amount (no floor): the channel fraction (smaller / faster) or the sparsity, in [0, 1); goal layers: the count of blocks. */
  amount: number;
  /** The N:M pattern (goal nm), as the text the user typed ("2:4"): the package's parseNm reads it. */
  nm: string;
  /** The search's candidate levels (channels, sparsity) and plans verified at most. */
  levels: number[];
  maxSteps: number;
  method: JobMethod;
  /** `embeddings`: the embedding tables' own bits (absent: the scheme's). */
  quantize: { scheme: 'int8' | 'int4'; group: number; embeddings?: 'int8' | 'int4' | 'int3' | 'float' } | null;
  samples: JobSamplesRequest;
  /** Recovery towards the original as the job's last step, or none. */
  recover: { steps: ('stats' | 'lsq' | 'distill')[]; epochs: number; minutes: number; lr: number; batchSize: number; features: number } | null;
}

/** Where the job's samples come from: generated, the user's images, or text for a language model. */
export interface JobSamplesRequest {
  /** Calibration (and training) samples generated when there is no text. */
  calibration: number;
  /** Held-out samples generated (besides the images) when there is no text: the fidelity is measured on them. */
  heldOut: number;
  /** The user's images, drawn at the model's input size: held-out samples. */
  images: File[];
  /** Text (pasted or a .txt / .jsonl), cut with the model folder's tokenizer.json: the first windows calibrate, the last ones are held out. */
  text: { text: string; format: 'txt' | 'jsonl'; tokenizer: string; seqLen: number } | null;
}

/** Job progress: the package's phase (prune, calibration, sensitivity, verify, recovery, quantize). */
export interface JobStep { phase: string; done: number; total: number; label: string; epoch?: number; fidelity?: number }

export interface JobResultMsg {
  /** The job's model, null when a search found no plan that meets the floor. */
  bytes: Uint8Array | null;
  /** Its external data file, when the input had external data (one file, named as the input's when it had one). */
  external: { path: string; data: Uint8Array }[];
  /** runJob's report (a JSON copy); for a failed search, its figures alone. */
  report: JobReport | null;
  search: Omit<CompressResult, 'model' | 'report'> | null;
  /** Parameters (all weights' elements) and zeros in the prunable weights, before and after. */
  params: { before: number; after: number };
  zeros: { before: number; after: number };
  /** The job's samples: how many of each kind, as the summary says. */
  measuredOn: { images: number; generated: number; text: number; calibration: number };
  /** The prunable weights of the result, for the weights view. */
  layers: LayerResult[];
  ms: number;
}

export type JobApi = {
  init: { req: Record<string, never>; res: EngineInfo };
  run: { req: JobRequest; res: JobResultMsg; progress: JobStep };
};
