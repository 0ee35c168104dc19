// `sparsekit-wasm prune IN.onnx -o OUT.onnx …`: the flags become one PruneJob (the module's
// runJob does the work, as it does for any caller); this file reads the files the job names,
// writes the result and prints it.
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, saveOnnx, saveTransformersFolder, runJob, parseNm, parseRecipe, planRecipe, transportSize, OnnxError, FloorError } from 'sparsekit-wasm/onnx';
import { parse, help, num, posInt, numList, blockShape, oneFile } from '../cli/args.js';
import { modelInput } from '../cli/model-input.js';
import { outputTarget } from '../cli/model-output.js';
import { PROG, UsageError } from '../cli/errors.js';
import { loadOrt, parseMetrics, readSamples, checkSources, checkSamples, textOptions, jobTokenizer } from '../cli/samples.js';
import { useThreads, THREADS_HELP } from '../cli/threads.js';
import { trainingOptions, TRAINING_FLAGS } from '../cli/training.js';
import { progress, table, fmtShape, fmtPct, fmtBytes, writeJson, fidelityTable, interruptible, formCounts } from '../cli/print.js';

/** @typedef {import('sparsekit-wasm/onnx').PruneJob} PruneJob */
/** @typedef {import('sparsekit-wasm/onnx').JobMode} JobMode */
/** @typedef {import('sparsekit-wasm/onnx').JobReport} JobReport */
/** @typedef {import('sparsekit-wasm/onnx').JobMethod} JobMethod */
/** @typedef {import('sparsekit-wasm/onnx').CalibLayerReport} CalibLayerReport */
/** @typedef {import('sparsekit-wasm/onnx').OnnxModel} OnnxModel */
/** @typedef {import('../cli/errors.js').Thrown} Thrown */
/** @typedef {ReturnType<typeof parse>['values']} Values */

/**
 * Files up to this size get exact transport sizes: brotli 11 runs at ~0.1-0.5 MB/s here, so a
 * 1 MiB model's exact figures took seconds against a job of a fraction of one (issue 40); above,
 * the estimate (its report says how and within what).
 */
const EXACT_TRANSPORT_BYTES = 64 * 1024;

export const SUMMARY = 'prune IN.onnx -o OUT.onnx [options]   prune an ONNX model (one-shot, recipe, searched to a floor, sparse training; then recovery)';

const USAGE = `Usage: ${PROG} prune IN.onnx -o OUT.onnx MODE [options]
       ${PROG} prune FOLDER/ -o OUT/ MODE [options]   a transformers.js folder in, a drop-in folder out

Modes (exactly one):
  --sparsity S | --nm N:M | --channels F            one-shot, every layer
  --channels query:F                                as F, grouped-query attention losing query heads within each KV group
  --channels layers:K --calib SRC                   the K least influential residual blocks removed
  --recipe R.json                                   per-layer settings
  --min-fidelity F --eval DIR (--sparsity auto | --nm N:M | --channels auto | --channels query:auto)
                                                    searched per layer to a fidelity floor
  --min-fidelity F --eval DIR --channels layers:auto  as many whole residual blocks as the floor allows
  --prox --sparsity S [--block RxC]                 block sparsity by sparse training
  --quantize int8|int4[,embeddings=E] alone         quantization without pruning (with a mode: both in one pass)
Add --recover to distill the result towards IN afterwards (not with --prox, which recovers itself).`;

/** Flags that only some modes read (the rest apply to every mode that runs what they set). */
const ONLY = /** @type {const} */ ({
  block: ['sparsity', 'prox'], 'round-to': ['channels', 'search'], scope: ['sparsity', 'channels', 'prox'],
  levels: ['search'], objective: ['search'], confidence: ['search'], 'table-samples': ['search'],
});

/** A flag's value where the table makes it a string. @param {unknown} v @returns {string} */
const str = (v) => /** @type {string} */ (v);

/**
 * The job's mode from the flags.
 * @param {Values} values
 * @returns {JobMode}
 */
