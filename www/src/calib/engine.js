// The calibration kernels the pipeline calls: the package's Hessian / wandaScores / sparseGpt
// (API.md "Calibration-aware pruning"), with each weight seen through the 2-D view the contract
// defines (an ONNX MatMul weight through its transposed View: no copy).

/**
 * @param sk the initialised sparsekit-wasm module
 * @returns {name, hessian(cols), withView(stored, rows, cols, transposed, fn), wandaScores, sparseGpt}
 *   withView runs fn on the rows x cols view of a stored weight (transposed: stored (cols, rows), as
 *   an ONNX MatMul (K, N)) and returns {result, data} with data the stored weight after fn.
 */
export function makeEngine(sk) {
  if (!sk || typeof sk.Hessian !== 'function' || typeof sk.sparseGpt !== 'function' || typeof sk.wandaScores !== 'function') {
    throw new Error('the loaded sparsekit-wasm has no calibration API (Hessian, wandaScores, sparseGpt): rebuild the package');
  }
  return {
    name: 'sparsekit-wasm',
    hessian: (cols) => new sk.Hessian(cols),
    withView(stored, rows, cols, transposed, fn) {
      const p = sk.Param.fromArray(stored, transposed ? [cols, rows] : [rows, cols]);
      // An ONNX MatMul weight (K, N) is used through its transposed view: no copy of the weights.
      const v = transposed ? new sk.View(p, [rows, cols], [1, rows]) : null;
      try {
        const result = fn(v ?? p);
        return { result, data: p.toArray() };
      } finally {
        v?.free?.();
        p.free();
      }
    },
    wandaScores: (v, h) => sk.wandaScores(v, h),
    sparseGpt: (v, h, opts) => sk.sparseGpt(v, h, opts),
  };
}
