// The defaults of a PruneJob, in one table that runJob, the CLI's help and the playground read, so
// that a setting left out means the same thing everywhere. Calibration figures come from the one
// calibration table (calib/defaults.ts).
import { CALIB_DEFAULTS } from '../calib/defaults.js';
import { TRAINING_DEFAULTS } from '../recover/defaults.js';

export const JOB_DEFAULTS = Object.freeze({
  method: 'magnitude' as const,
  /** Block shape of `sparsity` (1x1: unstructured) and of `prox` (4x4: blocks that sparse training zeroes). */
  block: Object.freeze([1, 1]) as readonly [number, number],
  proxBlock: Object.freeze([4, 4]) as readonly [number, number],
  scope: 'layer' as const,
  /** Channels kept per group are a multiple of this (runtimes block channels by 8 / 16 for SIMD). */
  roundTo: 8,
  /** Calibration samples a caller generates or reads when it gives no count (CLI, playground). */
  calibrationCount: CALIB_DEFAULTS.calibrationCount,
  percDamp: CALIB_DEFAULTS.percDamp,
  /** GPTQ's damping in a pass of its own after the pruning (the joint pass prunes: `percDamp`). */
  gptqPercDamp: CALIB_DEFAULTS.gptqPercDamp,
  /** SparseGPT's damping when the model is a language model (keep-dense.ts finds its head). */
  lmPercDamp: CALIB_DEFAULTS.lmPercDamp,
  /** SparseGPT's refit steps after each layer's solve. */
  refit: CALIB_DEFAULTS.refit,
  /** How a calibrated channel removal ranks channels: by default, and in a transformer (attention heads, or a language model). */
  channelScore: CALIB_DEFAULTS.channelScore,
  transformerChannelScore: CALIB_DEFAULTS.transformerChannelScore,
  actOrder: CALIB_DEFAULTS.actOrder,
  scaleSearch: CALIB_DEFAULTS.scaleSearch,
  sequential: CALIB_DEFAULTS.sequential,
  /** Held-out samples generated when the caller asks for generated ones. */
  generatedEvalCount: 8,
  /** Samples the pruning's statistics read when the job also trains on them (calibration.statsLimit). */
  trainingStatsLimit: 512,
  /** Bytes of input samples a training run (recovery, prox) holds at most (recover/defaults.ts). */
  maxTrainingBytes: TRAINING_DEFAULTS.maxInputBytes,
  /** The search: plans verified at most, what it minimises. */
  maxSteps: 8,
  objective: 'params' as const,
  /** Recovery and prox training (recover/defaults.ts). */
  epochs: TRAINING_DEFAULTS.epochs,
  lr: TRAINING_DEFAULTS.lr,
  schedule: TRAINING_DEFAULTS.schedule,
  batchSize: TRAINING_DEFAULTS.batchSize,
});
