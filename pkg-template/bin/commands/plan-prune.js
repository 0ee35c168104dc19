// `sparsekit-wasm prune … --recipe R.json` (per-layer settings from a file) and `prune … --min-fidelity F`
// (the search: --sparsity auto | --nm N:M | --channels auto, held-out --eval samples, the chosen plan
// optionally saved as a recipe). Everything is checked, and the recipe resolved against the model,
// before the output file is written: a bad recipe leaves no output.
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, saveOnnx, OnnxError, parseNm, parseRecipe, planRecipe, applyRecipe, compress, makeInputSet, readCalibrationDir, CALIB_DEFAULTS } from '../../src/onnx/index.js';
import { PROG, UsageError, RunError, runCommand, parse, num, posInt, levelList, progressLine, loadOrt, readSets } from './cli-util.js';
import { chart } from './sensitivity.js';

/** @typedef {import('../../src/onnx/index.js').PruneReport} PruneReport */
/** @typedef {import('./cli-util.js').Thrown} Thrown */
/** @typedef {NonNullable<import('../../src/onnx/index.js').ApplyRecipeOptions['method']>} Method */
/** @typedef {NonNullable<import('../../src/onnx/index.js').CompressOptions['objective']>} Objective */

/**
 * True when `prune` should be handled here.
 * @param {string[]} args
 */
export const handles = (args) => args.some((a) => /^--(recipe|min-fidelity|recover)(=|$)/.test(a));

/** @satisfies {import('./cli-util.js').ArgOptions} */
const OPTIONS = {
  output: { type: 'string', short: 'o' }, recipe: { type: 'string' }, 'min-fidelity': { type: 'string' },
  sparsity: { type: 'string' }, nm: { type: 'string' }, channels: { type: 'string' }, levels: { type: 'string' },
  objective: { type: 'string' }, eval: { type: 'string' }, 'eval-count': { type: 'string' }, 'max-steps': { type: 'string' },
  'table-samples': { type: 'string' }, confidence: { type: 'string' },
  method: { type: 'string' }, calib: { type: 'string' }, 'calib-count': { type: 'string' }, damp: { type: 'string' }, 'round-to': { type: 'string' },
  'save-recipe': { type: 'string' }, report: { type: 'string' }, quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' },
};

/** The parsed options of this command.
 * @typedef {ReturnType<typeof parse<typeof OPTIONS>>['values']} Values */

/**
 * @param {PruneReport} report
 * @param {string} out
 */
function summary(report, out) {
  const p = report.params;
  console.log(`parameters ${p.before} -> ${p.after} (${(100 * (1 - p.after / p.before)).toFixed(1)}% removed); zeros among prunable weights ${report.zeros} (${(100 * report.sparsity).toFixed(1)}%)`);
  console.log(`wrote ${out}`);
}

/**
 * @param {Values & { recipe: string }} values
 * @param {string} file
 * @param {string} out
 */
