// The training core's per-op-type profile (a build with the cfg sparsekit_train_profile:
// `Trainer._raw.profile()`, cumulative forward and backward seconds per op type) between two
// readings: milliseconds per op type times `scale` (1 / steps for a per-step figure), the largest
// first, op types under 0.5% of the total left out. Used by bench/train/train-profile-wasm.mjs and
// bench/recover/minilm-step-profile.mjs.
/** @returns {{ total: number, rows: [string, number, number][] }} rows: [op, forward ms, backward ms] */
export function opProfileDelta(before, after, scale = 1) {
  const rows = Object.entries(after).map(([op, [f, b]]) => [op, (f - (before[op]?.[0] ?? 0)) * 1e3 * scale, (b - (before[op]?.[1] ?? 0)) * 1e3 * scale]);
  const total = rows.reduce((a, r) => a + r[1] + r[2], 0);
  rows.sort((a, b) => b[1] + b[2] - a[1] - a[2]);
  return { total, rows: rows.filter((r) => r[1] + r[2] > 0.005 * total) };
}
