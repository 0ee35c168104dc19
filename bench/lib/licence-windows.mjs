// The language-model benches' text windows: calibration on the machine's licence texts other than
// the GPL family, held out on the GNU GPL v3 (issue 37's anchors' table). One place cuts them, so
// that bench/text/lm-table.mjs (ours, through runJob) and bench/calib/lm-windows.mjs (the ids the
// reference pruning code in Python reads) calibrate and judge on the same windows in the same order.
import fs from 'node:fs';
import path from 'node:path';
import { textSamples } from '#onnx-internal';

const LIC = '/usr/share/common-licenses';
/** The calibration texts, in the order they are joined (none of the GPL family: the held-out text is the GPL v3). */
export const CALIB_LICENCES = ['Apache-2.0', 'Artistic', 'LGPL-2.1', 'MPL-1.1', 'MPL-2.0', 'GFDL-1.3', 'CC0-1.0'];
export const EVAL_FILE = path.join(LIC, 'GPL-3');

/** The calibration text: `file`'s contents, or the licences above joined by a blank line. */
export const calibText = (file) => (file ? fs.readFileSync(file, 'utf8')
  : CALIB_LICENCES.map((f) => fs.readFileSync(path.join(LIC, f), 'utf8')).join('\n\n'));

/** The held-out text: `file`'s contents, default the GNU GPL v3. */
export const evalText = (file) => fs.readFileSync(file ?? EVAL_FILE, 'utf8');

const cut = (model, tokenizer, text, seqLen, limit) => textSamples({ text, tokenizer, seqLen, inputs: model.inputs, outputs: model.outputs, limit });

/** The held-out windows alone: `count` × `seqLen` tokens of `file` (default the GNU GPL v3). */
export const heldOutWindows = ({ model, tokenizer, seqLen = 256, count = 16, file }) => cut(model, tokenizer, evalText(file), seqLen, count);

/**
 * The calibration and held-out windows of a decoder (`model`: its inputs and outputs), each cut by
 * the package's textSamples (consecutive windows of the running text, the BOS where the tokenizer
 * adds one). `calib` / `eval`: text files instead of the defaults above.
 */
export function licenceWindows({ model, tokenizer, seqLen = 256, calibCount = 32, evalCount = 16, evalSeqLen = seqLen, calib, eval: heldFile }) {
  return {
    calib: cut(model, tokenizer, calibText(calib), seqLen, calibCount),
    held: heldOutWindows({ model, tokenizer, seqLen: evalSeqLen, count: evalCount, file: heldFile }),
  };
}
