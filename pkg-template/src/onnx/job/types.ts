// One pruning job: what to prune and how, on which samples, to what floor, with recovery, as one
// typed value. The CLI, the module's callers and the playground each build a PruneJob and hand it
// to runJob, so a setting means the same thing on every face (defaults.ts holds its defaults,
// check.ts its validation, run.ts what it does).
import type { Scope } from '../prune.js';
import type { InputSample } from '../calib/inputs.js';
import type { ModelRunner, OrtLike } from '../calib/ort-runner.js';
import type { CutStore } from '../calib/cut-store.js';
import type { ChannelScore } from '../calib/defaults.js';
import type { HeadUnit } from '../channels/types.js';
import type { OutputKind } from '../fidelity/types.js';
import type { Recipe } from '../recipe/recipe.js';
import type { Objective } from '../search/allocate.js';
import type { TokenizerSource } from '../text/tokenizer.js';

/** How weights are scored: by magnitude, or calibrated (Wanda's |W|·‖x‖, SparseGPT's compensated solve). */
export type JobMethod = 'magnitude' | 'wanda' | 'sparsegpt';

/** What the job prunes. Exactly one mode per job. */
export type JobMode =
  /**
   * Zero the fraction `sparsity` of the smallest blocks (`block`, default 1x1) per `scope`.
   * `allocation: 'owl'` gives each layer its own sparsity from its share of outlier weights on the
   * calibration samples (OWL; the mean stays `sparsity`); default 'uniform'.
   */
  | { kind: 'sparsity'; sparsity: number; block?: [number, number]; scope?: Scope; allocation?: 'uniform' | 'owl' }
  /** Keep n of every m weights along the reduction axis (layers whose axis is not a multiple of m stay dense). */
  | { kind: 'nm'; nm: [number, number] }
  /**
   * Remove the fraction `fraction` of output channels along dependency groups (scope 'layer', the
   * default: of every group; 'global': of the groups' parameters, over the model), each producer
   * keeping a multiple of `roundTo` features (default 8; an attention head counts its width). `score`
   * (methods wanda / sparsegpt): how the calibrated removal ranks channels, 'activations' (the default
   * without attention heads), 'fluctuation' (what the consumers lose, FLAP's metric; the default
   * in a language model), 'weights', or 'influence' (the default of other models with attention heads:
   * each head's measured effect on the outputs, the heads of all layers ranked together, so that as
   * many heads go as the per-group cut removes, where they matter least; the other groups by
   * fluctuation). `heads` (grouped-query attention): 'groups' (the default) removes a KV head with its
   * query heads; 'query' removes query heads within their KV groups, the same count from each (so
   * n_rep shrinks) and keeps the K/V heads (and a KV cache) whole.
   */
  | { kind: 'channels'; fraction: number; roundTo?: number; scope?: 'layer' | 'global'; score?: ChannelScore; heads?: HeadUnit }
  /**
   * Whole residual blocks (decoder layers), as ShortGPT removes them: the `count` blocks of lowest
   * influence (1 − cos(hidden in, hidden out), averaged over the calibration samples' tokens).
   */
  | { kind: 'layers'; count: number }
  /** Per-layer settings from a recipe (parsed JSON, its text, or a Recipe). */
  | { kind: 'recipe'; recipe: Recipe | object | string }
  /**
   * The search: per-layer settings of `target` ('sparsity' | 'channels': levels chosen per unit;
   * 'nm': which layers get `nm`) that keep the held-out fidelity >= `minFidelity`; or, target
   * 'layers', the most whole residual blocks that can go, least influential first (search/layer-count.ts;
   * calibration samples measure the influence, `confidence` applies, the other options do not).
   */
  | {
    kind: 'search'; target: 'sparsity' | 'nm' | 'channels' | 'layers'; minFidelity: number; nm?: [number, number]; levels?: number[];
    objective?: Objective; confidence?: number; maxSteps?: number; tableSamples?: number; roundTo?: number;
    /** Target 'channels': grouped-query attention's unit, as in mode 'channels'. */
    heads?: HeadUnit;
  }
  /** Block sparsity reached by proximal sparse training (distillation with the block soft threshold), then the exact cut. */
  | {
    kind: 'prox'; sparsity: number; block?: [number, number]; scope?: 'layer' | 'global'; epochs?: number; minutes?: number;
    ramp?: number; recoverEpochs?: number; recoverMinutes?: number;
  };

