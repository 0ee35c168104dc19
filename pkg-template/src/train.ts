// The training core (docs/training-engine.md): a Trainer over a graph of ONNX operators (built
// from an ONNX model by sparsekit-wasm/onnx's trainGraph), forward, a loss per output towards
// targets (or the caller's own loss through backward/update), masked Adam, the proximal step,
// checkpoints. Coercion and copying only; every check lives in the Rust core.
import { argError, call } from './errors.js';
import { f32 } from './convert.js';
import type { Floats } from './convert.js';
import { Owned } from './owned.js';
import { R } from './runtime.js';
import type { RawTrainer } from '../wasm/st/sparsekit_wasm.js';

/** A tensor attribute (ONNX type 4, ConstantOfShape's `value`): dims, values, whether integers. */
export interface TrainTensorAttr { dims: number[]; values: number[]; int: boolean }

/** An attribute value of a training graph node. */
export type TrainAttr = number | string | number[] | string[] | TrainTensorAttr;

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

/**
 * The loss of one output against its target: `mse` (any output); `kl` — KL(target ‖ output)
 * along `axis` (default -1), for probability outputs (after a Softmax; its gradient is soft
 * cross-entropy's); `bce` — binary cross-entropy against the target's probabilities, element by
 * element, for Sigmoid maps. `weight` (default 1, 0 leaves the output out of the loss) scales it.
 */
export interface OutputLoss {
  kind: 'mse' | 'kl' | 'bce' | 'cosine';
  axis?: number;
  weight?: number;
}

/** Options of {@link Trainer.prox}. */
export interface ProxOptions {
  /** See the parameter as this shape (a row-major reshape, same element count) before blocking. */
  view?: number[];
  /** Options of the soft threshold (docs/API.md): default 20, 1e-8, f32 eps, 'newton'. */
  maxIter?: number;
  atol?: number;
  eps?: number;
  method?: 'newton' | 'bisection';
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
 * Gradient training of a graph: `step` runs forward, each output's loss towards its target
 * (MSE unless {@link Trainer.setLosses} says otherwise; summed over outputs), backward and one
 * Adam step. The step also comes in parts for a loss computed by the caller: `forward`, then
 * `backward(outputGrads)` (gradients summed until...), then `update()`. A graph with an operator
 * outside the core's set is refused by name (`unsupported_op`) when constructed. Any value of the
 * graph may be listed in `graph.outputs` (an intermediate tensor, for a matched-feature loss).
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

  /** Names of the outputs, in the order of `forward`, targets, losses and gradients. */
  get outputNames(): string[] {
    return this._live.outputNames();
  }

  /** One loss per output (default: `mse`, weight 1, for every output). */
  setLosses(losses: OutputLoss[]): void {
    if (!Array.isArray(losses)) throw argError('losses must be an array of { kind, axis?, weight? }');
    call(() => this._live.setLosses(losses));
  }

  /** The weighted loss of each output in the last `step` or `loss` call. */
  get lastLosses(): Float64Array {
    return this._live.lastLosses();
  }

  /** The outputs for `inputs`. */
  forward(inputs: Batch[]): Batch[] {
    const [v, s] = batchArgs(inputs, 'inputs');
    const [vals, shapes] = call(() => this._live.forward(v, s)) as [Float32Array[], number[][]];
    return vals.map((values, i) => ({ values, shape: shapes[i] }));
  }

  /**
   * One Adam step towards `targets` (one per output, flat or shaped as the output); returns the
   * loss before the step.
   */
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

  /**
   * Back-propagates the gradients of the caller's loss with respect to the outputs of the last
   * `forward` (one per output, that output's element count) and adds the parameter gradients
   * to those `update` will use (several batches may be accumulated before one update).
   */
  backward(outputGrads: Floats[]): void {
    if (!Array.isArray(outputGrads)) throw argError('outputGrads must be an array');
    const g = outputGrads.map((x, i) => f32(x, `outputGrads[${i}]`));
    call(() => this._live.backward(g));
  }

  /** The learning rate the next updates use (the constructor's `lr`, or the last {@link Trainer.setLr}). */
  get lr(): number {
    return this._live.lr;
  }

