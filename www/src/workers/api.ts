// The APIs of the page's six workers (types only): what each operation takes, returns and reports.
// The page calls them with WorkerClient<…Api>.request(op, payload); each worker serve()s its handlers.
import type { CalibReport, FidelityReport, PlanStep, RecoverProgress, RecoverReport, SensitivityResult } from 'sparsekit-wasm/onnx';
import type { GlobalOption, LayerInput, LayerResult, PruneProgress } from '../prune-core.js';

/** How the pruning worker's engine started (shown in the badge, exposed as its data-attributes). */
export interface EngineInfo {
  /** A rayon pool runs the threaded build. */
  threads: boolean;
  /** The page is cross-origin isolated (SharedArrayBuffer available). */
  isolated: boolean;
  cores: number;
  /** The wasm build in use: 'threads' or 'simd'. */
  variant: string | null;
  /** Why the threaded build's pool did not start (the page then restarts on the single-threaded build). */
  poolError: string | null;
  numThreads: number;
  /** Distinct rayon workers that ran 64 probe tasks (> 1: the pool really runs in parallel). */
  probe: number;
  /** Threads were asked for (?threads=0 turns them off). */
  requested: boolean;
  poolSize: number;
  /** 'unbundled': the package imported from the page's sparsekit/ folder; 'bundled': the fallback copy. */
  source: 'unbundled' | 'bundled';
  url: string | null;
  loadError: string | null;
}

export type PruneApi = {
  /** base: the page's base URL, under which the server puts the unbundled package (sparsekit/). */
  init: { req: { threads: boolean; base: string }; res: EngineInfo };
  prune: {
    req: { layers: LayerInput[]; global: GlobalOption };
    res: { results: LayerResult[]; ms: number; threads: boolean; numThreads: number };
    progress: PruneProgress;
  };
};

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

/** The calibration card's settings, as the calibration worker takes them. */
export interface CalibRequest {
  bytes: Uint8Array;
  criterion: string;
  perLayer: Record<string, string>;
  target: { sparsity: number } | { nm: [number, number] };
  pages: number;
  heldOut: number;
  images: { rgba: Uint8ClampedArray; w: number; h: number; name: string }[];
  sequential: boolean;
  blockSize: number;
  percDamp: number;
  normalization: 'symmetric' | 'imagenet';
}

/** Calibration progress: layers done of total in the current phase ('magnitude: capture', …). */
export interface CalibStep { done: number; total: number; phase: string; layer?: string }

export interface CalibCompareRow { criterion: string; fidelity: number; worst: string; cosine: number; min: number; layers: number }

export type CalibApi = {
  run: { req: CalibRequest; res: { bytes: Uint8Array; report: CalibReport; cosine: { cosine: number; min: number; fidelity: FidelityReport }; engine: string }; progress: CalibStep };
  compare: { req: CalibRequest; res: { rows: CalibCompareRow[]; engine: string }; progress: CalibStep };
};

/** A channel group as the card shows it: counts and members, no internal maps. */
export interface GroupSummary {
  id: number;
  producers: string[];
  channels: number;
  prunable: boolean;
  reason?: string;
  members: { tensor: string; axis: number; kind: string }[];
}

/** What the card reads of removeChannels' report (a JSON copy of it). */
export interface ChannelsReport {
  params: { before: number; after: number };
  groups: { removed: { id: number; channelsAfter: number }[]; kept: unknown[] };
  folded: { biases: number; created?: number };
}

export type ChannelsApi = {
  groups: { req: { bytes: Uint8Array }; res: { groups: GroupSummary[] } };
  remove: {
    req: { bytes: Uint8Array; fraction: number; scope: 'layer' | 'global'; roundTo: number };
    res: { groups: GroupSummary[]; report: ChannelsReport; bytes: Uint8Array; ms: number };
  };
};

/** The goal card's search (workers/search-worker.ts): the package's compress() to a fidelity floor. */
export interface SearchRequest {
  bytes: Uint8Array;
  /** smaller: channels for parameters; faster: channels for measured latency; nm: 2:4 per layer or dense. */
  goal: 'smaller' | 'faster' | 'nm';
  minFidelity: number;
  /** Generated held-out samples the fidelity is measured on. */
  samples: number;
  /** The user's own images (resized to the model's input in the worker), measured on besides the generated samples. */
  images: File[];
  /** Channel fractions tried per group (channels goals). */
  levels: number[];
  /** Candidate plans verified on the whole model, at most. */
  maxSteps: number;
}

/** Search progress: the package's phase (sensitivity cells, then plan verifications). */
export interface SearchStep { phase: 'sensitivity' | 'verify'; done: number; total: number; label: string }

export interface SearchResult {
  /** The chosen plan's model, null when no plan met the floor. */
  bytes: Uint8Array | null;
  recipe: string;
  table: SensitivityResult;
  steps: PlanStep[];
  fidelity: FidelityReport;
  /** Parameters (all weights' elements) and zeros in the prunable weights, before and after. */
  params: { before: number; after: number };
  zeros: { before: number; after: number };
  runs: number;
  sessions: number;
  /** What the fidelity was measured on: the user's images and the generated samples. */
  measuredOn: { images: number; generated: number };
  ms: number;
}

export type SearchApi = {
  run: { req: SearchRequest; res: SearchResult; progress: SearchStep };
};

/** The recovery card (workers/recover-worker.ts): the package's recover() of a pruned model towards the original. */
export interface RecoverRequest {
  /** The original (teacher) and the pruned model (student), self-contained. */
  teacher: Uint8Array;
  student: Uint8Array;
  /** Generated training samples (calibration seeds) and held-out samples (the fidelity that decides what is kept). */
  samples: number;
  heldOut: number;
  /** Which steps run: closed-form statistics correction, least-squares refit, gradient distillation. */
  steps: ('stats' | 'lsq' | 'distill')[];
  epochs: number;
  /** Time budget of the distillation, minutes (0: epochs only). */
  minutes: number;
  lr: number;
  batchSize: number;
  /** Block outputs distilled besides the outputs (recover's `features`; 0: the outputs only). */
  features: number;
}

export interface RecoverResult {
  /** The recovered student. */
  bytes: Uint8Array;
  report: RecoverReport;
  ms: number;
}

export type RecoverApi = {
  run: { req: RecoverRequest; res: RecoverResult; progress: RecoverProgress };
};
