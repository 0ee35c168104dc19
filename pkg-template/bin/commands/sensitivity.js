// `sparsekit-wasm sensitivity`: each layer (or channel group) pruned alone at each level, the model's
// fidelity measured on held-out samples; a layers x levels chart on stdout, the table as JSON.
import fs from 'node:fs';
import { loadOnnx, sensitivity, parseNm, OnnxError, CALIB_DEFAULTS } from '../../src/onnx/index.js';
import { PROG, UsageError, runCommand, parse, posInt, levelList, progressLine, loadOrt, readSets } from './cli-util.js';

/** @typedef {import('../../src/onnx/index.js').SensitivityResult} SensitivityResult */
/** @typedef {NonNullable<import('../../src/onnx/index.js').SensitivityOptions['method']>} Method */

export const HELP = `Usage: ${PROG} sensitivity IN.onnx --eval DIR (--sparsity L1,L2,… | --nm N:M | --channels L1,L2,…) [options]

  Prunes each layer (--sparsity, --nm) or channel group (--channels) alone at each level and measures
  the model's fidelity against the original on held-out samples (1 = same outputs).
  --eval DIR              held-out samples (the --calib formats of 'prune'); required
  --eval-count N          the first N of them (default 8)
  --sparsity L1,L2,…      sparsity levels, e.g. 0.25,0.5,0.75
  --nm N:M                one N:M level per layer
  --channels L1,L2,…      fractions of each group's channels removed, e.g. 0.125,0.25,0.5
  --round-to N            --channels: kept count rounded to a multiple of N (default 8)
  --method magnitude|wanda|sparsegpt
                          --sparsity / --nm scoring (default magnitude); wanda and sparsegpt take their
                          statistics from --calib in one pass of the unpruned model. Channel cells are
                          plain removals (calibrated compensation only improves on them)
  --calib DIR|synthetic   calibration samples for wanda / sparsegpt (default synthetic); must not share
                          files with --eval
  --calib-count N         (default 16)
  --json OUT.json         write the table as JSON
  -q, --quiet             no progress lines
  -h, --help              this help`;

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

/** @param {string[]} args */
export async function main(args) {
  await runCommand(async () => {
    const { values, positionals } = parse(args, {
      eval: { type: 'string' }, 'eval-count': { type: 'string' }, calib: { type: 'string' }, 'calib-count': { type: 'string' },
      sparsity: { type: 'string' }, nm: { type: 'string' }, channels: { type: 'string' }, 'round-to': { type: 'string' },
      method: { type: 'string' }, json: { type: 'string' }, quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' },
    });
    if (values.help) return void console.log(HELP);
    if (positionals.length !== 1) throw new UsageError(`sensitivity takes exactly one input model (got ${positionals.length}); see '${PROG} sensitivity --help'`);
    const modes = /** @type {const} */ (['sparsity', 'nm', 'channels']).filter((k) => values[k] !== undefined);
    if (modes.length !== 1) throw new UsageError('give exactly one of --sparsity L1,L2,…, --nm N:M, --channels L1,L2,…');
    const mode = modes[0];
    // a Method once the check below has passed (it throws otherwise)
    const method = /** @type {Method} */ (values.method ?? 'magnitude');
    if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new UsageError(`--method must be magnitude, wanda or sparsegpt (got "${method}")`);
    if (mode === 'channels' && method !== 'magnitude') throw new UsageError('--channels cells are plain removals: --method applies to --sparsity / --nm');
    if (method === 'magnitude' && values.calib !== undefined) throw new UsageError('--calib is only used by --method wanda|sparsegpt');
    if (values['round-to'] !== undefined && mode !== 'channels') throw new UsageError('--round-to applies to --channels only');
    let nm, levels;
    try {
      // `mode` is the one option given (filtered on !== undefined above)
      if (mode === 'nm') nm = parseNm(/** @type {string} */ (values.nm));
      else levels = levelList(mode, values[mode]);
    } catch (e) { if (e instanceof OnnxError) throw new UsageError(e.message); throw e; }
    const model = await loadOnnx(positionals[0]);
    const ort = await loadOrt();
    const { evalSet, calibration } = await readSets(model, {
      evalDir: values.eval, evalCount: posInt('eval-count', values['eval-count'], 8),
      calibSrc: values.calib, calibCount: posInt('calib-count', values['calib-count'], CALIB_DEFAULTS.calibrationCount), needCalib: method !== 'magnitude',
    });
    const bar = progressLine(values.quiet);
    let res;
    try {
      res = await sensitivity(model, {
        ort, sessionOptions: { logSeverityLevel: 3 }, eval: evalSet, calibration, mode, levels, nm, method,
        roundTo: posInt('round-to', values['round-to'], 8),
        onProgress: (p) => bar('sensitivity', p.done, p.total, `${p.unit} ${p.level}`),
      });
    } catch (e) {
      if (e instanceof OnnxError && e.code === 'invalid_sparsity') throw new UsageError(e.message);
      throw e;
    }
    if (values.json) fs.writeFileSync(values.json, JSON.stringify({ input: positionals[0], ...res }, null, 2));
    console.log(chart(res));
    console.log(`\n${res.units.length} ${mode === 'channels' ? 'channel groups' : 'layers'} x ${res.levels.length} levels on ${res.samples} held-out samples: ${res.sessions} onnxruntime sessions, ${res.runs} model runs; ${(res.ms.total / 1000).toFixed(1)} s (onnxruntime ${(res.ms.model / 1000).toFixed(1)} s, library ${(res.ms.library / 1000).toFixed(1)} s)`);
    if (values.json) console.log(`wrote ${values.json}`);
  });
}