async function withRecipe(values, file, out) {
  for (const k of /** @type {const} */ (['min-fidelity', 'sparsity', 'nm', 'channels', 'levels', 'objective', 'eval', 'save-recipe', 'max-steps', 'table-samples', 'confidence'])) {
    if (values[k] !== undefined) throw new UsageError(`--${k} does not combine with --recipe (the recipe holds the settings)`);
  }
  let text;
  try { text = fs.readFileSync(values.recipe, 'utf8'); } catch (caught) {
    const e = /** @type {Thrown} */ (caught); // readFileSync throws a system error (code ENOENT etc.)
    throw new UsageError(`cannot read --recipe ${values.recipe}: ${e.code ?? e.message}`);
  }
  const model = await loadOnnx(file);
  let recipe;
  try {
    recipe = parseRecipe(text);
    planRecipe(model, recipe); // every name and pattern must match: checked before any change
  } catch (e) { if (e instanceof OnnxError) throw new UsageError(`${values.recipe}: ${e.message}`); throw e; }
  // a Method once the check below has passed (it throws otherwise)
  const method = /** @type {Method} */ (values.method ?? recipe.method ?? 'magnitude');
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new UsageError(`--method must be magnitude, wanda or sparsegpt (got "${method}")`);
  let ort, calibration;
  if (method !== 'magnitude') {
    ort = await loadOrt();
    const src = values.calib ?? 'synthetic', count = posInt('calib-count', values['calib-count'], CALIB_DEFAULTS.calibrationCount);
    calibration = src === 'synthetic' ? makeInputSet(model, { count }) : await readCalibrationDir(src, model, { limit: count });
  } else if (values.calib !== undefined) throw new UsageError('--calib is only used by --method wanda|sparsegpt');
  const bar = progressLine(values.quiet);
  const report = await applyRecipe(model, recipe, {
    method, ort, sessionOptions: { logSeverityLevel: 3 }, calibration, percDamp: values.damp === undefined ? CALIB_DEFAULTS.percDamp : num('damp', values.damp),
    onProgress: (d, t, l) => bar('recipe', d, t, l),
    onCalibProgress: ({ done, total, phase, layer }) => phase !== 'done' && bar(phase, Math.floor(done), total, layer),
  });
  const saved = await saveOnnx(model, out);
  if (values.report) fs.writeFileSync(values.report, JSON.stringify({ input: path.resolve(file), output: saved.model, method, ...report }, null, 2));
  /** @type {Record<string, number>} */
  const counts = {};
  // the report's settings are labels ("sparsity 0.5", "2:4", "dense"): strings
  for (const s of Object.values(/** @type {Record<string, string>} */ (report.recipe.settings))) counts[s] = (counts[s] ?? 0) + 1;
  console.log(`recipe ${values.recipe} (${report.recipe.mode}, ${method}): ${Object.entries(counts).map(([k, v]) => `${v} x ${k}`).join(', ')}`);
  summary(report, saved.model);
}

/**
 * @param {Values} values
 * @param {string} file
 * @param {string} out
 */