/** Distillation towards the original after pruning (or, for `prox`, during it). */
export interface JobTraining {
  /** Epochs (default 4), or a time budget in minutes (the first reached stops). */
  epochs?: number;
  minutes?: number;
  lr?: number;
  batchSize?: number;
  /**
   * The lr over the run: 'constant', or 'cosine' (a linear warm-up over `warmup` of the run, then a
   * half cosine down to a tenth of `lr` at its end; recover/lr-schedule.ts). Default in JOB_DEFAULTS.
   * With prox, the recovery after the cut follows it; the proximal phase keeps a constant lr.
   */
  schedule?: 'constant' | 'cosine';
  /** The warm-up's share of the run, in [0, 1) (default 0.05 with 'cosine', 0 with 'constant'). */
  warmup?: number;
  /** Which recovery steps run (default all three). */
  steps?: ('stats' | 'lsq' | 'distill')[];
  /** Matched block outputs distilled as well: a count, or tensor names. */
  features?: number | string[];
  featureWeight?: number;
  softmaxLoss?: 'logits' | 'kl';
  /** Padded text: batches cut to their longest real token (default true; recover's trimPadding). */
  trimPadding?: boolean;
  /** With trimmed batches, samples of similar length batched together (default false; recover's groupByLength). */
  groupByLength?: boolean;
}

