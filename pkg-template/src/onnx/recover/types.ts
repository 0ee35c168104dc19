// The shapes of a recovery run: its options, what it reports while it runs and at the end, and the
// state a checkpoint holds (enough to continue an interrupted distillation).
import type { HeldGrid } from '../held-grid.js';
import type { InputSample } from '../calib/inputs.js';
import type { CutStore } from '../calib/cut-store.js';
import type { ModelRunner, OrtLike } from '../calib/ort-runner.js';
import type { FidelityOptions, FidelityReport, OutputKind } from '../fidelity/types.js';

/** A matched tensor: its name, the teacher channel of each student channel (absent: the same), its loss weight. */
/** A matched feature; `dims`: its dims in the student on one sample. */
export interface Feature { name: string; map?: Int32Array; teacherChannels: number; weight: number; dims: number[] }

/**
 * A distillation loss: 'logits' (MSE on a final Softmax's input, or on a language model's logits),
 * 'kl' (on the probabilities: a final Softmax's, or the softmax of a language model's logits),
 * 'bce' (a Sigmoid map), 'cosine' (1 - cosine, an embedding), 'mse'.
 */
export type LossName = 'logits' | 'kl' | 'bce' | 'cosine' | 'mse';

/** The phases of {@link recover}, in the order they run. */
export type RecoverPhase = 'teacher' | 'stats' | 'lsq' | 'distill' | 'eval';

/** What {@link RecoverOptions.onProgress} gets. */
export interface RecoverProgress {
  phase: RecoverPhase;
  /** Steps done in this phase and planned (distill: Adam steps; stats / lsq: layers). */
  step: number;
  steps: number;
  /** Distill: the epoch under way (1-based) and the number planned (Infinity with a time budget only). */
  epoch?: number;
  epochs?: number;
  /** Distill: the mean loss of the epoch so far. */
  loss?: number;
  /** Seconds left, estimated from the pace so far (undefined until one step is timed). */
  eta?: number;
  /** The held-out fidelity (worst output's score) last measured. */
  fidelity?: number;
  /** Distill: the learning rate the step used, read back from the trainer (the schedule's value, in f32). */
  lr?: number;
}

/**
 * A checkpoint: the trained parameters after `epoch` completed epochs (they hold the closed-form
 * steps' outcome, so a resumed run does not redo them), the best-scoring ones so far, and the
 * trainer's whole state (Adam's moments), so that a resumed run continues as an uninterrupted one.
 */
export interface RecoverState {
  version: 1;
  /** Epochs of distillation completed. */
  epoch: number;
  /** Adam steps taken. */
  steps: number;
  /** Parameters by initializer name, as they are now. */
  params: Record<string, Float32Array>;
  /** The best-scoring parameters so far and their held-out score. */
  best: Record<string, Float32Array>;
  bestScore: number;
  /** Every distill epoch's mean loss and held-out score. */
  history: { epoch: number; loss: number; fidelity: number }[];
  /** The trainer's whole state (parameters, Adam's moments, keep-masks: Trainer.saveState); absent in a parameters-only checkpoint. */
  trainer?: Uint8Array;
}

