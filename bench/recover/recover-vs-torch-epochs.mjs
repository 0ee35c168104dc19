// The per-epoch tables of bench/recover/recover-vs-torch.mjs (--per-epoch): every epoch's parameters on
// the held-out set, each engine against PyTorch (oneDNN) in pairs of the same order seed and epoch;
// PyTorch without oneDNN against it is the spread from rounding alone; with --f64, each snapshot's
// distance to the float64 run of the same seed and epoch.
import { median } from '../lib/stats.mjs';

export const mean = (a) => a.reduce((x, y) => x + y, 0) / Math.max(1, a.length);
export const points = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}`;
/** Per-seed differences `d`: each in points, and their mean ± standard error with its 95%
 * interval (normal approximation, mean ± 1.96 standard errors: the seeds are independent orders). */
export const perSeedFigures = (d) => {
  const sd = Math.sqrt(d.reduce((a, x) => a + (x - mean(d)) ** 2, 0) / Math.max(1, d.length - 1));
  const se = sd / Math.sqrt(d.length);
  if (d.length < 2) return [d.map(points).join(' / '), `${points(mean(d))} (one order: no spread to measure)`];
  return [d.map(points).join(' / '), `${points(mean(d))} ± ${(100 * se).toFixed(2)} (standard error; 95% interval ${points(mean(d) - 1.96 * se)} to ${points(mean(d) + 1.96 * se)})`];
};

/**
 * The markdown of the per-epoch comparison.
 * @param {object[]} epochRows one row per engine, variant, order seed and epoch
 * @param {{ epochs: number, key: 'cls' | 'rec' }} o
 */
export function epochMarkdown(epochRows, { epochs: EPOCHS, key: KEY }) {
  let epochMd = '';
  const up = KEY === 'cls'; // the task metric: accuracy (higher is better) or CER (lower)
  const fineUp = KEY !== 'cls'; // the finer figure: mean KL (lower is better) or step agreement (higher)
  // ours and any renamed build of it first, then PyTorch's runs
  const ENGINES = [...new Set(epochRows.map((r) => r.engine))].sort((a, b) => Number(a.startsWith('torch')) - Number(b.startsWith('torch')) || (a === 'torch' ? -1 : b === 'torch' ? 1 : a.localeCompare(b)));
  const exact = epochRows.some((r) => r.drift !== undefined); // --f64: each snapshot's distance to the float64 one
  const lines = [`| variant | engine | epochs | ${up ? 'accuracy' : 'CER'}: mean | vs PyTorch, same seed and epoch: mean difference (better / equal / worse) | ${up ? 'mean KL' : 'step agreement'}: mean | vs PyTorch: mean difference (better / equal / worse) |${exact ? ` ${up ? 'accuracy' : 'CER'} vs float64: mean difference (better / equal / worse) | distance to float64: median (max) |` : ''}`, `|---|---|---|---:|---|---:|---|${exact ? '---|---:|' : ''}`];
  for (const v of [...new Set(epochRows.map((r) => r.variant))]) {
    for (const [span, from] of [['all', 1], [`${Math.ceil(EPOCHS / 2) + 1}–${EPOCHS}`, Math.ceil(EPOCHS / 2) + 1]]) {
      const of = (engine) => epochRows.filter((r) => r.variant === v && r.engine === engine && r.epoch >= from);
      const refOf = (engine) => new Map(of(engine).map((r) => [`${r.seed}/${r.epoch}`, r]));
      const refs = { torch: refOf('torch'), 'torch-f64': refOf('torch-f64') };
      for (const engine of ENGINES) {
        const rs = of(engine);
        if (!rs.length) continue;
        const cmp = (key, better, against = 'torch') => {
          if (engine === against) return '–';
          // pairs only where the reference ran (--noise / --f64 runs can cover fewer seeds)
          const d = rs.filter((r) => refs[against].has(`${r.seed}/${r.epoch}`)).map((r) => r[key] - refs[against].get(`${r.seed}/${r.epoch}`)[key]);
          if (!d.length) return '–';
          const b = d.filter((x) => (better ? x > 0 : x < 0)).length, w = d.filter((x) => (better ? x < 0 : x > 0)).length;
          const m = mean(d);
          return `${key === 'metric' ? `${m >= 0 ? '+' : ''}${(100 * m).toFixed(2)} points` : `${m >= 0 ? '+' : ''}${m.toExponential(1)}`} (${b} / ${d.length - b - w} / ${w})`;
        };
        const name = { ours: 'ours', torch: 'PyTorch', 'torch-nomkldnn': 'PyTorch without oneDNN', 'torch-f64': 'PyTorch float64' }[engine] ?? engine;
        const dr = exact ? ` ${cmp('metric', up, 'torch-f64')} | ${engine === 'torch-f64' || !rs.some((r) => r.drift !== undefined) ? '–' : `${median(rs.filter((r) => r.drift !== undefined).map((r) => r.drift)).toExponential(1)} (${Math.max(...rs.filter((r) => r.drift !== undefined).map((r) => r.drift)).toExponential(1)})`} |` : '';
        lines.push(`| ${v} | ${name} | ${span} (${rs.length} snapshots) | ${(100 * mean(rs.map((r) => r.metric))).toFixed(2)}% | ${cmp('metric', up)} | ${KEY === 'cls' ? mean(rs.map((r) => r.fine)).toExponential(3) : mean(rs.map((r) => r.fine)).toFixed(4)} | ${cmp('fine', fineUp)} |${dr}`);
      }
    }
  }
  // The late epochs seed by seed: each engine's mean difference to a reference run of the same seed.
  const late = Math.ceil(EPOCHS / 2) + 1, seeds = [...new Set(epochRows.map((r) => r.seed))].sort((a, b) => a - b);
  const perSeed = [];
  for (const v of [...new Set(epochRows.map((r) => r.variant))]) {
    const at = (engine, seed) => epochRows.filter((r) => r.variant === v && r.engine === engine && r.seed === seed && r.epoch >= late);
    for (const [engine, against] of ['torch', 'torch-f64'].flatMap((ref) => ENGINES.filter((e) => e !== ref && e !== 'torch-f64').map((e) => [e, ref]))) {
      const both = seeds.filter((sd) => at(engine, sd).length && at(against, sd).length);
      if (!both.length) continue;
      const d = both.map((sd) => mean(at(engine, sd).map((r) => r.metric - at(against, sd).find((q) => q.epoch === r.epoch).metric)));
      const [each, meanSe] = perSeedFigures(d);
      const [hi, lo] = [d.filter((x) => x > 0).length, d.filter((x) => x < 0).length].map((k) => (up ? k : d.length - k - d.filter((x) => x === 0).length));
      perSeed.push(`- ${v}, ${engine} − ${against}: ${each} points (seeds ${both.join(', ')}); mean ${meanSe}, better on ${hi} seeds, worse on ${lo}`);
    }
  }
  // Per tensor (--f64 runs that kept it): the median over trained tensors and seeds, early and last.
  const tensorDrift = [];
  for (const v of [...new Set(epochRows.map((r) => r.variant))]) {
    for (const engine of ENGINES.filter((e) => e !== 'torch-f64')) {
      const at = (ep) => epochRows.filter((r) => r.variant === v && r.engine === engine && r.epoch === ep && r.driftPerTensor).flatMap((r) => Object.values(r.driftPerTensor));
      const eps = [1, 2, 3, EPOCHS].filter((ep) => at(ep).length);
      if (eps.length) tensorDrift.push(`- ${v}, ${engine}: ${eps.map((ep) => `epoch ${ep} ${median(at(ep)).toExponential(1)}`).join(', ')} (${new Set(epochRows.filter((r) => r.variant === v && r.engine === engine && r.driftPerTensor).map((r) => r.seed)).size} seeds)`);
    }
  }
  // With more than one build of ours (--pkg runs merged), each seed's mean over our builds against
  // the mean over PyTorch's runs of the same seed: two rounding families, each averaged.
  const ours = ENGINES.filter((e) => !e.startsWith('torch')), theirs = ENGINES.filter((e) => e.startsWith('torch'));
  for (const v of [...new Set(epochRows.map((r) => r.variant))]) {
    const lateMean = (engine, sd) => mean(epochRows.filter((r) => r.variant === v && r.engine === engine && r.seed === sd && r.epoch >= late).map((r) => r.metric));
    const has = (engine, sd) => epochRows.some((r) => r.variant === v && r.engine === engine && r.seed === sd);
    const full = seeds.filter((sd) => [...ours, ...theirs].every((e) => has(e, sd)));
    if (ours.length < 2 || !full.length) continue;
    const d = full.map((sd) => mean(ours.map((e) => lateMean(e, sd))) - mean(theirs.map((e) => lateMean(e, sd))));
    const [each, meanSe] = perSeedFigures(d);
    perSeed.push(`- ${v}, mean of ${ours.join(' + ')} − mean of ${theirs.join(' + ')}: ${each} points (seeds ${full.join(', ')}); mean ${meanSe}`);
  }
  if (tensorDrift.length) perSeed.push('', 'Each trained tensor\'s distance to float64 (relative L2), the median over the tensors and seeds:', '', ...tensorDrift);
  epochMd = `\n\nEvery epoch's parameters on the same held-out set (\`--per-epoch\`), compared in pairs of the same order seed and epoch:\n\n${lines.join('\n')}\n\nEpochs ${late}–${EPOCHS}, seed by seed (${up ? 'accuracy' : 'CER'}, mean difference to the reference run of the same seed):\n\n${perSeed.join('\n')}\n`;
  return epochMd;
}