async function search(values, file, out) {
  const F = num('min-fidelity', values['min-fidelity']);
  if (!(F > 0 && F <= 1)) throw new UsageError(`--min-fidelity must be in (0, 1] (got ${F})`);
  const modes = /** @type {const} */ (['sparsity', 'nm', 'channels']).filter((k) => values[k] !== undefined);
  if (modes.length !== 1) throw new UsageError('--min-fidelity needs exactly one of --sparsity auto, --nm N:M, --channels auto');
  const mode = modes[0];
  if (mode !== 'nm' && values[mode] !== 'auto') throw new UsageError(`with --min-fidelity, --${mode} takes "auto" (the search chooses per layer; --levels sets the candidates)`);
  let nm;
  // `mode` is the one option given (filtered on !== undefined above); parseNm throws OnnxError
  try { if (mode === 'nm') nm = parseNm(/** @type {string} */ (values.nm)); } catch (e) { throw new UsageError(/** @type {Error} */ (e).message); }
  if (values.levels !== undefined && mode === 'nm') throw new UsageError('--levels applies to --sparsity auto / --channels auto');
  const levels = values.levels === undefined ? undefined : levelList('levels', values.levels);
  // an Objective once the check below has passed (it throws otherwise)
  const objective = /** @type {Objective} */ (values.objective ?? 'params');
  if (!['params', 'flops', 'latency'].includes(objective)) throw new UsageError(`--objective must be params, flops or latency (got "${objective}")`);
  if (objective === 'latency' && mode !== 'channels') throw new UsageError('--objective latency needs --channels auto (zeros do not make onnxruntime faster)');
  const method = /** @type {Method} */ (values.method ?? 'magnitude'); // checked on the next line
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new UsageError(`--method must be magnitude, wanda or sparsegpt (got "${method}")`);
  if (method === 'magnitude' && values.calib !== undefined) throw new UsageError('--calib is only used by --method wanda|sparsegpt');
  const confidence = values.confidence === undefined ? undefined : num('confidence', values.confidence);
  if (confidence !== undefined && !(confidence > 0 && confidence < 1)) throw new UsageError(`--confidence must be in (0, 1), e.g. 0.95 (got ${values.confidence})`);
  if (values['save-recipe'] && path.resolve(values['save-recipe']) === out) throw new UsageError('--save-recipe and -o name the same file');
  const model = await loadOnnx(file);
  const ort = await loadOrt();
  const { evalSet, calibration } = await readSets(model, {
    evalDir: values.eval, evalCount: posInt('eval-count', values['eval-count'], 8),
    calibSrc: values.calib, calibCount: posInt('calib-count', values['calib-count'], CALIB_DEFAULTS.calibrationCount), needCalib: method !== 'magnitude',
  });
  const bar = progressLine(values.quiet);
  let res;
  try {
    res = await compress(model, {
      ort, sessionOptions: { logSeverityLevel: 3 }, eval: evalSet, calibration, mode, nm, levels, objective, method, minFidelity: F, confidence,
      roundTo: posInt('round-to', values['round-to'], 8), percDamp: values.damp === undefined ? CALIB_DEFAULTS.percDamp : num('damp', values.damp),
      maxSteps: posInt('max-steps', values['max-steps'], 8),
      tableSamples: values['table-samples'] === undefined ? undefined : Math.min(evalSet.length, posInt('table-samples', values['table-samples'], 1)),
      onProgress: (p) => bar(p.phase, p.done, p.total, p.label),
    });
  } catch (e) {
    if (e instanceof OnnxError && e.code === 'invalid_sparsity') throw new UsageError(e.message);
    throw e;
  }
  if (!values.quiet) process.stderr.write(`${chart(res.table)}\n`);
  const held = (/** @type {{ bound?: number, boundWorst?: string }} */ s) => (s.bound === undefined ? '' : `, lower bound ${s.bound.toFixed(4)} (${s.boundWorst || '-'}) at ${confidence}`);
  for (const s of res.steps) console.log(`budget ${s.budget.toPrecision(3)}: predicted loss ${s.predicted.toFixed(4)}, fidelity ${s.fidelity.toFixed(4)} (${s.worst || '-'})${held(s)} ${s.pass ? 'meets' : 'below'} ${F}, removed ${s.removed}`);
  console.log(`${res.sessions} onnxruntime sessions, ${res.runs} model runs; ${(res.ms.total / 1000).toFixed(1)} s (sensitivity ${(res.ms.sensitivity / 1000).toFixed(1)} s; onnxruntime ${(res.ms.model / 1000).toFixed(1)} s, calibrated apply ${(res.ms.apply / 1000).toFixed(1)} s, library ${(res.ms.library / 1000).toFixed(1)} s)`);
  if (!res.model) {
    const best = Math.max(...res.steps.map((s) => s.bound ?? s.fidelity));
    throw new RunError(`no plan met --min-fidelity ${F} (the lightest plan tried scored ${best.toFixed(4)}${confidence === undefined ? '' : `, its lower bound at confidence ${confidence}`}); nothing written`);
  }
  if (values['save-recipe']) fs.writeFileSync(values['save-recipe'], `${JSON.stringify(res.recipe, null, 2)}\n`);
  const saved = await saveOnnx(res.model, out);
  if (values.report) fs.writeFileSync(values.report, JSON.stringify({ input: path.resolve(file), output: saved.model, fidelity: res.fidelity, bound: res.bound, steps: res.steps, recipe: res.recipe, sessions: res.sessions, runs: res.runs, ms: res.ms, report: res.report, table: res.table }, null, 2));
  console.log(res.bound ? `chosen plan: fidelity ${res.fidelity.score.toFixed(4)}, its lower bound at confidence ${confidence} ${res.bound.score.toFixed(4)} (worst output ${res.bound.worst || '-'}) >= ${F}`
    : `chosen plan: fidelity ${res.fidelity.score.toFixed(4)} (worst output ${res.fidelity.worst || '-'}) >= ${F}`);
  if (values['save-recipe']) console.log(`wrote ${values['save-recipe']}`);
  summary(/** @type {PruneReport} */ (res.report), saved.model); // compress returns a report with every model
}

