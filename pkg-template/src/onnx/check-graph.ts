// Load-time checks of a model's graphs (the main graph, every If / Loop / Scan body to a bounded
// depth, every local function): names are defined once, every node input and graph output is
// defined (here or in an enclosing graph), the nodes form no cycle (and are put in topological
// order when the file lists them otherwise), attributes that size later loops are sane, and every
// tensor passes check-tensors.ts. Work is linear in the model's size.
import { OnnxError } from './errors.js';
import { checkSparseTensor, checkTensor } from './check-tensors.js';
import type { ExternalSource } from './external.js';
import type { OnnxLimits } from './limits.js';
import { toNum, type GraphProto, type NodeProto } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

interface Ctx { external: ExternalSource; limits: OnnxLimits }

/** A graph or a function body, in the form the checks need. */
interface Body {
  where: string;
  nodes: NodeProto[];
  inputs: string[];
  initializers: any[];
  sparse: any[];
  outputs: string[];
  /** Receives the nodes in topological order when the file's order is not one. */
  reorder?: (nodes: NodeProto[]) => void;
}

const nodeLabel = (n: NodeProto, i: number) => `${n.op_type || 'node'} "${n.name || `#${i}`}"`;

/** Checks the whole model; may reorder unsorted graphs' nodes (a no-op for valid files). */
export function checkModel(model: any, external: ExternalSource, limits: OnnxLimits): void {
  const g = model.graph;
  if (!g || !model.ir_version) throw new OnnxError('not_onnx', `not an ONNX model: it has no ${g ? 'IR version' : 'graph'}`);
  if (!g.node.length) throw new OnnxError('corrupt', 'the ONNX graph has no nodes');
  if (!g.output.length) throw new OnnxError('truncated', 'the ONNX graph declares no outputs: the file is probably truncated');
  const ctx: Ctx = { external, limits };
  checkBody(graphBody(g, 'main graph'), [], 0, ctx);
  for (const f of model.functions ?? []) {
    const where = `function ${f.domain ? `${f.domain}:` : ''}${f.name}`;
    checkBody({ where, nodes: f.node, inputs: f.input, initializers: [], sparse: [], outputs: f.output, reorder: (n) => { f.node = n; } }, [], 0, ctx);
  }
}

function graphBody(g: GraphProto, where: string): Body {
  return {
    where, nodes: g.node, inputs: g.input.map((v: any) => v.name), initializers: g.initializer,
    sparse: g.sparse_initializer ?? [], outputs: g.output.map((v: any) => v.name),
    reorder: (n) => { g.node = n; },
  };
}

/**
 * Checks one body against the names of its enclosing scopes (innermost last); returns the names it
 * reads from those scopes, which its owning node depends on.
 */
type Scope = { has(name: string): boolean };

