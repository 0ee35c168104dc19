// What the student trains and towards what: its graph for the training core with the parameters
// that may move (weights and biases of the linear layers and normalisations; every other float
// constant frozen), and the loss per output by its kind. A classification output made by a final
// Softmax is trained on its logits by default (the Softmax's input, against the teacher's logits: the
// high-temperature limit of distillation's KL, and a gradient that does not vanish on small
// probabilities); a sequence output by the KL of its probabilities (over thousands of symbols per
// step, the logits' MSE is dominated by symbols no input uses: PaddleOCR rec after channel removal
// stays unreadable with it, and reads again with KL; bench/RESULTS.md); either can be asked for.
// A Sigmoid map by binary cross-entropy. A language model's logits by the KL of its next-token
// distributions (a Softmax over the vocabulary appended to the student, the teacher's logits turned
// into probabilities: the distillation loss of DistilBERT and Minitron; the MSE of raw logits
// spends its gradient on the offsets of tokens no context makes likely). An embedding by 1 - its
// cosine (what its neighbours depend on). Every other output by the mean squared error of its values.
import type { OutputLoss, TrainGraph } from 'sparsekit-wasm';
import type { NodeProto, OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { trainGraph } from '../train/graph.js';
import { capture } from '../calib/sweep.js';
import { asF32 } from '../calib/tensor.js';
import { eachOutput } from '../calib/set-outputs.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import { samplesBytes, type InputSample } from '../calib/inputs.js';
import { TRAINING_DEFAULTS } from './defaults.js';
import type { OutputKind } from '../fidelity/types.js';
import type { LossName } from './types.js';
import type { CutStore } from '../calib/cut-store.js';
import { HeldArrays } from './held-arrays.js';

export interface TrainSetup {
  graph: TrainGraph;
  /**
   * The tensor trained for each model output (in graph.outputs order): the output itself or its
   * logits; `axis` of a 'kl' loss; `softmax`: the teacher's values of `tensor` are logits to be
   * turned into probabilities along `axis` (the student's graph ends in that Softmax).
   */
  trained: { output: string; tensor: string; kind: OutputKind; loss: LossName; axis?: number; softmax?: boolean }[];
}


/** Float constants the training may change: what Conv / Gemm / MatMul / normalisations multiply or add. */
function trainable(model: OnnxModel): Set<string> {
  const consts = model.constants();
  const producer = new Map<string, NodeProto>();
  for (const n of model.graph.node as NodeProto[]) for (const o of n.output) producer.set(o, n);
  const out = new Set<string>();
  const add = (name: string | undefined) => { if (name && consts.has(name)) out.add(name); };
  for (const n of model.graph.node as NodeProto[]) {
    switch (n.op_type) {
      case 'Conv': case 'ConvTranspose': case 'Gemm': add(n.input[1]); add(n.input[2]); break;
      case 'MatMul': add(n.input[0]); add(n.input[1]); break;
      case 'BatchNormalization': case 'LayerNormalization': add(n.input[1]); add(n.input[2]); break;
      case 'Add': {
        // a MatMul's bias, added after it
        const [a, b] = n.input;
        if (consts.has(b) && producer.get(a)?.op_type === 'MatMul') add(b);
        if (consts.has(a) && producer.get(b)?.op_type === 'MatMul') add(a);
        break;
      }
      default:
    }
  }
  return out;
}

/** The losses `softmaxLoss` may name; recover and proxPrune refuse any other value before anything runs. */
/**
 * Why these training samples are refused, or undefined: their inputs are held in memory for the whole
 * run, so their bytes are bounded (TRAINING_DEFAULTS.maxInputBytes), not their count.
 */
export function trainingInputsProblem(samples: readonly InputSample[]): string | undefined {
  const bytes = samplesBytes(samples), max = TRAINING_DEFAULTS.maxInputBytes;
  if (bytes <= max) return undefined;
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  return `hold ${mib(bytes)} of inputs (${samples.length} samples); a training run holds at most ${mib(max)}: fewer or smaller samples`;
}

export function checkSoftmaxLoss(v: unknown): void {
  if (v !== undefined && v !== 'logits' && v !== 'kl') throw new OnnxError('bad_calibration', `softmaxLoss must be logits or kl (got ${String(v)})`, 'invalid_value');
}

/** The training setup of `student`; `kinds` per output name (the fidelity module's detection). */
export function trainSetup(student: OnnxModel, kinds: Record<string, OutputKind>, softmaxLoss?: 'logits' | 'kl'): TrainSetup {
  const opset = Number((student.model.opset_import as { domain?: string; version: unknown }[]).find((o) => !o.domain || o.domain === 'ai.onnx')?.version ?? 13);
  const keep = trainable(student);
  const frozen: string[] = [];
  for (const [name, c] of student.constants()) {
    const dt = c.tensor.data_type;
    if (dt !== 7 && dt !== 6 && !keep.has(name)) frozen.push(name);
  }
  const graph = trainGraph(student, { frozen });
  const consumers = new Map<string, number>();
  for (const n of graph.nodes) for (const i of n.inputs) consumers.set(i, (consumers.get(i) ?? 0) + 1);
  const trained: TrainSetup['trained'] = [];
  const drop = new Set<number>();
  graph.outputs = graph.outputs.map((o) => {
    const kind = kinds[o] ?? 'generic';
    const at = graph.nodes.findIndex((n) => n.outputs.includes(o));
    const node = graph.nodes[at];
    const probs = kind === 'classification' || kind === 'sequence';
    // Default: KL for a sequence (a CTC head over a large alphabet, where the logits' MSE is spent on
    // symbols no input uses), the logits for a classification.
    const lossOf = softmaxLoss ?? (kind === 'sequence' ? 'kl' : 'logits');
    if (probs && node?.opType === 'Softmax' && lossOf === 'kl') {
      const axis = node.attrs?.axis;
      trained.push({ output: o, tensor: o, kind, loss: 'kl', axis: typeof axis === 'number' ? axis : opset >= 13 ? -1 : 1 });
      return o;
    }
    // A Sigmoid map (DB-style text probabilities): binary cross-entropy, whose gradient does not vanish where the map saturates.
    if (kind === 'dense-map' && node?.opType === 'Sigmoid') {
      trained.push({ output: o, tensor: o, kind, loss: 'bce' });
      return o;
    }
    if (kind === 'language-model' && (softmaxLoss ?? 'kl') === 'kl') {
      const probsName = `${o}::softmax`;
      graph.nodes.push({ opType: 'Softmax', inputs: [o], outputs: [probsName], attrs: { axis: -1 } });
      trained.push({ output: o, tensor: o, kind, loss: 'kl', axis: -1, softmax: true });
      return probsName;
    }
    if (kind === 'embedding') {
      trained.push({ output: o, tensor: o, kind, loss: 'cosine' });
      return o;
    }
    if (probs && node?.opType === 'Softmax' && !consumers.get(o) && (consumers.get(node.inputs[0]) ?? 0) === 1) {
      drop.add(at);
      trained.push({ output: o, tensor: node.inputs[0], kind, loss: 'logits' });
      return node.inputs[0];
    }
    trained.push({ output: o, tensor: o, kind, loss: 'mse' });
    return o;
  });
  graph.nodes = graph.nodes.filter((_, i) => !drop.has(i));
  return { graph, trained };
}

/** The training core's loss for each trained tensor of `setup` (in graph.outputs order). */
export function lossesOf(setup: TrainSetup): OutputLoss[] {
  return setup.trained.map((t) => (t.loss === 'kl' ? { kind: 'kl', axis: t.axis } : t.loss === 'bce' || t.loss === 'cosine' ? { kind: t.loss } : { kind: 'mse' }));
}

/**
 * The teacher's value of a trained tensor as the loss wants it: probabilities along the last axis
 * for a language model's logits (`softmax`), in place; the values themselves otherwise.
 */
function asTarget(t: TrainSetup['trained'][number], values: Float32Array, dims: readonly number[]): Float32Array {
  if (!t.softmax) return values;
  const d = dims[dims.length - 1] ?? values.length;
  if (!d || values.length % d) throw new OnnxError('bad_calibration', `${t.output}: ${values.length} values are not rows of ${d} logits`, 'invalid_value');
  for (let r = 0; r < values.length; r += d) {
    let max = -Infinity;
    for (let i = r; i < r + d; i++) if (values[i] > max) max = values[i];
    let sum = 0;
    for (let i = r; i < r + d; i++) { const e = Math.exp(values[i] - max); values[i] = e; sum += e; }
    for (let i = r; i < r + d; i++) values[i] /= sum;
  }
  return values;
}

/**
 * The teacher's targets of `setup`'s trained tensors on `samples`: per trained tensor, one array per
 * sample (one output, one trained tensor: the arrays are not shared), in `store` when one is given
 * (held-arrays.ts: a language model's distributions are samples × tokens × vocabulary floats),
 * and their dims on the first sample. Each sample's values are kept as the capture gives them, so
 * memory holds one sample's at a time on the way.
 */
export async function teacherTargets(runner: ModelRunner, teacher: OnnxModel, setup: TrainSetup, samples: InputSample[], check: () => void, store?: CutStore): Promise<{ values: HeldArrays; dims: number[][] }> {
  const names = [...new Set(setup.trained.map((t) => t.tensor))];
  const values = new HeldArrays(setup.trained.length, store);
  const dims = new Map<string, number[]>();
  const take = (name: string, v: Float32Array, d: number[], k: number) => {
    if (!dims.has(name)) dims.set(name, [...d]);
    setup.trained.forEach((tr, o) => { if (tr.tensor === name) values.set(o, k, asTarget(tr, Float32Array.from(v), d)); });
  };
  // The teacher's own outputs (a language model's logits) from a session of the teacher itself,
  // which onnxruntime reads from files in Node (model-session.ts); tensors inside the graph
  // through the sweep's segment.
  const outputs = new Set(teacher.outputs.map((o) => o.name));
  try {
    if (names.every((n) => outputs.has(n))) {
      await eachOutput(runner, teacher, samples, (out, k) => { check(); for (const n of names) take(n, out[n], out[n].dims ?? [out[n].length], k); });
    } else {
      await capture(runner, teacher, names, samples, (name, t, k) => take(name, asF32(t), t.dims, k), check);
    }
  } catch (e) { values.release(); throw e; }
  return { values, dims: setup.trained.map((t) => dims.get(t.tensor) ?? []) };
}
