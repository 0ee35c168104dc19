// The fitted constants of the transport-size estimate (transport-size.ts), apart from it so that
// they can be read where node:zlib cannot be loaded (the package's index, browsers).
// bench/transport/transport-fit.mjs prints this object from the corpus (bench/transport/transport-corpus.sh).

/**
 * The fitted corrections per kind of data (transport-size.ts, kindFeatures): log(brotli 11 / brotli
 * FAST_QUALITY) and log(gzip 9 / deflate GZIP_LEVEL) as linear functions of the features, least
 * squares weighted by size over the kinds' samples of the corpus, and the errors measured.
 */
export const RATIO_FIT = {
  brotli: [-0.0102443, -0.0244728, 0.0558145, 0.119908, -0.101462, -0.0258329, -0.598731, -0.414494, -0.156274],
  gzip: [-0.000551894, -0.0299081, 0.000974215, 0.0161558, -0.103293, 0.0276031, -0.0143123, -0.056825, -0.00240706],
  /**
   * The largest |estimate / exact - 1| measured on the files of models the fit did not see
   * (leave-one-model-out), over files of float32 weights and over files mostly of bytes (int8,
   * 4-bit), leaving out the files the estimate flags (outsideFit); and over the files whose
   * corrections were measured (large files; the bench forces it on the whole corpus).
   */
  maxError: { float: { brotli: 0.056, gzip: 0.037 }, bytes: { brotli: 0.111, gzip: 0.045 }, measured: { brotli: 0.045, gzip: 0.03 } },
  /** Files of the corpus, of which flagged (outside the fit: repeats, widened 16-bit floats; left out). */
  files: 97,
  flagged: 12,
} as const;
