// What a generated integer input may hold, read off the nodes that consume it (issue 38): token
// ids that index an embedding table of 160 rows draw from 0..159 (onnxruntime refuses idx=996
// there), a mask that feeds a Where, a logical op or a Cast to float draws 0/1. Without such a
// consumer the generic generator's default range stands.
import type { NodeProto, OnnxModel } from '../model.js';
import { toNum } from '../model.js';
import { attrInt } from '../weights.js';

/** Inclusive bounds of the values a generated integer input draws. */
export interface IntRange {
  lo: number;
  hi: number;
  /** 'index' (rows of a Gather table) or 'mask' (0/1). */
  kind: 'index' | 'mask';
}

/** ONNX integer and bool element types (the inputs these bounds apply to). */
const INTEGER_TYPES = new Set([2, 3, 4, 5, 6, 7, 9, 12, 13]);

/** Ops that carry their input 0's values through unchanged (reshaped, reordered, sliced). */
const PASS = new Set(['Identity', 'Unsqueeze', 'Squeeze', 'Reshape', 'Flatten', 'Transpose', 'Slice', 'Expand', 'Concat', 'Tile']);

/** ONNX float types, as a Cast's `to`. */
const FLOAT_TO = new Set([1, 10, 11, 16]);

/** Ranges of the model's integer inputs that have a consumer telling them (see the file's comment). */
export function integerInputRanges(model: OnnxModel): Map<string, IntRange> {
  const readers = new Map<string, { node: NodeProto; at: number }[]>();
  for (const node of model.graph.node as NodeProto[]) {
    node.input.forEach((name: string, at: number) => {
      if (!name) return;
      if (!readers.has(name)) readers.set(name, []);
      readers.get(name)!.push({ node, at });
    });
  }
  const consts = model.constants();
  const out = new Map<string, IntRange>();
  for (const inp of model.inputs) {
    if (!INTEGER_TYPES.has(inp.elemType)) continue;
    let rows = Infinity, mask = false;
    const seen = new Set<string>([inp.name]);
    const queue = [inp.name];
    while (queue.length) {
      const v = queue.shift()!;
      for (const { node, at } of readers.get(v) ?? []) {
        const op = node.op_type;
        if (op === 'Gather' && at === 1) {
          const table = consts.get(node.input[0]);
          if (!table) continue;
          const dims = (table.tensor.dims as unknown[]).map(toNum);
          const axis = attrInt(node, 'axis', 0);
          const d = dims[axis < 0 ? axis + dims.length : axis];
          if (d !== undefined && d > 0) rows = Math.min(rows, d);
        } else if ((op === 'Where' && at === 0) || op === 'Not' || op === 'And' || op === 'Or') {
          mask = true;
        } else if (op === 'Cast' && (FLOAT_TO.has(attrInt(node, 'to', 1)) || attrInt(node, 'to', 1) === 9)) {
          mask = true;
        } else if ((PASS.has(op) && at === 0) || (op === 'Cast')) {
          for (const o of node.output) if (o && !seen.has(o)) { seen.add(o); queue.push(o); }
        }
      }
    }
    // an index bound wins: ids that also build a mask (padding id 0 -> mask) must stay in the table
    if (Number.isFinite(rows)) out.set(inp.name, { lo: 0, hi: rows - 1, kind: 'index' });
    else if (mask) out.set(inp.name, { lo: 0, hi: 1, kind: 'mask' });
  }
  return out;
}