function modeOf(values) {
  const given = /** @type {const} */ (['sparsity', 'nm', 'channels']).filter((k) => values[k] !== undefined);
  if (values.recipe !== undefined) {
    for (const k of ['min-fidelity', 'sparsity', 'nm', 'channels', 'prox']) if (values[k] !== undefined) throw new UsageError(`--${k} does not combine with --recipe (the recipe holds the settings)`);
    return { kind: 'recipe', recipe: readRecipe(str(values.recipe)) };
  }
  if (values['min-fidelity'] !== undefined) {
    if (values.prox) throw new UsageError('--prox does not combine with --min-fidelity');
    if (given.length !== 1) throw new UsageError('--min-fidelity needs exactly one of --sparsity auto, --nm N:M, --channels auto, --channels layers:auto');
    if (values.channels === 'layers:auto') {
      // the most whole residual blocks the floor allows, least influential first
      for (const f of ['levels', 'objective', 'table-samples', 'round-to', 'scope']) if (values[f] !== undefined) throw new UsageError(`--${f} does not apply to --channels layers:auto`);
      return { kind: 'search', target: 'layers', minFidelity: num('min-fidelity', values['min-fidelity']), confidence: values.confidence === undefined ? undefined : num('confidence', values.confidence) };
    }
    const target = given[0];
    // --channels query:auto: the search over query heads within KV groups
    const query = target === 'channels' && values.channels === 'query:auto';
    if (target !== 'nm' && values[target] !== 'auto' && !query) throw new UsageError(`with --min-fidelity, --${target} takes "auto" (the search chooses per layer; --levels sets the candidates)${target === 'channels' ? ', or "query:auto"' : ''}`);
    return {
      kind: 'search', target, minFidelity: num('min-fidelity', values['min-fidelity']), nm: target === 'nm' ? parseNm(str(values.nm), '--nm') : undefined,
      levels: values.levels === undefined ? undefined : numList('levels', values.levels),
      objective: /** @type {'params' | 'flops' | 'latency' | 'bytes' | undefined} */ (values.objective),
      confidence: values.confidence === undefined ? undefined : num('confidence', values.confidence),
      tableSamples: values['table-samples'] === undefined ? undefined : posInt('table-samples', values['table-samples']),
      roundTo: values['round-to'] === undefined ? undefined : posInt('round-to', values['round-to']),
      ...(query ? { heads: /** @type {const} */ ('query') } : {}),
    };
  }
  if (values.prox) {
    if (values.sparsity === undefined || given.length !== 1) throw new UsageError('--prox needs --sparsity S (the block sparsity to reach) and no other mode');
    return {
      kind: 'prox', sparsity: num('sparsity', values.sparsity), block: values.block === undefined ? undefined : blockShape('block', values.block),
      scope: /** @type {'layer' | 'global' | undefined} */ (values.scope),
      epochs: values.epochs === undefined ? undefined : posInt('epochs', values.epochs),
      minutes: values.minutes === undefined ? undefined : num('minutes', values.minutes),
    };
  }
  // --quantize alone: quantization without pruning (a sparsity of 0 prunes nothing)
  if (!given.length && values.quantize !== undefined) return { kind: 'sparsity', sparsity: 0 };
  if (given.length !== 1) throw new UsageError('give exactly one of --sparsity S, --nm N:M, --channels F (or --recipe, --min-fidelity, --prox), or --quantize alone');
  const k = given[0];
  if (k === 'sparsity') {
    // --scope owl: per-layer sparsities from the layers' outliers (OWL), each layer pruned on its own
    const owl = values.scope === 'owl';
    return {
      kind: 'sparsity', sparsity: num('sparsity', values.sparsity), block: values.block === undefined ? undefined : blockShape('block', values.block),
      scope: owl ? undefined : /** @type {'row' | 'layer' | 'global' | undefined} */ (values.scope), ...(owl ? { allocation: /** @type {const} */ ('owl') } : {}),
    };
  }
  if (k === 'nm') return { kind: 'nm', nm: parseNm(str(values.nm), '--nm') };
  // --channels layers:K: whole residual blocks, the value form of the structured-removal flag.
  const layers = /^layers:(.*)$/.exec(str(values.channels));
  if (layers) {
    if (layers[1] === 'auto') throw new UsageError('--channels layers:auto needs --min-fidelity F and --eval (the floor the count of blocks is searched to)');
    for (const f of ['scope', 'round-to']) if (values[f] !== undefined) throw new UsageError(`--${f} does not apply to --channels layers:K`);
    return { kind: 'layers', count: posInt('channels', layers[1]) };
  }
  // --channels query:F: query heads within their KV groups (grouped-query attention), K/V heads kept.
  const query = /^query:(.*)$/.exec(str(values.channels));
  return {
    kind: 'channels', fraction: num('channels', query ? query[1] : values.channels), scope: /** @type {'layer' | 'global' | undefined} */ (values.scope),
    roundTo: values['round-to'] === undefined ? undefined : posInt('round-to', values['round-to']),
    ...(query ? { heads: /** @type {const} */ ('query') } : {}),
  };
}