function checkBody(b: Body, outer: readonly Scope[], depth: number, ctx: Ctx): Set<string> {
  if (depth > ctx.limits.maxSubgraphDepth) {
    throw new OnnxError('too_deep', `subgraphs nested more than ${ctx.limits.maxSubgraphDepth} deep (${b.where})`);
  }
  // Where each local name comes from: -1 a graph input or initializer, else the producing node.
  const local = new Map<string, number>();
  const inputs = new Set<string>();
  for (const name of b.inputs) {
    if (!name) continue;
    if (inputs.has(name)) throw new OnnxError('duplicate_name', `${b.where} lists input "${name}" twice`);
    inputs.add(name);
    local.set(name, -1);
  }
  const inits = new Map<string, any>();
  for (const t of b.initializers) {
    checkTensor(t, `initializer of ${b.where}`, ctx.external);
    const name = t.name ?? '';
    if (!name) throw new OnnxError('corrupt', `${b.where} has an initializer without a name`);
    // Before IR 4 initializers were also listed as inputs: that one overlap is allowed.
    if (inits.has(name)) throw new OnnxError('duplicate_name', `${b.where} has two initializers named "${name}"`);
    inits.set(name, t);
    local.set(name, -1);
  }
  for (const s of b.sparse) {
    checkSparseTensor(s, `sparse initializer of ${b.where}`, ctx.external);
    const name = s.values?.name ?? '';
    if (local.has(name) && !inputs.has(name)) throw new OnnxError('duplicate_name', `${b.where} defines "${name}" twice (sparse initializer)`);
    if (name) local.set(name, -1);
  }
  b.nodes.forEach((n, i) => {
    if (!n.op_type) throw new OnnxError('corrupt', `${b.where}: node #${i} has no op type (${n.name || 'unnamed'})`);
    for (const o of n.output) {
      if (!o) continue;
      if (local.has(o)) {
        const prev = local.get(o)!;
        throw new OnnxError('duplicate_name', `${b.where}: ${nodeLabel(n, i)} writes "${o}", which ${prev < 0 ? 'is already a graph input or initializer' : `${nodeLabel(b.nodes[prev], prev)} also writes`}`);
      }
      local.set(o, i);
    }
  });

  const scopes: Scope[] = [...outer, local];
  const fromOuter = new Set<string>();
  const isOuter = (name: string) => outer.some((s) => s.has(name));
  // deps[i]: the nodes node i reads from, through its inputs or its subgraphs' outer names.
  const deps: number[][] = b.nodes.map(() => []);
  const read = (i: number, name: string, what: string) => {
    const p = local.get(name);
    if (p !== undefined) { if (p >= 0) deps[i].push(p); return; }
    if (isOuter(name)) { fromOuter.add(name); return; }
    throw new OnnxError('dangling_input', `${b.where}: ${what} reads "${name}", which no node, input or initializer defines`);
  };
  b.nodes.forEach((n, i) => {
    for (const name of n.input) if (name) read(i, name, nodeLabel(n, i));
    for (const a of n.attribute) {
      const where = `attribute ${a.name} of ${nodeLabel(n, i)} in ${b.where}`;
      if (a.t) checkTensor(a.t, where, ctx.external);
      for (const t of a.tensors ?? []) checkTensor(t, where, ctx.external);
      if (a.sparse_tensor) checkSparseTensor(a.sparse_tensor, where, ctx.external);
      for (const s of a.sparse_tensors ?? []) checkSparseTensor(s, where, ctx.external);
      const graphs: GraphProto[] = [...(a.g ? [a.g] : []), ...(a.graphs ?? [])];
      for (const sg of graphs) {
        const free = checkBody(graphBody(sg, `subgraph ${a.name} of ${nodeLabel(n, i)}`), scopes, depth + 1, ctx);
        for (const name of free) read(i, name, `subgraph ${a.name} of ${nodeLabel(n, i)}`);
      }
    }
    checkAttributes(n, i, b, local, inits);
  });
  for (const name of b.outputs) {
    if (!name || (!local.has(name) && !isOuter(name))) {
      throw new OnnxError('dangling_input', `${b.where}: output "${name}" is never produced`);
    }
    if (!local.has(name)) fromOuter.add(name);
  }
  topoOrder(b, deps);
  return fromOuter;
}

/**
 * Kahn's algorithm over the nodes, taking the lowest-numbered ready node first, so that a sorted
 * file keeps its order. A cycle is refused; an unsorted acyclic file is put in order.
 */
