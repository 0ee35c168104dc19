// Recovery of a model as its file holds it. recover/ trains float weights; a student whose weights
// are quantized (the int8 / int4 forms `prune --quantize` or onnxruntime's quantizers write) is read
// back to float, its weights held on their forms' grids while recover/ trains (quant/held-codes.ts:
// the straight-through estimator), and written again in the same forms with the trained codes, so
// the model the caller gets is the one recovery judged. A float student is recover/'s alone. (The
// job, which dequantizes a quantized input itself, holds its grids the same way: run.ts.)
import type { OnnxModel } from '../model.js';
import type { InputSample } from '../calib/inputs.js';
import { OnnxError } from '../errors.js';
import { recover as recoverFloat } from '../recover/index.js';
import type { RecoverOptions, RecoverReport } from '../recover/index.js';
import { detectQuantized } from '../quant/detect.js';
import { dequantizeModel, requantizeOptions } from '../quant/dequantize.js';
import { heldCodes, holdCodes } from '../quant/held-codes.js';
import { quantizeModel, type QuantReport } from '../quant/quantize.js';

/** What recover reports, and for a quantized student the forms it was written in again. */
export type ModelRecoverReport = RecoverReport & { quantize?: QuantReport };

/**
 * Recovers `pruned` towards `teacher` on unlabeled `samples` (recover/recover.ts for the steps and the
 * options). A quantized `pruned` stays quantized in its own forms, trained on their grids
 * (`report.quantize`); a form that cannot be read back is refused by name before anything runs. On a
 * failure or an abort the model is put back in its forms with the codes it came with.
 */
export async function recover(pruned: OnnxModel, teacher: OnnxModel, samples: InputSample[], opts: RecoverOptions): Promise<ModelRecoverReport> {
  const detected = detectQuantized(pruned);
  if (detected.refused.length) throw new OnnxError('unsupported', `the pruned model holds quantized weights in a form that cannot be read back: ${detected.refused.join('; ')}`, 'invalid_value');
  if (!detected.sites.length) return recoverFloat(pruned, teacher, samples, opts);
  const forms = requantizeOptions(pruned, dequantizeModel(pruned));
  // every weight rounded onto its form's grid (round to nearest: the values it came with, read back)
  const held = holdCodes(pruned, forms);
  const back = () => quantizeModel(pruned, { ...forms, given: heldCodes(pruned, held) });
  let report: RecoverReport;
  try {
    report = await recoverFloat(pruned, teacher, samples, { ...opts, grids: held.grids });
  } catch (e) {
    back(); // recover wrote nothing: the codes it came with
    throw e;
  }
  return { ...report, quantize: back() };
}
