// The training core (docs/training-engine.md): a Trainer over a graph of ONNX operators (built
// from an ONNX model by sparsekit-wasm/onnx's trainGraph), forward, MSE towards targets, masked
// Adam. Coercion and copying only; every check lives in the Rust core.
import { argError, call } from './errors.js';
import { f32 } from './convert.js';
import type { Floats } from './convert.js';
import { Owned } from './owned.js';
import { R } from './runtime.js';
import type { RawTrainer } from '../wasm/st/sparsekit_wasm.js';

/** An attribute value of a training graph node. */
export type TrainAttr = number | string | number[];

/** One ONNX node of a training graph (an empty input name is an omitted optional input). */
export interface TrainNode {
  opType: string;
  name?: string;
  inputs: string[];
  outputs: string[];
  attrs?: Record<string, TrainAttr>;
}

/** An initializer: float data (a weight, trained unless frozen) or integer data (shapes, axes). */
export interface TrainInit {
  name: string;
  dims: number[];
  values: Float32Array | Int32Array | Float64Array;
}

/** The graph the training core runs. */
export interface TrainGraph {
  nodes: TrainNode[];
  /** Names of the graph inputs, in the order `forward`/`step` take them. */
  inputs: string[];
  outputs: string[];
  initializers: TrainInit[];
  /** Float initializers that are constants, not parameters. */
  frozen?: string[];
}

/** Options of {@link Trainer}. */
export interface TrainerOptions {
  /** Adam's learning rate, default 1e-3. */
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay, default 0. */
  weightDecay?: number;
  /** Hold every weight that is zero now at zero (a pruned student), default true. */
  masked?: boolean;
}

/** A batch tensor: values row-major with their shape. */
export interface Batch {
  values: Floats;
  shape: number[];
}

const TRAINER_KEYS = ['lr', 'beta1', 'beta2', 'eps', 'weightDecay', 'masked'];

function batchArgs(inputs: Batch[], what: string): [Float32Array[], number[][]] {
  if (!Array.isArray(inputs)) throw argError(`${what} must be an array of { values, shape }`);
  return [inputs.map((b, i) => f32(b.values, `${what}[${i}].values`)), inputs.map((b) => Array.from(b.shape ?? []))];
}

/**
 * Gradient training of a graph: `step` runs forward, the mean squared error of each output
 * towards its target (summed over outputs), backward and one Adam step. A graph with an
 * operator outside the core's set is refused by name (`unsupported_op`) when constructed.
 */
export class Trainer extends Owned {
  /** @internal */
  declare _raw: RawTrainer;

  constructor(graph: TrainGraph, opts: TrainerOptions = {}) {
    super();
    if (typeof opts !== 'object' || opts === null) throw argError('options must be an object');
    for (const k of Object.keys(opts)) if (!TRAINER_KEYS.includes(k)) throw argError(`unknown option \`${k}\`, expected one of ${TRAINER_KEYS.join(', ')}`);
    const spec = { nodes: graph.nodes.map((n) => ({ ...n, name: n.name ?? '', attrs: n.attrs ?? {} })), inputs: graph.inputs, outputs: graph.outputs, frozen: graph.frozen ?? [] };
    const inits = graph.initializers;
    this._raw = call(() => new (R().RawTrainer)(spec, inits.map((t) => t.name), inits.map((t) => t.dims), inits.map((t) => t.values), opts));
  }

  /** The outputs for `inputs`. */
  forward(inputs: Batch[]): Batch[] {
    const [v, s] = batchArgs(inputs, 'inputs');
    const [vals, shapes] = call(() => this._live.forward(v, s)) as [Float32Array[], number[][]];
    return vals.map((values, i) => ({ values, shape: shapes[i] }));
  }

  /** One Adam step towards `targets` (one per output); returns the loss before the step. */
  step(inputs: Batch[], targets: Floats[]): number {
    const [v, s] = batchArgs(inputs, 'inputs');
    const t = targets.map((x, i) => f32(x, `targets[${i}]`));
    return call(() => this._live.step(v, s, t));
  }

  /** The loss towards `targets`, without a step. */
  loss(inputs: Batch[], targets: Floats[]): number {
    const [v, s] = batchArgs(inputs, 'inputs');
    const t = targets.map((x, i) => f32(x, `targets[${i}]`));
    return call(() => this._live.eval(v, s, t));
  }

  /** Adam steps taken. */
  get steps(): number {
    return this._live.steps;
  }

  /** Names of the trained parameters. */
  get paramNames(): string[] {
    return this._live.paramNames();
  }

  /** The current values of parameter `name`. */
  param(name: string): Float32Array {
    const i = this.paramNames.indexOf(name);
    if (i < 0) throw argError(`no trained parameter named ${name}`);
    return call(() => this._live.param(i));
  }
}