/** Options of `prune … --recover` that go to recover (with their value), and those both steps get. */
const RECOVER_ONLY = new Set(['--loss', '--features', '--feature-weight', '--epochs', '--minutes', '--lr', '--batch', '--checkpoint', '--resume', '--steps', '--eval', '--eval-count', '--metric', '--report']);
const WITH_VALUE = new Set([...RECOVER_ONLY, '-o', '--output', '--sparsity', '--nm', '--channels', '--block', '--round-to', '--scope', '--method', '--calib', '--calib-count', '--damp', '--recipe', '--min-fidelity', '--levels', '--objective', '--max-steps', '--save-recipe', '--table-samples', '--confidence']);

/**
 * `prune IN -o OUT … --recover [recover options]`: the prune as asked, into a temporary file, then
 * `recover` of it with IN as the teacher into OUT; the temporary file is removed whatever happens.
 * @param {string[]} args
 */
async function pruneThenRecover(args) {
  /** @type {string[]} */
  const pruneArgs = [];
  /** @type {string[]} */
  const recoverArgs = [];
  /** @type {string[]} */
  const positionals = [];
  let out, calib, calibCount, method;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].startsWith('--') && args[i].includes('=') ? [args[i].slice(0, args[i].indexOf('=')), args[i].slice(args[i].indexOf('=') + 1)] : [args[i], undefined];
    if (flag === '--recover') continue;
    if (!WITH_VALUE.has(flag)) { (flag.startsWith('-') ? pruneArgs : positionals).push(args[i]); if (flag === '-q' || flag === '--quiet') recoverArgs.push(flag); continue; }
    const value = inline ?? args[++i];
    if (value === undefined) throw new UsageError(`${flag} needs a value`);
    if (flag === '-o' || flag === '--output') out = value;
    else if (flag === '--calib') calib = value;
    else if (flag === '--calib-count') calibCount = value;
    else if (RECOVER_ONLY.has(flag)) recoverArgs.push(flag, value);
    else { if (flag === '--method') method = value; pruneArgs.push(flag, value); }
  }
  if (positionals.length !== 1) throw new UsageError(`prune takes exactly one input model (got ${positionals.length}); see '${PROG} prune --help'`);
  if (!out) throw new UsageError(`prune needs -o OUT.onnx; see '${PROG} prune --help'`);
  // The calibration samples serve both steps; magnitude pruning takes none.
  const calibArgs = [...(calib ? ['--calib', calib] : []), ...(calibCount ? ['--calib-count', calibCount] : [])];
  if (method && method !== 'magnitude') pruneArgs.push(...calibArgs);
  const tmp = `${path.resolve(out)}.pruned-${process.pid}.onnx`;
  const cli = process.argv[1];
  const ignore = () => {}; // Ctrl-C reaches the child too: it stops and writes nothing; this process cleans up
  process.on('SIGINT', ignore);
  let status = 0;
  try {
    const { spawnSync } = await import('node:child_process');
    let r = spawnSync(process.execPath, [cli, 'prune', positionals[0], ...pruneArgs, '-o', tmp], { stdio: 'inherit' });
    if (r.status === 0) r = spawnSync(process.execPath, [cli, 'recover', tmp, '--teacher', positionals[0], ...calibArgs, ...recoverArgs, '-o', out], { stdio: 'inherit' });
    status = r.status ?? 1;
  } finally {
    process.off('SIGINT', ignore);
    for (const f of [tmp, `${tmp}.data`]) fs.rmSync(f, { force: true });
  }
  if (status) process.exit(status);
}

/** @param {string[]} args */
export async function main(args) {
  if (args.includes('--recover')) return runCommand(() => pruneThenRecover(args));
  await runCommand(async () => {
    const { values, positionals } = parse(args, OPTIONS);
    if (positionals.length !== 1) throw new UsageError(`prune takes exactly one input model (got ${positionals.length}); see '${PROG} prune --help'`);
    if (!values.output) throw new UsageError(`prune needs -o OUT.onnx; see '${PROG} prune --help'`);
    const file = positionals[0];
    const out = path.resolve(values.output);
    if (path.resolve(file) === out) throw new UsageError('the output must not overwrite the input model');
    if (values.recipe !== undefined && values['min-fidelity'] !== undefined) throw new UsageError('give --recipe or --min-fidelity, not both');
    if (values.recipe !== undefined) return withRecipe(/** @type {Values & { recipe: string }} */ (values), file, out);
    return search(values, file, out);
  });
}