  /**
   * Sets the learning rate of the next updates (a schedule's value between steps). Adam's moments,
   * their bias correction and the keep-masks are unchanged; an lr that is negative or not finite is
   * refused (`invalid_value`) and the old one stays. The proximal step's threshold `lr * threshold`
   * uses it too.
   */
  setLr(lr: number): void {
    if (typeof lr !== 'number') throw argError('lr must be a number');
    call(() => this._live.setLr(lr));
  }

  /** One Adam step with the gradients summed by `backward` since the last update. */
  update(): void {
    call(() => this._live.update());
  }

  /**
   * The proximal step of sparse training on parameter `name`, after an Adam step: the block soft
   * threshold `lr * threshold` with Adam's conditioners `sqrt(v̂) + eps` (the proximal operator of
   * `threshold · Σ‖block‖₂` in Adam's metric; `softThreshold` with conditioners). `block` has one
   * size per dimension of the parameter (or of `opts.view`), `<= 0` for a whole dimension.
   * Returns the blocks that are zero after the step.
   */
  prox(name: string, block: number[], threshold: number, opts: ProxOptions = {}): { zeroBlocks: number; blocks: number } {
    const i = this.index(name);
    const [zeroBlocks, blocks] = call(() => this._live.prox(i, Float64Array.from(block ?? []), threshold, opts)) as [number, number];
    return { zeroBlocks, blocks };
  }

  /** Overwrites the values of parameter `name` (its Adam moments and keep-mask stay). */
  setParam(name: string, values: Floats): void {
    const i = this.index(name);
    const v = f32(values, 'values');
    call(() => this._live.setParam(i, v));
  }

  /**
   * Holds parameter `name` on a quantization grid from now on (quantization-aware training with the
   * straight-through estimator): `scale` per element, in the parameter's own layout, codes in
   * `[lo, hi]`. The forward and backward passes see `clamp(round(w / scale), lo, hi) · scale`; Adam
   * updates the float values behind them (kept in the trainer, saved by {@link Trainer.saveState}),
   * so steps smaller than half a grid step add up. {@link Trainer.prox} refuses a held parameter.
   * A masked trainer holds every zero it was built with, so a weight its grid put on code 0 stays
   * there like a pruned one.
   */
  holdGrid(name: string, scale: Floats, lo: number, hi: number): void {
    const i = this.index(name);
    const s = f32(scale, 'scale');
    call(() => this._live.holdGrid(i, s, lo, hi));
  }

  /** The shape of parameter `name`. */
  paramShape(name: string): number[] {
    const i = this.index(name);
    return Array.from(call(() => this._live.paramShape(i)));
  }

  /** Adam's second moments `v` of parameter `name` (before bias correction). */
  secondMoments(name: string): Float32Array {
    const i = this.index(name);
    return call(() => this._live.secondMoments(i));
  }

  /**
   * The whole training state — parameters, Adam moments, keep-masks, step count — as bytes
   * ({@link Trainer.stateBytes} of them: 12 bytes per weight, plus 1 when masked, plus names and
   * shapes). Adam's options are not in it.
   */
  saveState(): Uint8Array {
    return call(() => this._live.saveState());
  }

  /** Restores `saveState()` bytes of a trainer of the same graph; nothing changes on error. */
  loadState(bytes: Uint8Array): void {
    if (!(bytes instanceof Uint8Array)) throw argError('state must be a Uint8Array');
    call(() => this._live.loadState(bytes));
  }

  /** Size in bytes of `saveState()`'s result. */
  get stateBytes(): number {
    return this._live.stateBytes;
  }

  /** Adam steps taken. */
  get steps(): number {
    return this._live.steps;
  }

  /** The op of each node as it runs (after fusion; a fused chain is one entry), folded ones included. */
  get nodeOps(): string[] {
    return this._live.nodeOps();
  }

  /**
   * The ops that run on every batch: {@link nodeOps} without the shape arithmetic folded once per
   * input shape (nodes that depend only on constants and on the inputs' shapes).
   */
  get dataPathOps(): string[] {
    return this._live.dataPathOps();
  }

  /** Names of the trained parameters. */
  get paramNames(): string[] {
    return this._live.paramNames();
  }

  /** The current values of parameter `name`. */
  param(name: string): Float32Array {
    const i = this.index(name);
    return call(() => this._live.param(i));
  }

  private index(name: string): number {
    const i = this.paramNames.indexOf(name);
    if (i < 0) throw argError(`no trained parameter named ${name}`);
    return i;
  }
}