export interface PruneJob {
  mode: JobMode;
  /** Scoring (default magnitude); wanda / sparsegpt need calibration samples and onnxruntime. */
  method?: JobMethod;
  /**
   * Calibration (and training) samples; `percDamp` SparseGPT's damping (default 0.1; 0.01 for a
   * language model) and GPTQ's (default 0.01 in a GPTQ pass of its own, as SparseGPT's in the joint
   * pass), `sequential` layer by layer (default).
   */
  calibration?: {
    samples: InputSample[]; percDamp?: number; sequential?: boolean;
    /** SparseGPT's refit steps after each layer's solve (default in JOB_DEFAULTS; 0: SparseGPT as published). */
    refit?: number;
    /**
     * Channels with SparseGPT: compensate each consumer whose bias takes the mean shift on its inputs'
     * centred statistics (default true; removeChannelsCalibrated's `centre` says why).
     */
    centre?: boolean;
    /** GPTQ's act-order with static groups in a GPTQ pass of its own (not the joint pass); default in JOB_DEFAULTS. */
    actOrder?: boolean;
    /** GPTQ's scale search per group; default in JOB_DEFAULTS for layers GPTQ quantizes without a pruning target, off in the joint pass's pruned layers. */
    scaleSearch?: boolean;
    /**
     * The pruning's and quantization's statistics (Wanda, SparseGPT, GPTQ, channel scores, OWL, block
     * influence) read the first `statsLimit` samples; recovery and sparse training read them all.
     * Default: every sample, or JOB_DEFAULTS.trainingStatsLimit when the job also trains. A
     * layer's statistics are a mean over its inputs and settle after a few hundred samples
     * (SparseGPT and Wanda calibrate on 128), while distillation keeps gaining from more text and
     * the sweep's cost grows with every sample: MiniLM-L6's `--channels 0.5 --method sparsegpt` took
     * 80 s on 512 descriptions and 8.9 minutes (2 cores) on 8 192.
     */
    statsLimit?: number;
  };
  /**
   * Weights the sparsity and N:M modes leave dense. Default: a language model's output head (the
   * layer whose outputs number a token embedding's rows), as SparseGPT and Wanda leave it, and a fixed
   * projection 0..C-1 (YOLOv8's DFL, not a learned weight); [] prunes every layer. A recipe or a
   * searched plan says per layer instead.
   */
  keepDense?: string[];
  /**
   * The tokenizer that makes this model's input ids (a parsed tokenizer.json, or a loaded
   * @huggingface/tokenizers Tokenizer). The rows of the token embedding it can never produce (a
   * WordPiece vocabulary's placeholders, upper-case or accented entries under a lowercasing
   * normalizer, continuations the pre-tokenizer always cuts off) are written as zeros, which a
   * compressed download stores in almost nothing; the output for any text it encodes is unchanged
   * (text/unreachable-tokens.ts). Give it only when every input id comes from this tokenizer.
   */
  tokenizer?: TokenizerSource;
  /** Held-out samples: the fidelity of the result is measured on them, the search's floor too. */
  eval?: { samples: InputSample[]; kinds?: Record<string, OutputKind> };
  /** Recover the pruned model towards the original afterwards (distillation on the calibration samples). */
  recover?: JobTraining | true;
  /**
   * Quantize the result: int8 per output channel, or int4 in blocks of `group` (default 32) along the
   * reduction axis (MatMulNBits; embedding tables 4-bit per row in the same blocks); pruned zeros
   * stay zero. `method`: 'gptq' (the default when there are calibration samples) compensates each
   * layer's rounding through its Hessian, layer after layer (jointly with SparseGPT's pruning when
   * that runs); 'rtn' rounds to nearest (the default, and the only way, without samples). A model
   * whose weights are already quantized is read back to float, pruned, and written again in its own
   * scheme unless this asks for another. A recipe's per-layer `quantize` overrides the scheme per
   * layer; a search of sparsity / nm by `objective: 'bytes'` chooses each layer's bits (the mixed search).
   */
  quantize?: {
    scheme: 'int8' | 'int4'; group?: number; method?: 'gptq' | 'rtn';
    /**
     * Embedding tables: the scheme's bits by default, or int8 per row, int4 or int3 (8 levels, stored
     * in int4's blocks: about a quarter fewer bytes served) in blocks of `group`, or left float.
     */
    embeddings?: 'int8' | 'int4' | 'int3' | 'float';
    /**
     * The layers the pruning keeps dense (`report.keptDense`: a language model's output head, a DFL projection): the
     * scheme's bits by default, or int8 per output channel (DequantizeLinear form) under int4.
     */
    keptDense?: 'scheme' | 'int8';
    /**
     * int4's MatMul weights: 'nbits' (com.microsoft MatMulNBits: 4-bit compute where the runtime has
     * it, WebGPU, onnxruntime-node) or 'dynamic' (the same 4-bit bytes widened into the int8
     * MatMulInteger graph when the session loads: onnxruntime-web WASM's fast path, activations
     * quantized per tensor at run time). Default: 'nbits' for a language model (a decoder's
     * activation outliers, WebGPU), 'dynamic' otherwise.
     */
    int4MatMul?: 'nbits' | 'dynamic';
  };
  /** Options of the training that `prox` runs (its own epochs are in the mode). */
  training?: Omit<JobTraining, 'epochs' | 'minutes' | 'steps'>;
  /**
   * How the result is laid out: one `.onnx` file (default), or a transformers.js model folder, the
   * model under the file name of the dtype it is (q8: onnx/model_quantized.onnx; the report's
   * `output` says which; `saveTransformersFolder` writes it in Node).
   */
  output?: { layout: 'onnx' | 'transformers.js' };
}

/** What a job's run reports as it goes: a phase, a count, and what it is working on. */
export interface JobProgress { phase: string; done: number; total: number; label?: string; epoch?: number; epochs?: number; loss?: number; fidelity?: number; eta?: number }

/** Where a job runs: the caller's onnxruntime (Node or web) and how it hears of progress. */
export interface JobEnv {
  ort?: OrtLike | ModelRunner;
  sessionOptions?: object;
  /**
   * Where a calibrated prune's cut goes past its budget (calibratePrune's cutStore: a store, or 'file'
   * in Node), and what a recovery would hold whole (recover's cutStore: the teacher's targets...).
   */
  cutStore?: CutStore | 'file';
  onProgress?: (p: JobProgress) => void;
  signal?: AbortSignal;
}
