// The test input of the page's comparison runs (effect of pruning, channel removal): one shape field
// per model input, first resolved by the package's resolveInputShape() (the CLI's synthetic
// calibration uses the same rule), editable by the user. The note under the fields says what was
// chosen; when onnxruntime-web cannot run an image input whose height and width the graph leaves
// dynamic, interleavedRun() retries square 320, then 640, and says so.
import { resolveInputShape, type OnnxModel } from 'sparsekit-wasm/onnx';
import { WorkerError } from './protocol.js';
import type { ModelBytes } from './state.js';
import type { EvalApi, InputSpec } from './workers/api.js';
import { evalClient } from './workers.js';

const RETRY_SIDES = [320, 640];
let model: OnnxModel | null = null;
let note: HTMLElement | null = null;
const fields = new Map<string, HTMLInputElement>();

const isDynamic = (d: number | string | null | undefined) => !(typeof d === 'number' && d > 0);
/** The input's height and width are left dynamic by the graph (an image input of a fully convolutional model). */
const dynamicImage = (dims: readonly (number | string | null)[]) => dims.length === 4 && isDynamic(dims[2]) && isDynamic(dims[3]);

function describeChoice(m: OnnxModel): string {
  const parts = m.inputs.map((inp) => {
    const shape = resolveInputShape(inp, m.outputs);
    if (!inp.dims.some(isDynamic)) return `${inp.name}: ${shape.join('×')} (fixed by the model)`;
    return `${inp.name}: ${shape.join('×')}${dynamicImage(inp.dims) ? ' (height and width are dynamic: a size common backbones accept, multiples of 32)' : ' (dynamic dims resolved)'}`;
  });
  return `Chosen: ${parts.join('; ')}. Edit a shape to run another size.`;
}

/** The "Test input" row of the model card: a field per input and the note saying what was chosen. */
export function inputFields(m: OnnxModel): HTMLElement {
  model = m;
  fields.clear();
  const box = document.createElement('span');
  for (const inp of m.inputs) {
    const label = document.createElement('label');
    label.className = 'input-shape';
    const field = document.createElement('input');
    field.value = resolveInputShape(inp, m.outputs).join('x');
    field.dataset.input = inp.name;
    field.dataset.testid = 'input-shape';
    field.size = 14;
    field.title = `declared [${inp.dims.join(', ')}]; dynamic dims resolved for the comparison runs`;
    field.addEventListener('change', () => { field.dataset.edited = 'true'; });
    fields.set(inp.name, field);
    label.append(`${inp.name} `, field);
    box.append(label);
  }
  note = document.createElement('div');
  note.className = 'input-note';
  note.dataset.testid = 'input-note';
  note.textContent = describeChoice(m);
  box.append(note);
  return box;
}

/** The inputs as the fields say now; throws on a shape that is not positive integers. */
export function inputSpecs(): InputSpec[] {
  if (!model) throw new Error('no model is loaded');
  return model.inputs.map((inp) => {
    const field = fields.get(inp.name);
    const shape = (field?.value ?? '').split(/[x×, ]+/).filter(Boolean).map(Number);
    if (!shape.length || shape.some((d) => !(Number.isInteger(d) && d > 0))) throw new Error(`invalid test input shape "${field?.value}" for ${inp.name}`);
    return { name: inp.name, elemType: inp.elemType || 1, shape };
  });
}

/** Other inputs to try when `failed` did not run: squares 320 then 640 for dynamic-size images the user did not set. */
function retries(failed: InputSpec[]): InputSpec[][] {
  if (!model) return [];
  const dyn = model.inputs.filter((inp) => dynamicImage(inp.dims) && fields.get(inp.name)?.dataset.edited !== 'true').map((i) => i.name);
  if (!dyn.length) return [];
  return RETRY_SIDES.map((s) => failed.map((spec) => (dyn.includes(spec.name) ? { ...spec, shape: [spec.shape[0], spec.shape[1], s, s] } : spec)))
    .filter((c) => JSON.stringify(c) !== JSON.stringify(failed));
}

type BenchResult = EvalApi['bench']['res'];
const files = (m: ModelBytes) => ({ model: m.bytes.slice(), externalData: [...m.external].map(([path, data]) => ({ path, data: data.slice() })) });
const fmt = (specs: InputSpec[]) => specs.map((i) => i.shape.join('×')).join(', ');

/**
 * Runs `a` and `b` interleaved (`warmup` discarded rounds, then `runs` timed rounds) on the test
 * input. A run that fails on a dynamic-size image input is retried at 320×320 then 640×640; the size
 * that ran is written back into the fields and the note says what happened.
 */
export async function interleavedRun(a: ModelBytes, b: ModelBytes, runs: number, warmup = 1): Promise<{ res: BenchResult; inputs: InputSpec[] }> {
  let inputs = inputSpecs();
  const failed: string[] = [];
  const candidates = [inputs, ...retries(inputs)];
  for (let i = 0; ; i++) {
    inputs = candidates[i];
    try {
      const [fa, fb] = [files(a), files(b)];             // fresh copies: handed over, not cloned again
      const transfer = [fa, fb].flatMap((f) => [f.model.buffer, ...f.externalData.map((x) => x.data.buffer)]);
      const res = await evalClient.request('bench', { a: fa, b: fb, inputs, runs, warmup }, { transfer });
      if (failed.length && note) {
        for (const spec of inputs) { const f = fields.get(spec.name); if (f) f.value = spec.shape.join('x'); }
        note.textContent = `onnxruntime-web could not run ${failed.join(', then ')}; ran ${fmt(inputs)} instead (a square size detectors accept). Edit a shape to run another size.`;
        note.dataset.retried = 'true';
      }
      return { res, inputs };
    } catch (e) {
      if (!(e instanceof WorkerError && e.code === 'ort_run_failed') || i + 1 >= candidates.length) throw e;
      failed.push(fmt(inputs));
    }
  }
}
