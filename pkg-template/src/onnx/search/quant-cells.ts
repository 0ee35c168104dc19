// The quantized cells of the mixed search's sensitivity table (issue 39, item 6): when the search
// may also quantize, each layer's options are its pruning levels and dense, each in float or at the
// job's bits, and each embedding table (Gather data, which dominates a language model's bytes) is a
// unit of its own whose options are its bits. A cell is measured as the float ones are: the
// weight's values replaced in the one session by what its codes dequantize to (quant/layer-trial.ts,
// round to nearest: the table only ranks options, the verified plan is quantized as the job writes
// it), with the fidelity against the original and the served bytes of the tensors the form stores.
//
// The cells per layer, to keep the table within 3x the pruning-only one at the default 3 levels:
//   int8 scheme: dense+int8, each level+int8;
//   int4 scheme: dense+int8, dense+int4, each level+int4 (a pruned layer at 8 bits rarely beats
//   the same layer dense at 4 bits on bytes, so those cells are not measured).
// A chain (one bits, dense then the levels) stops as the float levels do: once a cell of the chain,
// or the float cell at the same level, falls below stopBelow, the next is not run and takes the
// smaller of the two fidelities (an estimate, as for the float levels).
import type { OnnxModel, OnnxWeight } from '../model.js';
import { plannedForms, type QuantizeOptions, type QuantScheme } from '../quant/quantize.js';
import { trialQuantize } from '../quant/layer-trial.js';
import type { QuantForm } from '../quant/forms.js';
import type { QuantTarget } from '../quant/targets.js';
import { servedBytes, type ByteSizer } from '../served-bytes.js';
import type { Outputs } from '../calib/evaluate.js';
import type { SensitivityCell } from './sensitivity.js';

type Planned = Map<string, { t: QuantTarget; form: QuantForm; group: number }>;

/** What the table quantizes: each weight's form at each bits, which bits layers and tables take. */
export interface QuantCellPlan {
  forms: Partial<Record<QuantScheme, Planned>>;
  /** The bits a pruned level is combined with (the scheme's). */
  top: QuantScheme;
  /** Bits a dense layer is tried at. */
  layerBits: QuantScheme[];
  /** The embedding tables that are units, and the bits each is tried at. */
  tables: QuantTarget[];
  tableBits: QuantScheme[];
}

/** The plan of the quantized cells for these quantization options. */
export function quantCellPlan(model: OnnxModel, opts: QuantizeOptions): QuantCellPlan {
  const top = opts.scheme;
  const embeddings = opts.embeddings ?? top;
  const layerBits: QuantScheme[] = top === 'int4' ? ['int8', 'int4'] : ['int8'];
  // int3 tables are the caller's fixed choice (no cell tries them): written so in every plan
  const tableBits: QuantScheme[] = embeddings === 'float' || embeddings === 'int3' ? [] : embeddings === 'int4' ? ['int8', 'int4'] : ['int8'];
  const forms: Partial<Record<QuantScheme, Planned>> = {};
  for (const b of new Set([...layerBits, ...tableBits])) forms[b] = plannedForms(model, { ...opts, layerBits: () => b });
  const prunable = new Set(model.prunable().map((w) => w.name));
  const tables = tableBits.length ? [...forms.int8!.values()].filter((p) => p.t.role === 'embedding' && !prunable.has(p.t.w.name)).map((p) => p.t) : [];
  return { forms, top, layerBits, tables, tableBits };
}

/** How a cell's model runs and is scored (from sensitivity.ts). */
export interface CellRun {
  model: OnnxModel;
  /** The outputs with `w` holding `values` (every other weight as it is). */
  runWith: (w: OnnxWeight, values: Float32Array) => Promise<Outputs[]>;
  score: (out: Outputs[]) => { fidelity: number; worst: string; cosineLoss: number };
  sizer?: ByteSizer;
  stopBelow?: number;
  check: () => void;
}

async function storedBytes(sizer: ByteSizer, tensors: Uint8Array[]): Promise<number> {
  let s = 0;
  for (const t of tensors) s += await servedBytes(sizer, t);
  return s;
}

/**
 * The quantized cells of one unit: `floatCells` / `pruned` are its float levels' cells and values (empty
 * for a table), `dense` its float values, `denseBytes` their served bytes.
 */
export async function quantCells(run: CellRun, plan: QuantCellPlan, w: OnnxWeight, dense: Float32Array, denseBytes: number,
  floatCells: SensitivityCell[], pruned: Float32Array[], positions: number): Promise<SensitivityCell[]> {
  const table = plan.tables.some((t) => t.w.name === w.name);
  const out: SensitivityCell[] = [];
  for (const bits of table ? plan.tableBits : plan.layerBits) {
    const p = plan.forms[bits]?.get(w.name);
    if (!p) continue; // not a weight the quantizer writes (another dtype, a shared table, ConvTranspose)
    const chain: { level: number | string; values: Float32Array; removed: number; float?: SensitivityCell }[] = [{ level: 'dense', values: dense, removed: 0 }];
    if (!table && bits === plan.top) floatCells.forEach((c, i) => chain.push({ level: c.level, values: pruned[i], removed: c.removed, float: c }));
    let prev: SensitivityCell | undefined;
    for (const link of chain) {
      run.check();
      const trial = trialQuantize(run.model, p.t, p.form, p.group, link.values);
      const bytes = run.sizer ? { bytes: denseBytes - await storedBytes(run.sizer, trial.tensors) } : {};
      const base = { level: link.level, quantize: bits, removed: link.removed, flops: link.removed * positions, ...bytes };
      const stop = run.stopBelow;
      const below = stop !== undefined && ((prev && prev.fidelity < stop) || (link.float && link.float.fidelity < stop));
      if (below) {
        const from = [prev, link.float].filter((c): c is SensitivityCell => !!c).sort((a, b) => a.fidelity - b.fidelity)[0];
        prev = { ...base, fidelity: from.fidelity, worst: from.worst, cosineLoss: from.cosineLoss, skipped: true };
      } else {
        prev = { ...base, ...run.score(await run.runWith(w, trial.values)) };
      }
      out.push(prev);
    }
  }
  return out;
}
