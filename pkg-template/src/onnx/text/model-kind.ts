// Whether an ONNX model reads text as a decoder language model (next-token logits [B, S, V]) or as
// an encoder (one sequence in, token states or a pooled embedding out), and which of the inputs text
// sampling fills.
import type { OnnxModel, ValueInfo } from '../model.js';
import { OnnxError } from '../errors.js';

export type TextModelKind = 'decoder' | 'encoder';

/** The inputs text sampling knows how to fill, by their names in Hugging Face exports. */
export const TEXT_INPUTS = Object.freeze(['input_ids', 'attention_mask', 'token_type_ids', 'position_ids'] as const);
export type TextInput = typeof TEXT_INPUTS[number];

/** The model's text inputs with their ONNX element types; refuses a model with any other input. */
export function textInputs(inputs: readonly ValueInfo[]): { name: TextInput; elemType: number }[] {
  const other = inputs.filter((i) => !(TEXT_INPUTS as readonly string[]).includes(i.name));
  if (other.length) {
    const kv = other.some((i) => /past_key_values|present/.test(i.name));
    throw new OnnxError('bad_calibration', `input${other.length > 1 ? 's' : ''} ${other.map((i) => `"${i.name}"`).join(', ')} cannot be filled from text${kv ? ' (a KV-cache export for generation: export the model without past_key_values)' : ''}; text fills ${TEXT_INPUTS.join(', ')}`, 'invalid_value');
  }
  if (!inputs.some((i) => i.name === 'input_ids')) throw new OnnxError('bad_calibration', 'the model has no "input_ids" input: it does not read token ids', 'invalid_value');
  for (const i of inputs) {
    if (i.elemType !== 7 && i.elemType !== 6) throw new OnnxError('bad_calibration', `input "${i.name}" is element type ${i.elemType}, not int64 / int32 ids`, 'invalid_value');
  }
  return inputs.map((i) => ({ name: i.name as TextInput, elemType: i.elemType }));
}

/**
 * The kind of a text model, and why. A decoder's first output is logits [B, S, V] with V at least
 * the tokenizer's vocabulary (exports pad V up to a multiple of 64 or 128); when V is dynamic, a
 * `position_ids` input (decoders take one, BERT-style encoders compute theirs) decides; a
 * `token_type_ids` input says encoder. Anything else is refused: set `kind`.
 */
export function detectTextModel(model: Pick<OnnxModel, 'inputs' | 'outputs'>, vocabSize: number): { kind: TextModelKind; why: string } {
  const out = model.outputs[0];
  const names = new Set(model.inputs.map((i) => i.name));
  if (out && out.dims.length === 3) {
    const v = out.dims[2];
    if (typeof v === 'number' && v > 0) {
      if (v >= vocabSize) return { kind: 'decoder', why: `output "${out.name}" is [B, S, ${v}], the vocabulary (${vocabSize})` };
      return { kind: 'encoder', why: `output "${out.name}" is [B, S, ${v}], token states narrower than the vocabulary (${vocabSize})` };
    }
  }
  if (out && out.dims.length === 2) return { kind: 'encoder', why: `output "${out.name}" is one vector per sequence` };
  if (names.has('token_type_ids')) return { kind: 'encoder', why: 'it takes token_type_ids' };
  if (names.has('position_ids')) return { kind: 'decoder', why: 'it takes position_ids' };
  throw new OnnxError('bad_calibration', `cannot tell whether the model is a decoder or an encoder from its first output "${out?.name}" [${out?.dims.join(', ')}]: set kind`, 'invalid_value');
}
