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
  /**
   * The lr over the run (lr-schedule.ts): 'cosine' (warm-up, then decay to the floor) or 'constant'.
   * Cosine: MiniLM-L6 `--channels 0.5`, 4 minutes at lr 3e-4, held-out cosine 0.909 against 0.899
   * constant in the same steps (bench/RESULTS.md, "An lr schedule for recovery").
   */
  schedule: 'cosine' as 'constant' | 'cosine',
  /** A cosine schedule's warm-up: this share of the run (a constant one has none unless asked). */
  cosineWarmup: 0.05,
  /** Where a schedule starts its warm-up and ends its decay, as a fraction of the lr. */
  lrFloor: 0.1,
});
