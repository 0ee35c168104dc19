// The job's samples in the worker: generated (calibration seeds for calibration and training,
// held-out seeds for the fidelity: never the same inputs), the user's images (drawn at the model's
// input size, held out), or text for a language model cut with its tokenizer.json (the package's
// textSamples, as the CLI's --calib / --eval read .txt and .jsonl files).
import {
  makeInputSet, resolveInputShape, isImageShape, checkGeneratedShape, textSamples, checkDisjointSamples,
  type InputSample, type OnnxModel,
} from 'sparsekit-wasm/onnx';
import { loadUserImages } from '../calib/user-images.js';
import { PlaygroundError } from '../protocol.js';
import type { JobSamplesRequest } from './api.js';

export interface JobSamples {
  calibration: InputSample[]; heldOut: InputSample[]; images: number; text: number;
  /** The parsed tokenizer.json every sample came from (text only): the job zeroes the token rows it never produces. */
  tokenizer?: Record<string, unknown>;
}

/** Held-out samples with the user's images first (the rest generated on held-out seeds). */
async function imageSamples(model: OnnxModel, files: File[], generated: number): Promise<InputSample[]> {
  if (!files.length) return generated ? makeInputSet(model, { count: generated, set: 'heldOut' }) : [];
  const inp = model.inputs[0];
  const shape = inp ? resolveInputShape(inp, model.outputs) : [];
  if (model.inputs.length !== 1 || !isImageShape(shape)) {
    throw new PlaygroundError('invalid_arguments', `your images need a model with one image input (N, 1|3, H, W); this one takes ${model.inputs.map((i) => `${i.name} [${i.dims.join(', ')}]`).join(', ')}`);
  }
  checkGeneratedShape(inp.name, shape);
  const images = await loadUserImages(files, [shape[2], shape[3]]);
  // makeInputSet takes images in the slots of its calibration set only; the generated rest stays on held-out seeds
  const own = makeInputSet(model, { count: images.length, set: 'calibration', images });
  return generated ? [...own, ...makeInputSet(model, { count: generated, set: 'heldOut' })] : own;
}

/** Text: the first `calibration` windows (or lines) calibrate, the last `heldOut` are held out. */
function textSets(model: OnnxModel, t: NonNullable<JobSamplesRequest['text']>, calibration: number, heldOut: number): JobSamples {
  let tokenizer: Record<string, unknown>;
  try { tokenizer = JSON.parse(t.tokenizer) as Record<string, unknown>; } catch (e) {
    throw new PlaygroundError('invalid_arguments', `the tokenizer is not JSON (${(e as Error).message}): give the model folder's tokenizer.json`);
  }
  const set = textSamples({ text: t.text, format: t.format, tokenizer, seqLen: t.seqLen, inputs: model.inputs, outputs: model.outputs });
  const need = calibration + heldOut;
  if (set.samples.length < need) {
    throw new PlaygroundError('invalid_arguments', `the text gives ${set.samples.length} ${set.kind === 'decoder' ? `windows of ${t.seqLen} tokens` : 'lines'}, fewer than the ${calibration} calibration + ${heldOut} held-out samples asked for: paste more text or ask for fewer samples`);
  }
  const out = { calibration: set.samples.slice(0, calibration), heldOut: set.samples.slice(set.samples.length - heldOut), images: 0, text: need, tokenizer };
  checkDisjointSamples(out.calibration, out.heldOut); // two equal lines of an encoder's text would be one sample on both sides
  return out;
}

export async function jobSamples(model: OnnxModel, s: JobSamplesRequest, needCalibration: boolean): Promise<JobSamples> {
  const calibration = needCalibration ? Math.floor(s.calibration) : 0;
  if (s.text) return textSets(model, s.text, calibration, Math.floor(s.heldOut));
  return {
    calibration: calibration ? makeInputSet(model, { count: calibration, set: 'calibration' }) : [],
    heldOut: await imageSamples(model, s.images, Math.floor(s.heldOut)),
    images: s.images.length,
    text: 0,
  };
}
