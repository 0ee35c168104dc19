// Per-unit settings from a sensitivity table under a budget, as SPDY allocates: each unit picks one
// option (dense, or one of its levels, or with the mixed search one of its quantized cells); the cost of an option is the fidelity it lost alone, or its
// continuous companion (the outputs' cosine loss) when larger, made non-decreasing over the levels; the gain what the objective counts; a dynamic programme over the
// costs discretised in `resolution` steps of budget / resolution (rounded up: never over budget)
// maximises the summed gain with the summed cost within the budget.
import type { SensitivityResult } from './sensitivity.js';

export type Objective = 'params' | 'flops' | 'latency' | 'bytes';

/** Chosen level index per unit (-1: dense), the summed gain and cost. */
export interface Allocation { choice: number[]; gain: number; cost: number }

/**
 * Cost and gain of every option of every unit (cell order); options that change nothing are dropped
 * (-Infinity gain). Costs are made non-decreasing along each chain of cells of the same bits (float,
 * int8, int4: dense then the levels, quant-cells.ts), not across chains.
 */
export function options(table: SensitivityResult, objective: Objective): { cost: number[]; gain: number[] }[] {
  return table.units.map((u) => {
    const worst = new Map<string, number>();
    const cost: number[] = [], gain: number[] = [];
    for (const c of u.cells) {
      const chain = c.quantize ?? 'float';
      const w = Math.max(worst.get(chain) ?? 0, table.baseline - c.fidelity, c.cosineLoss ?? 0);
      worst.set(chain, w);
      cost.push(w);
      const g = objective === 'params' ? c.removed : objective === 'flops' ? c.flops : objective === 'bytes' ? (c.bytes ?? 0) : (c.latencyMs ?? 0);
      gain.push(c.removed > 0 || c.quantize ? Math.max(0, g) : -Infinity);
    }
    return { cost, gain };
  });
}

export function allocate(table: SensitivityResult, budget: number, objective: Objective = 'params', resolution = 1000): Allocation {
  const opts = options(table, objective);
  const R = Math.max(1, Math.floor(resolution));
  const step = budget > 0 ? budget / R : 0;
  const bucket = (c: number) => (c <= 1e-12 ? 0 : step > 0 ? Math.ceil(c / step) : R + 1);
  // best[b]: the largest gain with cost buckets <= b; pick[u][b]: the option unit u took there.
  let best = new Float64Array(R + 1);
  const pick: Int16Array[] = [];
  for (const o of opts) {
    const next = Float64Array.from(best);
    const p = new Int16Array(R + 1).fill(-1);
    o.cost.forEach((c, k) => {
      const g = o.gain[k];
      if (!(g > 0)) return;
      const w = bucket(c);
      for (let b = R; b >= w; b--) {
        const v = best[b - w] + g;
        if (v > next[b]) { next[b] = v; p[b] = k; }
      }
    });
    pick.push(p);
    best = next;
  }
  // Walk back from the full budget.
  const choice = new Array<number>(opts.length).fill(-1);
  let b = R, cost = 0;
  for (let u = opts.length - 1; u >= 0; u--) {
    const k = pick[u][b];
    if (k >= 0) { choice[u] = k; cost += opts[u].cost[k]; b -= bucket(opts[u].cost[k]); }
  }
  return { choice, gain: best[R], cost };
}