/**
 * A recipe file, or a prune --report that holds one (a searched plan).
 * @param {string} file
 * @returns {object}
 */
function readRecipe(file) {
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch (caught) {
    throw new UsageError(`cannot read --recipe ${file}: ${/** @type {Thrown} */ (caught).code ?? /** @type {Thrown} */ (caught).message}`);
  }
  /** @type {unknown} */
  let json;
  try { json = JSON.parse(text); } catch { json = undefined; } // parseRecipe says what is wrong with the text
  const held = /** @type {{ search?: { recipe?: object } } | undefined} */ (json && typeof json === 'object' ? json : undefined);
  try {
    return parseRecipe(held?.search?.recipe ?? text);
  } catch (e) {
    if (e instanceof OnnxError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
}

/**
 * Each flag a mode does not read is refused by name, never ignored.
 * @param {Values} values
 * @param {JobMode['kind']} kind
 * @param {JobMethod} method
 * @param {boolean} trains
 * @param {boolean} blocks whole residual blocks go (--channels layers:K or layers:auto): --calib measures their influence
 */
function checkApplies(values, kind, method, trains, blocks) {
  for (const [flag, modes] of Object.entries(ONLY)) {
    if (values[flag] !== undefined && !/** @type {readonly string[]} */ (modes).includes(kind)) throw new UsageError(`--${flag} does not apply to this mode (it applies to ${modes.map((m) => (m === 'search' ? '--min-fidelity' : `--${m}`)).join(', ')})`);
  }
  // --quantize reads --calib too: with samples its codes are compensated (GPTQ), without them rounded to nearest
  const calibrated = method !== 'magnitude' || values.quantize !== undefined;
  if ((values.calib !== undefined || values['calib-count'] !== undefined) && !calibrated && !trains && values.scope !== 'owl' && !blocks) throw new UsageError('--calib is read by --method wanda|sparsegpt, --quantize, --scope owl, --channels layers:K|auto, --prox and --recover');
  for (const f of TRAINING_FLAGS) {
    if (values[f] !== undefined && !trains) throw new UsageError(`--${f} applies to --recover and --prox`);
  }
  if (values.group !== undefined && values.quantize === undefined) throw new UsageError('--group applies to --quantize int4');
  if (values.metric && values.eval === undefined && !(kind === 'prox' || values.recover)) throw new UsageError('--metric applies when fidelity is measured: give --eval DIR|TEXT|synthetic');
}

/**
 * --quantize SCHEME[,embeddings=E] and --group: the job's quantize (the job checks the values and names
 * this flag in its error).
 * @param {Values} values
 * @returns {PruneJob['quantize']}
 */
function quantizeOf(values) {
  if (values.quantize === undefined) return undefined;
  const [scheme, ...rest] = str(values.quantize).split(',');
  /** @type {NonNullable<PruneJob['quantize']>} */
  const q = { scheme: /** @type {'int8' | 'int4'} */ (scheme) };
  if (values.group !== undefined) q.group = posInt('group', values.group);
  for (const part of rest) {
    const m = /^embeddings=(.*)$/.exec(part);
    if (!m || q.embeddings !== undefined) throw new UsageError(`--quantize ${str(values.quantize)}: after the scheme, only one embeddings=int8|int4|int3|float (got "${part}")`);
    q.embeddings = /** @type {'int8' | 'int4' | 'int3' | 'float'} */ (m[1]);
  }
  return q;
}

/** @param {string[]} argv */
export async function main(argv) {
  const { values, positionals } = parse('prune', argv);
  if (values.help) return void console.log(`${help('prune', USAGE)}\n\n${THREADS_HELP}`);
  const input = await modelInput(oneFile(positionals, 'prune'));
  const file = input.model;
  if (!values.output) throw new UsageError(`prune needs -o OUT.onnx; see '${PROG} prune --help'`);
  const target = outputTarget(str(values.output), input);
  const out = target.path;
  if (values.report !== undefined && path.resolve(str(values.report)) === out) throw new UsageError('--report and -o name the same file');
  const mode = modeOf(values);
  // a recipe may name its method; --method overrides it
  const method = /** @type {JobMethod} */ (values.method ?? (mode.kind === 'recipe' ? /** @type {{ method?: string }} */ (mode.recipe).method : undefined) ?? 'magnitude');
  const trains = mode.kind === 'prox' || !!values.recover;
  const blocks = mode.kind === 'layers' || (mode.kind === 'search' && mode.target === 'layers');
  checkApplies(values, mode.kind, method, trains, blocks);
  const calibSrc = /** @type {string | undefined} */ (values.calib) ?? (method !== 'magnitude' || trains || values.scope === 'owl' || blocks ? 'synthetic' : undefined);
  const evalSrc = /** @type {string | undefined} */ (values.eval) ?? (calibSrc === 'synthetic' && !trains && mode.kind !== 'search' ? 'synthetic' : undefined);
  if (mode.kind === 'search' && evalSrc === undefined) throw new UsageError('--min-fidelity needs --eval DIR (held-out samples): the floor is measured on them');
  checkSources(calibSrc, evalSrc);
  if (calibSrc || trains) await useThreads(input.model);
  // --prox's --epochs / --minutes are its mode's (modeOf), not the recovery's
  const training = { ...trainingOptions(values), ...(mode.kind === 'prox' ? { epochs: undefined, minutes: undefined } : {}) };

  const model = await loadOnnx(file);
  if (mode.kind === 'recipe') {
    try { planRecipe(model, mode.recipe); } catch (e) { if (e instanceof OnnxError) throw new UsageError(`${values.recipe}: ${e.message}`); throw e; }
  }
  const inputLocations = [...model.externalLocations];
  const kinds = parseMetrics(/** @type {string[] | undefined} */ (values.metric), model);
  const calibCount = values['calib-count'] === undefined ? undefined : posInt('calib-count', values['calib-count']);
  const evalCount = values['eval-count'] === undefined ? undefined : posInt('eval-count', values['eval-count']);
  const text = textOptions(values, input);
  /** @type {PruneJob} */
  const job = {
    mode, method,
    calibration: calibSrc ? { samples: await readSamples('calib', calibSrc, model, calibCount, text, trains) } : undefined,
    eval: evalSrc ? { samples: await readSamples('eval', evalSrc, model, evalCount, text), kinds } : undefined,
    recover: values.recover ? training : undefined,
    training: mode.kind === 'prox' ? training : undefined,
    quantize: quantizeOf(values),
    output: target.folder ? { layout: 'transformers.js' } : undefined,
  };
  // text samples only: the token rows their tokenizer never produces are zeroed
  const tokenizer = jobTokenizer(text, [calibSrc, evalSrc]);
  if (tokenizer) job.tokenizer = tokenizer;
  checkSamples(job.calibration?.samples, job.eval?.samples);
  const needsOrt = method !== 'magnitude' || trains || !!job.eval || mode.kind === 'layers' || (mode.kind === 'sparsity' && mode.allocation === 'owl') || (!!job.quantize && !!job.calibration);
  const ort = needsOrt ? await loadOrt() : undefined;
  const interrupt = interruptible(values.quiet === true);
  let result;
  try {
    // a calibrated run's cut past its budget waits in a scratch file, not in memory (issue 40)
    result = await runJob(model, job, { ort, sessionOptions: { logSeverityLevel: 3 }, cutStore: 'file', onProgress: progress(values.quiet === true, prunedBlocks), signal: interrupt.signal });
  } catch (e) {
    if (interrupt.signal.aborted) { process.stderr.write(`${PROG}: interrupted; nothing written\n`); process.exit(130); }
    if (e instanceof FloorError && e.steps.length) printSteps(e.steps, mode);
    throw e;
  } finally { interrupt.release(); }
  const { report } = result;
  const saved = target.folder && report.output
    ? await saveTransformersFolder(result.model, out, { from: /** @type {string} */ (input.folder), output: report.output })
    : await saveOnnx(result.model, out);
  const inFiles = [path.resolve(file), ...inputLocations.map((l) => path.join(path.dirname(path.resolve(file)), l)).filter((p) => fs.existsSync(p))];
  const outFiles = [saved.model, ...(saved.data ? [saved.data] : [])];
  let transport;
  try {
    // exact brotli 11 where it costs little (a few seconds per MiB), estimated above (the report says how and within what)
    const modeOf = (/** @type {string[]} */ fs_) => /** @type {'exact' | 'estimate'} */ (fs_.reduce((a, f) => a + fs.statSync(f).size, 0) <= EXACT_TRANSPORT_BYTES ? 'exact' : 'estimate');
    // where the written model's served bytes go (per tensor; embedding tables against the other
    // weights): with --report only, as it compresses a sample of every tensor
    const split = values.report !== undefined ? result.model : undefined;
    transport = { before: await transportSize(inFiles, { mode: modeOf(inFiles) }), after: await transportSize(outFiles, { mode: modeOf(outFiles), split }) };
  } catch (e) {
    for (const f of outFiles) fs.rmSync(f, { force: true }); // a failed run leaves no output
    if (target.folder) fs.rmSync(out, { recursive: true, force: true });
    throw e;
  }
  const files = {
    bytesBefore: transport.before.raw, bytesAfter: transport.after.raw, gzipBefore: transport.before.gzip, gzipAfter: transport.after.gzip,
    brotliBefore: transport.before.brotli, brotliAfter: transport.after.brotli, brotliQuality: transport.after.brotliQuality,
    // estimated from a fast pass at a fraction of brotli 11's cost (how, and how close, said here)
    estimated: transport.after.estimated, method: transport.after.method, tolerance: transport.after.tolerance,
    ...(transport.after.split ? { served: transport.after.split } : {}),
  };
  const fidelity = report.fidelity ? { source: evalSrc, ...report.fidelity } : undefined;
  if (values.report !== undefined) {
    writeJson(str(values.report), { input: path.resolve(file), ...report.prune, ...report, output: saved.model, externalData: saved.data ?? null, folder: target.folder ? out : null, layout: report.output ?? null, fidelity, files, seconds: report.ms / 1000 });
  }
  print(report, mode, { evalSrc, calibSrc, calibCount: job.calibration?.samples.length, files, out: saved, model: result.model });
}

/** @param {import('sparsekit-wasm/onnx').JobProgress & { sparsity?: number, target?: number }} p */
const prunedBlocks = (p) => (p.sparsity !== undefined ? ` blocks zero ${(100 * p.sparsity).toFixed(1)}%${p.target !== undefined ? ` (ramp ${(100 * p.target).toFixed(1)}%)` : ''}` : '');

/** @param {import('sparsekit-wasm/onnx').PlanStep[]} steps @param {JobMode} mode */
function printSteps(steps, mode) {
  const conf = mode.kind === 'search' ? mode.confidence : undefined;
  const floor = mode.kind === 'search' ? mode.minFidelity : 0;
  for (const s of steps) {
    const held = s.bound === undefined ? '' : `, lower bound ${s.bound.toFixed(4)} (${s.boundWorst || '-'}) at ${conf}`;
    console.log(`budget ${s.budget.toPrecision(3)}: predicted loss ${s.predicted.toFixed(4)}, fidelity ${s.fidelity.toFixed(4)} (${s.worst || '-'})${held} ${s.pass ? 'meets' : 'below'} ${floor}, removed ${s.removed}`);
  }
}

/**
 * @param {JobReport} report
 * @param {JobMode} mode
 * @param {{ evalSrc?: string, calibSrc?: string, calibCount?: number, files: { bytesBefore: number, bytesAfter: number, gzipBefore: number, gzipAfter: number, brotliBefore: number, brotliAfter: number, estimated: boolean, tolerance: { brotli: number } | null, served?: import('sparsekit-wasm/onnx').ServedSplit }, out: { model: string, data?: string, dir?: string }, model: OnnxModel }} ctx
 */
function print(report, mode, { evalSrc, calibSrc, calibCount, files, out, model }) {
  const r = report.prune;
  // the samples the pruning's statistics read: the first of the given ones when the run also trains on them
  const statsOn = (/** @type {unknown} */ n) => `${n} ${calibSrc === 'synthetic' ? 'generated' : `samples from ${calibSrc}`}${calibCount !== undefined && Number(n) < calibCount ? ` (the first ${n} of ${calibCount}; training reads all)` : ''}`;
  if (report.search) {
    const s = report.search;
    printSteps(s.steps, mode);
    console.log(`${s.sessions} onnxruntime sessions, ${s.runs} model runs; ${(s.ms.total / 1000).toFixed(1)} s (sensitivity ${(s.ms.sensitivity / 1000).toFixed(1)} s; onnxruntime ${(s.ms.model / 1000).toFixed(1)} s, calibrated apply ${(s.ms.apply / 1000).toFixed(1)} s, library ${(s.ms.library / 1000).toFixed(1)} s)`);
    const f = s.fidelity;
    console.log(s.bound ? `chosen plan: fidelity ${f.score.toFixed(4)}, its lower bound at confidence ${s.bound.confidence} ${s.bound.score.toFixed(4)} (worst output ${s.bound.worst || '-'}) >= ${mode.kind === 'search' ? mode.minFidelity : ''}`
      : `chosen plan: fidelity ${f.score.toFixed(4)} (worst output ${f.worst || '-'}) >= ${mode.kind === 'search' ? mode.minFidelity : ''}`);
  } else if (r && report.method !== 'magnitude' && !r.compensation && mode.kind !== 'recipe') {
    console.log(table(/** @type {CalibLayerReport[]} */ (r.layers).map((l) => [l.name, l.op, fmtShape(l.shapeBefore), l.method, fmtPct(l.sparsity), l.relError == null ? '-' : l.relError.toFixed(4), l.note ?? '']),
      ['layer', 'op', 'shape', 'method', 'zeros', 'rel. error', 'note']));
  } else if (r) {
    console.log(table(r.layers.map((l) => [l.name, l.op, fmtShape(l.shapeBefore), fmtShape(l.shapeAfter), fmtPct(l.sparsity), fmtBytes(l.bytesBefore), fmtBytes(l.bytesAfter), l.note ?? '']),
      ['layer', 'op', 'before', 'after', 'zeros', 'bytes before', 'after', 'note']));
  }
  for (const k of report.keptDense ?? []) console.log(`kept dense: ${k.name} (${k.why})`);
  const u = report.unreachableTokens;
  if (u) {
    for (const t of u.tables) console.log(`token rows zeroed: ${t.rows} of ${t.name} (${u.tokens} of the tokenizer's ${u.vocabSize} ids no text produces${t.rows > u.tokens ? ', and the rows past them' : ''})`);
    for (const l of u.left) console.log(`token rows kept: ${l.name} (${l.why})`);
    if (u.why && !u.tables.length) console.log(`token rows: none zeroed (${u.why})`);
  }
  if (r?.recipe) {
    /** @type {Record<string, number>} */
    const counts = {};
    for (const s of Object.values(/** @type {Record<string, string>} */ (r.recipe.settings))) counts[s] = (counts[s] ?? 0) + 1;
    console.log(`recipe (${r.recipe.mode}, ${report.method}): ${Object.entries(counts).map(([k, v]) => `${v} x ${k}`).join(', ')}`);
    // the mixed search (bits per layer): each layer's choice, as the plan in --report says it
    if (report.search && report.quantize) console.log(table(Object.entries(/** @type {Record<string, string>} */ (r.recipe.settings)).map(([k, v]) => [k, v]), ['layer', 'choice']));
  }
  const ly = report.layers;
  if (ly) {
    console.log(table(ly.blocks.map((b, i) => [String(i), b.input, b.output, b.influence.toFixed(4), ly.removed.includes(i) ? 'removed' : b.kept ? `kept: ${b.kept}` : '']),
      ['block', 'input', 'output', 'influence', '']));
    // the search over the count: each count judged on the held-out samples, in the order judged
    for (const s of ly.search?.steps ?? []) {
      const held = s.bound === undefined ? '' : `, lower bound ${s.bound.toFixed(4)} at ${ly.search?.confidence}`;
      console.log(`${s.count} blocks removed: fidelity ${s.fidelity.toFixed(4)} (${s.worst || '-'})${held} ${s.pass ? 'meets' : 'below'} ${ly.search?.minFidelity}`);
    }
    console.log(`layers: ${ly.removed.length} of ${ly.blocks.length} residual blocks removed (least influence on ${calibSrc === 'synthetic' ? 'generated samples' : `samples from ${calibSrc}`}); nodes ${ly.nodesBefore} -> ${ly.nodesAfter}`);
  }
  const px = report.prox;
  if (px) {
    const last = px.history[px.history.length - 1];
    if (px.features.length) console.log(`features: ${px.features.map((f) => f.name).join(', ')}`);
    console.log(`prox: ${px.steps} steps, ${px.history.length} epochs; blocks zero ${(100 * px.reached).toFixed(1)}% before the cut${last ? `, fidelity ${last.fidelity.toFixed(4)}` : ''}`);
    console.log(`cut to ${(100 * px.projected.sparsity).toFixed(1)}% of ${px.layers[0]?.block.join('x') ?? ''} blocks: fidelity ${px.projected.fidelity.toFixed(4)}`);
    if (px.recovered) console.log(`recovered: fidelity ${px.recovered.before.score.toFixed(4)} -> ${px.recovered.after.score.toFixed(4)}`);
  }
  const rc = report.recover;
  if (rc) {
    for (const s of rc.closedForm) console.log(`${s.step}: ${s.layers} layers, fidelity ${s.before.toFixed(4)} -> ${s.after.toFixed(4)} ${s.applied ? 'kept' : 'rolled back'}${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`);
    const d = rc.distill;
    if (d) console.log(`distill: ${d.epochs} epochs, ${d.steps} steps (${d.stopped === 'time' ? 'time budget' : 'epochs'}), best fidelity ${d.bestScore.toFixed(4)} at epoch ${d.bestEpoch}${d.features?.length ? `; features ${d.features.map((f) => f.name).join(', ')}` : ''}`);
    console.log(`recover: fidelity ${rc.before.score.toFixed(4)} -> ${rc.after.score.toFixed(4)} (worst output ${rc.after.worst})`);
  }
  const q = report.quantize;
  if (q) {
    const pass = { joint: 'joint with the pruning', 'before-recovery': 'before recovery', after: 'after the pruning' };
    const how = q.gptq ? ` (GPTQ on ${q.gptq.layers} layers, ${pass[q.gptq.pass]}; the rest rounded to nearest)` : ' (rounded to nearest)';
    const held = q.heldThroughRecovery ? '; recovery trained on the codes\' grids, so the file is the recovered model' : '';
    console.log(`quantized${q.source === 'input' ? ' again in the input\'s scheme' : ''}: ${formCounts(q.layers)}${how}${held}`);
  }
  const fid = report.fidelity;
  if (fid) {
    console.log(`\nfidelity to the original on ${fid.samples} held-out ${evalSrc === 'synthetic' ? 'generated samples' : `samples from ${evalSrc}`} (1 = same decisions; see --report):`);
    console.log(fidelityTable(fid));
  }
  const p = r?.params;
  const est = files.estimated ? '≈' : '';
  const sizes = `file ${fmtBytes(files.bytesBefore)} -> ${fmtBytes(files.bytesAfter)} (gzip ${est}${fmtBytes(files.gzipBefore)} -> ${est}${fmtBytes(files.gzipAfter)}, brotli ${est}${fmtBytes(files.brotliBefore)} -> ${est}${fmtBytes(files.brotliAfter)}${files.estimated && files.tolerance ? `, estimated within ${(100 * files.tolerance.brotli).toFixed(0)}%` : ''})`;
  console.log(p ? `\n${r.layers.length} layers; parameters ${p.before} -> ${p.after} (${fmtPct(1 - p.after / p.before)} fewer); zeros in pruned weights ${fmtPct(r.sparsity)}; ${sizes}` : `\n${sizes}`);
  const sv = files.served;
  if (sv) {
    const part = (/** @type {number} */ b) => `${est}${fmtBytes(b)} (${fmtPct(files.brotliAfter ? b / files.brotliAfter : 0)})`;
    console.log(`served bytes (brotli): embedding tables ${part(sv.parts.embeddings)}, other weights ${part(sv.parts.weights)}, the rest ${part(sv.parts.rest)}; largest: ${sv.tensors.slice(0, 3).map((t) => `${t.name} ${est}${fmtBytes(t.served)}`).join(', ')} (per tensor in --report)`);
  }
  if (fid) console.log(`fidelity ${fid.score.toFixed(4)} (worst output: ${fid.worst}, ${fid.outputs.find((o) => o.name === fid.worst)?.kind}); all-outputs cosine ${fid.cosine.toFixed(4)}${fid.decisions === undefined ? '' : `; the score rests on ${fid.decisions} decisions`}`);
  else console.log('fidelity not measured: --eval DIR (held-out samples) or --eval synthetic measures it');
  if (r?.compensation) {
    /** @type {Record<string, number>} */
    const used = {};
    for (const c of r.compensation) used[c.method] = (used[c.method] ?? 0) + 1;
    const scored = { activations: 'activation-aware norms', fluctuation: "FLAP's fluctuation (what the consumers lose)", weights: 'weight norms', influence: "heads by their measured influence on the outputs, over the model (the rest by FLAP's fluctuation)" }[String(r.options.score)] ?? String(r.options.score);
    console.log(`calibration: ${statsOn(r.options.calibration)}; channels scored with ${scored}; ${r.compensation.length} consumers of removed channels compensated (${Object.entries(used).map(([k, v]) => `${k} ${v}`).join(', ')}; see --report)`);
    if (r.heads?.length) console.log(`attention heads kept per layer (measured influence): ${r.heads.map((h) => `${h.kept}/${h.channels}`).join(', ')}`);
  } else if (r && report.method !== 'magnitude' && r.calibration !== undefined) {
    /** @type {Record<string, number>} */
    const used = {};
    for (const l of /** @type {CalibLayerReport[]} */ (r.layers)) used[l.method] = (used[l.method] ?? 0) + 1;
    const runsPerSample = r.sweep ? r.sweep.nodeRuns / Math.max(1, r.sweep.graphNodes * (r.calibration ?? 0)) : 0;
    const s = r.sweep;
    const stored = s?.stored ? `, ${s.stored} through the scratch file (${fmtBytes(s.storedBytes)})` : '';
    const over = s && (s.recomputed || s.stored) ? `; over the cut budget, ${s.recomputed} values recomputed instead of cached${stored}, the largest cut in memory ${fmtBytes(s.peakCacheBytes)}` : '';
    const how = r.sequential ? `sequential, in one sweep of ${r.passes} graph segments (${runsPerSample.toFixed(2)} runs of the model per sample${over})` : `one pass (${r.passes} capture passes)`;
    console.log(`calibration: ${statsOn(r.calibration)}, ${how}; methods used: ${Object.entries(used).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    if (r.time) console.log(`time: ${timeLine(r.time)}`);
  }
  const sub = subgraphNote(model);
  if (sub) console.log(sub);
  if (r?.folded?.biases) console.log(`removed channels' constant outputs folded into ${r.folded.biases} consumer biases (${r.folded.created} created)${r.folded.unknown ? `; ${r.folded.unknown} channel inputs read zero (constant not known, e.g. after a padded depthwise conv)` : ''}`);
  if (r?.groups?.kept?.length) console.log(`${r.groups.kept.length} channel groups kept whole (see --report or inspect for why)`);
  // query:F on a model without grouped-query attention: every head is its own KV group, so it acted as F.
  if (r?.queryGroups === 0) console.log('no grouped-query attention in this model (every head has its own K/V): --channels query:F removed whole heads, as --channels F does');
  const dropin = report.output;
  if (dropin && 'dir' in out) {
    console.log(`wrote ${out.dir}${path.sep}: a transformers.js folder (${dropin.file}${dropin.data ? ` + ${dropin.data}` : ''}, dtype ${dropin.dtype}; config.json names it, so pipeline(task, folder) loads it, as does { dtype: '${dropin.dtype}' })`);
  } else console.log(`wrote ${out.model}${out.data ? ` and ${out.data}` : ''}`);
}

/**
 * Where a calibrated prune spent its time, largest phases first, those of 50 ms or more (the report's `time`, ms).
 * @param {import('sparsekit-wasm/onnx').CalibTime} t
 */
function timeLine(t) {
  const phases = { 'forward in onnxruntime': t.model, statistics: t.statistics, solve: t.solve, capture: t.capture, cut: t.cut, write: t.write, report: t.report };
  const parts = Object.entries(phases).filter(([, ms]) => ms >= 50).sort((a, b) => b[1] - a[1]).map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`);
  return `${parts.length ? `${parts.join(', ')} ` : ''}(calibrated prune ${((t.model + t.library) / 1000).toFixed(1)} s)`;
}

/**
 * Weights inside If / Loop / Scan bodies are neither listed nor pruned: say so when there are any.
 * @param {OnnxModel} model
 */
export function subgraphNote(model) {
  const n = model.graph.node.filter((/** @type {{ attribute: { g?: object | null, graphs?: object[] | null }[] }} */ x) => x.attribute.some((a) => a.g || (a.graphs && a.graphs.length))).length;
  return n ? `note: ${n} node(s) with subgraphs (If / Loop / Scan); weights inside subgraphs are not listed or pruned` : '';
}