/** Options of {@link recover}. */
export interface RecoverOptions extends FidelityOptions {
  /** An onnxruntime namespace (onnxruntime-node / -web) or a runner: runs the teacher and measures fidelity. */
  ort: OrtLike | ModelRunner;
  sessionOptions?: object;
  /**
   * Where the teacher's targets wait between epochs (held-arrays.ts): a cut store, or 'file' in
   * Node (an unlinked scratch file); default memory. The same values either way.
   */
  cutStore?: CutStore | 'file';
  /** Held-out samples for the fidelity that decides what is kept (default: the training samples, said in the report). */
  evalSamples?: InputSample[];
  /** Which steps run (default all three, in this order). */
  steps?: ('stats' | 'lsq' | 'distill')[];
  /** Distillation length: epochs over the samples (default 4) and/or a time budget in minutes; the first reached stops. */
  epochs?: number;
  minutes?: number;
  /** Adam's learning rate (default 1e-4; a schedule's peak) and samples per step (default 8). */
  lr?: number;
  batchSize?: number;
  /**
   * The lr over the distillation (lr-schedule.ts): 'constant' (default) or 'cosine'. Cosine: a linear warm-up
   * from a tenth of `lr` over the first `warmup` of the run, then a half cosine back down to a tenth by
   * its end. The run's share done is its steps over those `epochs` plan, or its time over `minutes`.
   */
  schedule?: 'constant' | 'cosine';
  /** The warm-up's share of the run, in [0, 1) (default 0.05 with 'cosine', 0 with 'constant'). */
  warmup?: number;
  /**
   * Weights held on a quantization grid while they train (quantization-aware distillation; by
   * weight name, in each tensor's own layout: quant/held-codes.ts makes them). The closed-form steps
   * leave held weights alone; what recovery keeps is on the grids.
   */
  grids?: ReadonlyMap<string, HeldGrid>;
  /** Statistics correction also matches each channel's standard deviation (default false: means only). */
  scale?: boolean;
  /** Ridge of the least-squares fit, as a fraction of the mean diagonal of its Gram matrix (default 0.01). */
  ridge?: number;
  /**
   * The loss of a classification / sequence output made by a final Softmax, or of a language
   * model's logits: 'logits' (MSE to the teacher's logits) or 'kl' (KL divergence of the
   * probabilities along the Softmax's axis; a language model's next-token distributions).
   * Default: 'logits' for a classification output, 'kl' for a sequence or a language model.
   */
  softmaxLoss?: 'logits' | 'kl';
  /**
   * Matched intermediate tensors distilled besides the outputs: a number of the student's block
   * boundaries (cut points of its graph, evenly spaced, among those the teacher computes with the
   * same dims or more channels), or tensors by name. Default 0: the outputs only.
   */
  features?: number | string[];
  /** Total weight of the feature losses, each a relative MSE (default 1). */
  featureWeight?: number;
  /**
   * Padded text (an `attention_mask` of 0s and 1s, right-padded, every input [1, S]): each batch is cut
   * to its longest real token, with the same loss and gradients as the padded batch (trim-padding.ts),
   * when one run of the teacher on a sample cut that way gives the padded values. Default true; false
   * keeps every batch at the samples' length.
   */
  trimPadding?: boolean;
  /**
   * With trimmed batches, samples of similar length share a batch (Hugging Face's `group_by_length`):
   * runs of 50 batches' worth of the shuffled samples sorted by length, the batches shuffled again.
   * Less padding per batch, at the price of batches that are less random. Default true
   * (TRAINING_DEFAULTS.groupByLength); false keeps the plain shuffle.
   */
  groupByLength?: boolean;
  /** Seed of the sample order (default 1). */
  seed?: number;
  /** A checkpoint to continue from (closed-form steps are skipped: their result is in the parameters). */
  resume?: RecoverState;
  /** Called after each distill epoch with the state to save (awaited). */
  onCheckpoint?: (state: RecoverState) => void | Promise<void>;
  signal?: AbortSignal;
  onProgress?: (p: RecoverProgress) => void;
}

/** One closed-form step's outcome. */
export interface StepReport {
  step: 'stats' | 'lsq';
  /** Layers it changed. */
  layers: number;
  /** Held-out fidelity before and with the step. */
  before: number;
  after: number;
  /** Kept (the fidelity did not drop) or rolled back. */
  applied: boolean;
  ms: number;
  notes: string[];
}

/** What {@link recover} returns. */
export interface RecoverReport {
  /** Held-out fidelity of the pruned model as given, and of the recovered one (each output, worst = score). */
  before: FidelityReport;
  after: FidelityReport;
  closedForm: StepReport[];
  distill?: {
    epochs: number;
    steps: number;
    /** Best held-out score reached, and the epoch it came from (0: before any gradient step). */
    bestScore: number;
    bestEpoch: number;
    history: { epoch: number; loss: number; fidelity: number }[];
    /** The padding mask input whose 0s took the padded tokens out of the per-token losses (token-mask.ts), when samples were padded. */
    paddingMasked?: string;
    /** The loss used per output: 'logits' (MSE on the input of a final Softmax or on a language model's logits), 'kl', 'bce', 'cosine' or 'mse'. */
    losses: Record<string, { kind: OutputKind; loss: LossName }>;
    /** Float parameters trained and their count of values; bytes of state held (weights + Adam moments). */
    params: number;
    stateBytes: number;
    ms: number;
    stopped: 'epochs' | 'time';
    /** The lr schedule (peak `lr`, warm-up share, floor as a fraction of the lr) and the lr of the last step. */
    schedule: { kind: 'constant' | 'cosine'; lr: number; warmup: number; floor: number; lastLr: number };
    /**
     * Where the distillation's time went (ms): the teacher's feature runs, the training core's steps
     * (forward, loss, backward, Adam), the making of the batches, the held-out scoring after each epoch.
     */
    timing: { teacherMs: number; stepMs: number; batchMs: number; scoreMs: number };
    /** Batches cut to their longest real token (trimPadding): the padded length, the mean tokens per sample the steps ran at, whether grouped by length. */
    trimmed?: { tokens: number; meanTokens: number; grouped: boolean };
    /** The matched intermediate tensors: their channels in the student and the teacher, their loss weight. */
    features?: { name: string; channels: number; teacherChannels: number; weight: number }[];
  };
  /** Names of the initializers written into the model. */
  changed: string[];
  /** 'eval' (the held-out samples given) or 'training' (none given: the training samples). */
  judgedOn: 'eval' | 'training';
  samples: number;
  ms: number;
}
