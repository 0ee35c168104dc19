// `sparsekit-wasm sensitivity`: each layer (or channel group) pruned alone at each level, the model's
// fidelity measured on held-out samples; a layers x levels chart on stdout, the table as JSON.
import path from 'node:path';
import { loadOnnx, sensitivity, parseNm, OnnxError, JOB_DEFAULTS } from 'sparsekit-wasm/onnx';
import { parse, help, posInt, numList, oneFile } from '../cli/args.js';
import { modelInput } from '../cli/model-input.js';
import { PROG, UsageError } from '../cli/errors.js';
import { loadOrt, readSamples, checkSources, checkSamples, textOptions } from '../cli/samples.js';
import { progress, writeJson } from '../cli/print.js';

/** @typedef {import('sparsekit-wasm/onnx').SensitivityResult} SensitivityResult */
/** @typedef {NonNullable<import('sparsekit-wasm/onnx').SensitivityOptions['method']>} Method */

export const SUMMARY = 'sensitivity IN.onnx --eval DIR …       fidelity of each layer / channel group pruned alone, per level';

const USAGE = `Usage: ${PROG} sensitivity IN.onnx --eval DIR (--sparsity L1,L2,… | --nm N:M | --channels [query:]L1,L2,…) [options]

  Prunes each layer (--sparsity, --nm) or channel group (--channels) alone at each level and measures
  the model's fidelity against the original on held-out samples (1 = same outputs). wanda / sparsegpt
  cells take their statistics from --calib in one pass of the unpruned model; channel cells are plain
  removals (calibrated compensation only improves on them).`;

/** @type {[number, string][]} */
const SHADES = [[0.999, ' '], [0.99, '░'], [0.95, '▒'], [0.9, '▓']];
/** @param {number} f */
const shade = (f) => (SHADES.find(([t]) => f >= t) ?? [0, '█'])[1];

/**
 * The chart: one row per unit, one shaded cell per level (darker = more fidelity lost).
 * @param {SensitivityResult} res
 */
export function chart(res) {
  /** @param {string} s */
  const name = (s) => (s.length > 40 ? `…${s.slice(-39)}` : s);
  const w = Math.max(5, ...res.units.map((u) => name(u.name).length));
  const head = `${'layer'.padEnd(w)}  ${'params'.padStart(8)}  ${res.levels.map((l) => String(l).padStart(7)).join(' ')}`;
  const rows = res.units.map((u) => `${name(u.name).padEnd(w)}  ${String(u.params).padStart(8)}  ${u.cells.map((c) => `${c.fidelity.toFixed(3)}${shade(c.fidelity)}`.padStart(7)).join(' ')}`);
  const legend = `fidelity per cell (worst output): ' ' >= 0.999  ░ >= 0.99  ▒ >= 0.95  ▓ >= 0.9  █ below`;
  return [head, ...rows, '', legend].join('\n');
}

/** @param {string[]} argv */
export async function main(argv) {
  const { values, positionals } = parse('sensitivity', argv);
  if (values.help) return void console.log(help('sensitivity', USAGE));
  const input = await modelInput(oneFile(positionals, 'sensitivity'));
  const file = input.model;
  const modes = /** @type {const} */ (['sparsity', 'nm', 'channels']).filter((k) => values[k] !== undefined);
  if (modes.length !== 1) throw new UsageError('give exactly one of --sparsity L1,L2,…, --nm N:M, --channels L1,L2,…');
  const mode = modes[0];
  const method = /** @type {Method} */ (values.method ?? 'magnitude');
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new UsageError(`--method must be magnitude, wanda or sparsegpt (got "${method}")`);
  if (mode === 'channels' && method !== 'magnitude') throw new UsageError('--channels cells are plain removals: --method applies to --sparsity / --nm');
  if (method === 'magnitude' && values.calib !== undefined) throw new UsageError('--calib is read by --method wanda|sparsegpt');
  if (values['round-to'] !== undefined && mode !== 'channels') throw new UsageError('--round-to applies to --channels only');
  const evalSrc = /** @type {string | undefined} */ (values.eval);
  if (!evalSrc || evalSrc === 'synthetic') throw new UsageError('--eval DIR (held-out samples) is required');
  const calibSrc = method === 'magnitude' ? undefined : /** @type {string | undefined} */ (values.calib) ?? 'synthetic';
  checkSources(calibSrc, evalSrc);
  let nm, levels;
  // --channels query:L1,L2,…: grouped-query attention's query heads within their KV groups as the units
  const query = mode === 'channels' && /^query:/.test(String(values.channels));
  try {
    if (mode === 'nm') nm = parseNm(/** @type {string} */ (values.nm), '--nm');
    else levels = numList(mode, query ? String(values.channels).slice('query:'.length) : values[mode]);
  } catch (e) { if (e instanceof OnnxError) throw new UsageError(e.message); throw e; }
  const model = await loadOnnx(file);
  const ort = await loadOrt();
  const text = textOptions(values, input);
  const evalSet = await readSamples('eval', evalSrc, model, values['eval-count'] === undefined ? undefined : posInt('eval-count', values['eval-count']), text);
  const calibration = calibSrc ? await readSamples('calib', calibSrc, model, values['calib-count'] === undefined ? undefined : posInt('calib-count', values['calib-count']), text) : undefined;
  checkSamples(calibration, evalSet);
  const bar = progress(values.quiet === true);
  let res;
  try {
    res = await sensitivity(model, {
      ort, sessionOptions: { logSeverityLevel: 3 }, eval: evalSet, calibration, mode, levels, nm, method,
      roundTo: values['round-to'] === undefined ? JOB_DEFAULTS.roundTo : posInt('round-to', values['round-to']),
      ...(query ? { heads: /** @type {const} */ ('query') } : {}),
      onProgress: (p) => bar({ phase: 'sensitivity', done: p.done, total: p.total, label: `${p.unit} ${p.level}` }),
    });
  } catch (e) {
    if (e instanceof OnnxError && e.code === 'invalid_sparsity') throw new UsageError(e.message);
    throw e;
  }
  if (typeof values.report === 'string') writeJson(values.report, { input: path.resolve(file), ...res });
  console.log(chart(res));
  console.log(`\n${res.units.length} ${mode === 'channels' ? 'channel groups' : 'layers'} x ${res.levels.length} levels on ${res.samples} held-out samples: ${res.sessions} onnxruntime sessions, ${res.runs} model runs; ${(res.ms.total / 1000).toFixed(1)} s (onnxruntime ${(res.ms.model / 1000).toFixed(1)} s, library ${(res.ms.library / 1000).toFixed(1)} s)`);
  if (typeof values.report === 'string') console.log(`wrote ${values.report}`);
}
