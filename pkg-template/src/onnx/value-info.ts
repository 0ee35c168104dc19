// A graph input's or output's declaration (onnx.ValueInfoProto) as plain values: its name, element
// type and dims, symbolic dims by name.
import { toNum } from './tensor-data.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

export interface ValueInfo {
  name: string;
  elemType: number;
  dims: (number | string)[];
  /** Number of dims, or -1 when the graph declares no shape (unknown rank, not a scalar). */
  rank: number;
}

/** A decoded ValueInfoProto as a ValueInfo. */
export function valueInfo(v: any): ValueInfo {
  const tt = v.type && v.type.tensor_type;
  const dims = tt && tt.shape
    ? tt.shape.dim.map((d: any) => (d.value === 'dim_value' ? toNum(d.dim_value) : d.dim_param || '?'))
    : [];
  return { name: v.name, elemType: tt ? tt.elem_type : 0, dims, rank: tt && tt.shape ? dims.length : -1 };
}
