// The training defaults of recovery and sparse training (distill.ts, prox.ts), in one place: the
// job's table (job/defaults.ts) reads them, so the CLI, the module and the playground mean the same
// run when they leave a setting out.
export const TRAINING_DEFAULTS = Object.freeze({
  /** Epochs when neither epochs nor a time budget is given (with only a budget, epochs are unbounded). */
  epochs: 4,
  /** Adam's learning rate. */
  lr: 1e-4,
  /** Samples per step. */
  batchSize: 8,
});
