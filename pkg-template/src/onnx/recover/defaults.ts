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
   * The lr over the run (lr-schedule.ts): 'constant' or 'cosine' (warm-up, then decay to the floor).
   * Constant stays the default: cosine was better on one model at a peak of 3e-4 (MiniLM-L6
   * `--channels 0.5`, held-out cosine 0.909 against 0.899 in the same steps, bench/RESULTS.md, "An lr
   * schedule for recovery"), never measured at the default lr nor on the recoveries this default
   * already serves (the PaddleOCR models, SmolLM2).
   */
  schedule: 'constant' as 'constant' | 'cosine',
  /** A cosine schedule's warm-up: this share of the run (a constant one has none unless asked). */
  cosineWarmup: 0.05,
  /**
   * Batches of padded text that are cut to their longest real token are made of samples of similar
   * length (Hugging Face's `group_by_length`). On by default: recovery runs to a time budget, and on
   * MiniLM-L6's descriptions (median 11 real tokens of 32) grouping bought 1.67× the steps of padded
   * batches in 4 minutes and the better held-out cosine and neighbours (bench/RESULTS.md, "Sixth
   * session"); every later MiniLM figure used it. Samples without padding (images, a decoder's windows
   * of text) are not reordered.
   */
  groupByLength: true,
  /** Where a schedule starts its warm-up and ends its decay, as a fraction of the lr. */
  lrFloor: 0.1,
  /**
   * The training samples' inputs held in memory at most, in bytes. A bound on bytes, not on a count:
   * 8 192 descriptions of 32 token ids hold 6 MiB, 512 PaddleOCR pages of 640 × 640 hold 2.5 GB. (The teacher's targets
   * per sample go to the caller's cut store when there is one: the CLI's scratch file.)
   */
  maxInputBytes: 256 * 2 ** 20,
});
