// The fitted constants of the transport-size estimate (transport-size.ts), apart from it so that
// they can be read where node:zlib cannot be loaded (the package's index, browsers).
// bench/transport/transport-fit.mjs prints this object from the measurements (bench/transport/transport-chunks.mjs).

/**
 * The fitted log-ratios per kind (least squares on the one-hot kind, weighted by the chunk's size:
 * each kind's weighted mean), and the errors measured (bench/transport/transport-fit.mjs prints this object;
 * bench/transport/transport-size.mjs checks the shipped one).
 */
export const RATIO_FIT = {
  /** log(brotli 11 / brotli 5) per kind, for a sampled chunk (its brotli 5 size alone). */
  brotli: [-0.0107006, -0.0196199, -0.162618, -0.0190946],
  /** log(brotli 11 / fast) per kind. */
  brotliFromFast: [-0.0124355, -0.0521771, -0.146111, -0.0181719],
  /** log(gzip 9 / deflate 1) per kind, for a sampled chunk. */
  gzip: [-0.000157607, -0.0486855, -0.055301, -0.000599236],
  /** log(gzip 9 / fast) per kind. */
  gzipFromFast: [-0.00104666, -0.0250978, -0.00318822, 0.00399361],
  /**
   * The largest |estimate / exact - 1| measured on files the fit did not see (leave-one-model-out),
   * over the ONNX files of float32 weights (dense, 50%, 2:4) and over the int8-like byte streams,
   * leaving out the files the estimate flags (outsideFit). float is not the fit's 2.03% / 2.69%: the
   * committed test models pruned 50% by the package (tests/onnx/transport-size.test.mjs) came out
   * 3.95% / 4.45% (yolov8n) and 2.41% (yolov8-style) off, so the figures stated are the worst seen
   * on any float32 model.
   */
  maxError: { float: { brotli: 0.04, gzip: 0.045 }, bytes: { brotli: 0.117, gzip: 0.0471 } },
  /** Files fitted on, of which flagged (made of repeats: left out of the fit). */
  files: 57,
  flagged: 6,
} as const;
