// The defaults of calibration-aware pruning, in one table that the module (calibratePrune,
// removeChannelsCalibrated, pruneLayer) and the CLI read, so that they cannot drift apart.

/**
 * SparseGPT's update solves a least-squares problem in the layer's inputs: with fewer calibration
 * vectors than inputs (a 1x1 Conv after global pooling sees one vector per image) it fits the
 * calibration set, not the data, and the held-out output gets worse than with no update at all.
 * Below this many vectors per input a layer asked for SparseGPT gets Wanda (said in its notes).
 */
export const MIN_VECTORS_PER_INPUT = 4;

/** The ways a calibrated channel removal ranks units (calibrated-channels.ts); the job checks against the same list. */
export const CHANNEL_SCORES = ['activations', 'weights', 'fluctuation', 'influence'] as const;
export type ChannelScore = typeof CHANNEL_SCORES[number];
/** The list as an error message says it: "a, b, c or d". */
export const channelScoresText = `${CHANNEL_SCORES.slice(0, -1).join(', ')} or ${CHANNEL_SCORES[CHANNEL_SCORES.length - 1]}`;

export const CALIB_DEFAULTS = Object.freeze({
  /** The criterion of every layer. */
  criterion: 'sparsegpt' as const,
  /** Samples generated (or read from a directory) when the caller gives no count. */
  calibrationCount: 64,
  /** Layer k calibrated on the model whose layers before it are pruned. */
  sequential: true,
  /** SparseGPT's lazy block (rounded down to a multiple of m for N:M). */
  blockSize: 128,
  /**
   * SparseGPT's damping, H += percDamp * mean(diag H) * I, for whole models (CLI, module, page).
   * 0.1, not the core sparseGpt's 0.01 (the reference's, kept by the API contract): compact CNNs
   * calibrated on a few dozen generated inputs have ill-conditioned Hessians, and at 2:4 on the
   * PaddleOCR classifier 0.01 lets SparseGPT fall below plain magnitude (docs/guides/calibration.md).
   */
  percDamp: 0.1,
  /**
   * GPTQ's damping when a pass only quantizes (GPTQ after pruning, or no pruning): GPTQ's reference
   * value (IST-DASLab/gptq, `percdamp`), which beats 0.1 on a language model at 4 bits (bench/RESULTS.md,
   * "4-bit SmolLM2-135M").
   */
  gptqPercDamp: 0.01,
  /**
   * SparseGPT's damping in a job on a language model (a token-embedding table and a head of its
   * rows, job/keep-dense.ts): the reference's 0.01 (IST-DASLab/sparsegpt, `percdamp`), which its
   * Hessians of thousands of tokens support; on SmolLM2-135M at 50% it gives perplexity ×1.37 of
   * dense against ×1.41 with 0.1 (bench/RESULTS.md, "The anchors' table on SmolLM2-135M").
   */
  lmPercDamp: 0.01,
  /**
   * How a calibrated channel removal ranks the units of a model without attention heads: each
   * consumer's input slice weighted by its input's RMS ('activations').
   */
  channelScore: 'activations' as const,
  /**
   * ... and of a language model (job/run.ts): FLAP's fluctuation, what the consumers lose once the
   * removed units' means are folded. Measured on SmolLM2-135M `--channels 0.2` (perplexity ×1.51
   * against ×2.55 with 'activations'; ×1.33 with the centred refit). Not 'influence' there: measured
   * on 2 or on 8 windows, its choice of heads gave ×1.28 and ×1.45, at 1.4× and 3× the removal's
   * time (bench/RESULTS.md, SmolLM2 section).
   */
  transformerChannelScore: 'fluctuation' as const,
  /**
   * ... and of any other model with attention heads (an encoder): 'influence', each head's measured
   * effect on the outputs, the heads of all layers ranked together (calibrated-channels.ts), the other
   * groups by fluctuation. all-MiniLM-L6-v2 `--channels 0.5`: cosine 0.926 / 67.5% of the 10 nearest
   * neighbours one-shot against fluctuation's 0.867 / 62.3%, and 0.964 / 77.8% against 0.941 / 76.1%
   * after 3 minutes of recovery (bench/RESULTS.md).
   */
  headChannelScore: 'influence' as const,
  /**
   * Calibration the 'influence' channel score runs each head's ablation on (head-influence.ts): the
   * first samples, at most this many, and of token inputs (`input_ids`) at most `influenceTokens`
   * positions: one model run per head and sample, so 8 of a decoder's windows of 256 tokens are
   * measured where 64 sentences of 32 are (all-MiniLM-L6-v2).
   */
  influenceSamples: 64,
  influenceTokens: 2048,
  /**
   * Conjugate-gradient steps of SparseGPT's mask-fixed refit (the core's sparseGpt `refit`): the kept
   * weights of each layer re-solved for the mask SparseGPT chose, which its column-by-column loop
   * leaves short of the least-squares optimum. 16 steps reach about 98% of the layer-error drop of 50
   * on SmolLM2-135M's layers (bench/RESULTS.md, "SparseGPT's refit"); 0 is SparseGPT as published.
   */
  refit: 16,
  /**
   * GPTQ's act-order (columns by descending diag H, static groups) where a layer is quantized
   * without a pruning target: GPTQ's `--act-order --static-groups` (IST-DASLab/gptq). On SmolLM2
   * at 4 bits the same perplexity as the natural order in a smaller brotli file (bench/RESULTS.md,
   * "4-bit SmolLM2-135M").
   */
  actOrder: true,
  /**
   * GPTQ's scale search per group (`quant.py` with `mse`) where a layer is quantized without a
   * pruning target (the joint pass only when asked: not measured there); it takes SmolLM2's 4-bit
   * perplexity past issue 39's target (bench/RESULTS.md).
   */
  scaleSearch: true,
  /**
   * The most the sweep's cut may hold over all samples before it recomputes instead of caching
   * (calib/recompute.ts): 256 MiB. Below it nothing is recomputed, so a CNN's few samples cost one run
   * of the model; a language model's 128 windows of 512 tokens (bench/RESULTS.md, "SparseGPT 50% on
   * SmolLM2-135M at the scale") hold the residual stream instead of four values of each token.
   */
  cacheBudget: 256 * 2 ** 20,
  /** SparseGPT only where a layer saw at least this many calibration vectors per input (else Wanda). */
  minVectors: MIN_VECTORS_PER_INPUT,
});