function topoOrder(b: Body, deps: number[][]): void {
  const n = b.nodes.length;
  const users: number[][] = b.nodes.map(() => []);
  const pending = new Int32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    for (const d of deps[i]) {
      if (d === i) throw new OnnxError('cycle', `${b.where}: ${nodeLabel(b.nodes[i], i)} reads its own output`);
      users[d].push(i);
      pending[i]++;
      if (d > i) sorted = false;
    }
  }
  if (sorted) return;
  // A binary heap of ready node indices.
  const heap: number[] = [];
  const push = (x: number) => {
    heap.push(x);
    for (let k = heap.length - 1; k > 0;) {
      const p = (k - 1) >> 1;
      if (heap[p] <= heap[k]) break;
      [heap[p], heap[k]] = [heap[k], heap[p]];
      k = p;
    }
  };
  const pop = (): number => {
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      for (let k = 0; ;) {
        const l = 2 * k + 1, r = l + 1;
        let m = k;
        if (l < heap.length && heap[l] < heap[m]) m = l;
        if (r < heap.length && heap[r] < heap[m]) m = r;
        if (m === k) break;
        [heap[m], heap[k]] = [heap[k], heap[m]];
        k = m;
      }
    }
    return top;
  };
  for (let i = 0; i < n; i++) if (!pending[i]) push(i);
  const order: number[] = [];
  while (heap.length) {
    const i = pop();
    order.push(i);
    for (const u of users[i]) if (--pending[u] === 0) push(u);
  }
  if (order.length < n) {
    let stuck = 0;
    while (!pending[stuck]) stuck++;
    throw new OnnxError('cycle', `${b.where}: the nodes form a cycle (through ${nodeLabel(b.nodes[stuck], stuck)}): an ONNX graph is acyclic`);
  }
  b.reorder?.(order.map((i) => b.nodes[i]));
}

/**
 * Required inputs of the standard ops whose inputs later stages read by position (their count has
 * not changed across opsets): a node with fewer, or with an empty name in a required position,
 * is not a valid node of that op.
 */
const REQUIRED_INPUTS: Record<string, number> = {
  Conv: 2, ConvTranspose: 2, Gemm: 2, MatMul: 2, BatchNormalization: 5, InstanceNormalization: 3,
  Add: 2, Sub: 2, Mul: 2, Div: 2, Pow: 2, PRelu: 2, Gather: 2, Relu: 1, Concat: 1, Transpose: 1,
  Flatten: 1, Identity: 1, Cast: 1,
};

/** Op arity, and attributes whose values later code loops over or divides by. */
function checkAttributes(n: NodeProto, i: number, b: Body, local: Map<string, number>, inits: Map<string, any>): void {
  if (n.domain && n.domain !== 'ai.onnx') return;
  const need = REQUIRED_INPUTS[n.op_type] ?? 0;
  for (let k = 0; k < need; k++) {
    if (!n.input[k]) {
      throw new OnnxError('bad_node', `${b.where}: ${nodeLabel(n, i)} has ${n.input.filter((x: string) => x).length} of the ${need} inputs ${n.op_type} requires`);
    }
  }
  if (n.op_type === 'Conv' || n.op_type === 'ConvTranspose') {
    const a = n.attribute.find((x: any) => x.name === 'group');
    const group = a ? toNum(a.i) : 1;
    const label = `${b.where}: ${nodeLabel(n, i)}`;
    if (!Number.isSafeInteger(group) || group < 1 || group > 0x7fffffff) {
      throw new OnnxError('bad_attribute', `${label} has group ${group}: a positive integer is needed`);
    }
    // The weight's first dim (output channels of a Conv, input channels of a ConvTranspose) is
    // split into `group` parts.
    const wname = n.input[1];
    const w = wname ? weightTensor(wname, b, local, inits) : undefined;
    if (w && w.dims.length) {
      const c = toNum(w.dims[0]);
      if (c % group !== 0 || (c === 0 && group !== 1)) {
        throw new OnnxError('bad_attribute', `${label} has group ${group}, which does not divide its weight's ${c} ${n.op_type === 'Conv' ? 'output' : 'input'} channels`);
      }
    }
  }
}

/** A local constant tensor by name (initializer or Constant node output), if any. */
function weightTensor(name: string, b: Body, local: Map<string, number>, inits: Map<string, any>): any {
  const p = local.get(name);
  if (p === undefined) return undefined;
  if (p >= 0) {
    const c = b.nodes[p];
    if (c.op_type !== 'Constant') return undefined;
    return c.attribute.find((x: any) => x.name === 'value' && x.t)?.t;
  }
  return inits.get(name);
}
