#!/usr/bin/env node
// The sparsekit-wasm command line: `prune` and `inspect` ONNX models. Work is reported on stderr
// (a bar on a terminal, plain lines otherwise); results go to stdout and, with --report, to JSON.
// Exit codes: 0 done, 1 the model or the run failed, 2 bad usage.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadOnnx, saveOnnx, OnnxError, calibratePrune, makeInputSet, readCalibrationDir, removeChannelsCalibrated, CALIB_DEFAULTS } from '../src/onnx/index.js';
import { pruneSparsity, pruneNm, parseNm, checkSparsity } from '../src/onnx/prune.js';
import { removeChannels, findChannelGroups } from '../src/onnx/channels.js';
import { EvalUsageError, parseMetrics, checkDisjoint, loadEvalSamples, measureFidelity, transportSize, fidelityRows } from './fidelity-cli.js';

/** @typedef {import('../src/onnx/index.js').OnnxModel} OnnxModel */
/** @typedef {import('../src/onnx/index.js').OnnxWeight} OnnxWeight */
/** @typedef {import('../src/onnx/index.js').WeightView} WeightView */
/** @typedef {import('../src/onnx/index.js').OrtLike} OrtLike */
/** @typedef {import('../src/onnx/index.js').Scope} Scope */
/** @typedef {import('../src/onnx/index.js').PruneReport} PruneReport */
/** @typedef {import('../src/onnx/index.js').LayerReport} LayerReport */
/** @typedef {import('../src/onnx/index.js').CalibLayerReport} CalibLayerReport */
/** @typedef {import('../src/onnx/index.js').CalibProgress} CalibProgress */
/** @typedef {import('../src/onnx/index.js').ConsumerReport} ConsumerReport */
/** @typedef {import('../src/onnx/index.js').OutputFidelity} OutputFidelity */
/** @typedef {import('../src/onnx/channels.js').ChannelReport} ChannelReport */
/** @typedef {import('./commands/cli-util.js').Thrown} Thrown */
/** @typedef {import('./commands/cli-util.js').ArgOptions} ArgOptions */
/** A weight of model.prunable(): those carry their 2-D view. @typedef {OnnxWeight & { view: WeightView }} PrunableWeight */
/**
 * The fields of a decoded onnx.AttributeProto that subgraphNote reads (a body graph, or several).
 * @typedef {{ g?: object | null, graphs?: object[] | null }} AttributeFields
 */
/**
 * The calibration settings of `prune --method wanda|sparsegpt`.
 * @typedef {{ src: string, count: number, damp: number, sequential: boolean }} Calib
 */
/**
 * The report of whichever pruning ran, as prune() prints it: every path gives a PruneReport; the
 * calibrated ones (calibratePrune) add each layer's method and error and their calibration figures,
 * --channels (removeChannels, removeChannelsCalibrated) the groups and the folded constants, and
 * calibrated --channels the compensated consumers. A field its path does not give reads undefined.
 * @typedef {Omit<PruneReport, 'layers'> & {
 *   layers: (LayerReport & Partial<Pick<CalibLayerReport, 'method' | 'relError'>>)[],
 *   calibration?: number, sequential?: boolean, passes?: number,
 *   compensation?: ConsumerReport[], groups?: ChannelReport['groups'], folded?: ChannelReport['folded'],
 * }} AnyPruneReport
 */

const PROG = 'sparsekit-wasm';

const HELP = {
  main: `Usage: ${PROG} <command> [options]

Commands:
  prune IN.onnx -o OUT.onnx [options]   prune the weights of an ONNX model
  inspect IN.onnx                        list prunable weights, shapes, ops and channel groups
  sensitivity IN.onnx --eval DIR …       fidelity of each layer / channel group pruned alone, per level
  recover PRUNED.onnx --teacher IN.onnx -o OUT.onnx …   win back what pruning broke (distillation)

Run '${PROG} <command> --help' for a command's options.`,
  prune: `Usage: ${PROG} prune IN.onnx -o OUT.onnx (--sparsity S | --nm N:M | --channels F) [options]

  -o, --output OUT.onnx   where to write the pruned model (external data goes to OUT.onnx.data);
                          written to a temporary file and renamed: a failed run leaves no OUT
  --sparsity S            zero the fraction S in [0, 1] of the smallest-magnitude blocks
  --nm N:M                keep N of every M weights along the reduction axis (e.g. 2:4); layers
                          whose reduction axis is not a multiple of M stay dense (see the report)
  --channels F            remove the fraction F in [0, 1) of output channels, along dependency groups
                          over the graph: the file gets smaller and faster, not just sparser
  --round-to N            --channels: keep a multiple of N channels per group (default 8; 1 = exact):
                          runtimes block channels by 8/16 for SIMD, other counts can run slower
  --block RxC             block shape on the (outputs x inputs) view, for --sparsity (default 1x1)
  --scope row|layer|global
                          where blocks / channels compete (default layer; row: --sparsity only)
  --method magnitude|wanda|sparsegpt
                          scoring (default magnitude). wanda (|W|·‖x‖ per output row) and sparsegpt
                          (pruning with the weights compensated) run calibration inputs through the
                          model layer by layer with onnxruntime-node (npm i onnxruntime-node);
                          with --sparsity or --nm. Layers they cannot serve fall back (dense /
                          wanda / magnitude), said per layer in the table and the report
  --calib DIR|synthetic   calibration inputs (default synthetic): 'synthetic' generates them from the
                          graph (document pages / text lines for image inputs, seeded values for the
                          rest); DIR holds <sample>.npy or <sample>.png files (single-input models)
                          or one folder per sample with <input>.npy per input (docs/onnx.md)
  --calib-count N         samples to generate, or the first N of DIR (default ${CALIB_DEFAULTS.calibrationCount})
                          with --channels: channels scored by weight x input RMS, and each consumer
                          of removed channels compensated before the removal (wanda: the measured
                          mean of what it loses goes into its bias; sparsegpt: its kept inputs are
                          also reconstructed)
  --damp P                sparsegpt damping as a fraction of mean(diag H) (default ${CALIB_DEFAULTS.percDamp})
  --one-pass              capture every layer's input from the unpruned model in one pass
                          (faster; by default layer k is calibrated after layers < k are pruned)
  --eval DIR|synthetic    measure the pruned model's fidelity to the original on held-out samples
                          (the --calib formats; must share no file with --calib): every output
                          compared as its kind is used (class decisions, boxes, regions, decoded
                          strings, values), no labels needed; the worst output's score is the
                          model's. Runs onnxruntime-node. Default with --method wanda|sparsegpt and
                          synthetic calibration: 8 generated held-out samples
  --metric OUTPUT=KIND    how to read an output (repeatable): classification, detection, dense-map,
                          sequence or generic (default: detected from its shape and values)
  --report R.json         write the report as JSON
  -q, --quiet             no progress lines
  -h, --help              this help

Per-layer settings and the search (docs/onnx.md "Recipes", "Compression to a fidelity floor"):
  --recipe R.json         apply a recipe (default, per-layer settings by name / glob / /regex/, ignore list)
  --min-fidelity F --eval DIR (--sparsity auto | --nm N:M | --channels auto)
                          choose per-layer settings from a sensitivity table that keep the fidelity on
                          the held-out samples >= F: [--levels L1,L2,…] [--objective params|flops|latency]
                          [--eval-count N] [--table-samples N] [--max-steps N] [--save-recipe R.json]
                          (--table-samples N: the sensitivity table on the first N eval samples only,
                          every candidate plan still verified on all of them)
                          [--confidence P]: hold the floor to the lower bound of each output's
                          fidelity at confidence P (e.g. 0.95), so that it holds on samples not seen
  --prox                  reach --sparsity of --block blocks by sparse training (proximal steps
                          during distillation, then the exact cut and a recovery); see
                          '${PROG} prune --prox --help'
  --recover [--epochs N | --minutes M] [--lr LR] [--batch B] [--checkpoint CKPT]
                          then recover the pruned model towards IN (see '${PROG} recover --help'),
                          trained on --calib (default synthetic), judged on --eval`,
  inspect: `Usage: ${PROG} inspect IN.onnx [--json]

  Lists the prunable weights (consumer op, stored shape, the 2-D view the pruning uses, data type,
  storage) and the channel groups that --channels would prune, with the groups left whole and why.
  --json     print the same as JSON
  -h, --help this help`,
};

class UsageError extends Error {}
/** A run that cannot proceed (exit 1, one line). */
class RunError extends Error {}

/**
 * @param {unknown} msg
 * @param {number} [code]
 */
function fail(msg, code = 1) {
  process.stderr.write(`${PROG}: ${String(msg).replace(/\s*\n\s*/g, ' ')}\n`);
  process.exit(code);
}

/**
 * Progress on stderr: a redrawn bar on a terminal, one line per step (at most every 5%) otherwise.
 * @param {boolean | undefined} quiet
 * @returns {(stage: string) => (done: number, total: number, label?: string) => void}
 */
function progress(quiet) {
  const tty = process.stderr.isTTY;
  let lastPct = -1;
  let lastStage = '';
  return (stage) => (done, total, label) => {
    if (quiet) return;
    const pct = total ? Math.floor((100 * done) / total) : 100;
    if (tty) {
      const w = 24;
      const fillN = Math.round((w * pct) / 100);
      const line = `${stage} [${'#'.repeat(fillN)}${'.'.repeat(w - fillN)}] ${done}/${total} ${label ?? ''}`;
      process.stderr.write(`\r${line.slice(0, (process.stderr.columns || 100) - 1).padEnd((process.stderr.columns || 100) - 1)}`);
      if (done >= total) process.stderr.write('\n');
    } else if (stage !== lastStage || pct >= lastPct + 5 || done >= total) {
      process.stderr.write(`${stage}: ${done}/${total}${label ? ` ${label}` : ''}\n`);
      lastPct = pct;
      lastStage = stage;
    }
  };
}

/** @param {readonly (number | string)[]} d */
const fmtShape = (d) => `[${d.join(',')}]`;
/** @param {number} x */
const fmtPct = (x) => `${(100 * x).toFixed(1)}%`;
/** @param {number} b */
function fmtBytes(b) {
  if (b < 1024) return `${b} B`;
  if (b < 1024 ** 2) return `${(b / 1024).toFixed(1)} KiB`;
  if (b < 1024 ** 3) return `${(b / 1024 ** 2).toFixed(2)} MiB`;
  return `${(b / 1024 ** 3).toFixed(2)} GiB`;
}

/**
 * @param {unknown[][]} rows
 * @param {string[]} header
 */
function table(rows, header) {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => String(r[i]).length)));
  return all.map((r) => r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')).join('\n');
}

/**
 * parseArgs in strict mode with positionals; the values are typed after `options`.
 * @template {ArgOptions} O
 * @param {string[]} args
 * @param {O} options
 */
function parse(args, options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    const first = String(/** @type {Thrown} */ (e).message).split('\n')[0].replace(/\. To specify a positional.*$/, '');
    throw new UsageError(/ambiguous/.test(first) ? `${first} (a value starting with '-' is written --option=VALUE)` : first);
  }
}

/**
 * @param {string[]} positionals
 * @param {string} cmd
 */
function fileArg(positionals, cmd) {
  if (positionals.length !== 1) throw new UsageError(`${cmd} takes exactly one input model (got ${positionals.length}); see '${PROG} ${cmd} --help'`);
  return positionals[0];
}

/**
 * @param {string} name
 * @param {string | undefined} s
 */
function num(name, s) {
  const x = Number(s);
  if (s === undefined || s === '' || !Number.isFinite(x)) throw new UsageError(`--${name} needs a number (got "${s}")`);
  return x;
}

/** @param {string[]} args */
async function inspect(args) {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return void console.log(HELP.inspect);
  const file = fileArg(positionals, 'inspect');
  const model = await loadOnnx(file);
  const ws = /** @type {PrunableWeight[]} */ (model.prunable());
  const groups = findChannelGroups(model);
  const info = {
    file, bytes: model.byteLength, irVersion: model.irVersion, opsets: model.opsets,
    nodes: model.graph.node.length, external: model.externalLocations,
    inputs: model.inputs, outputs: model.outputs,
    params: model.weights.reduce((a, w) => a + w.numel, 0),
    weights: ws.map((w) => ({
      name: w.name, op: w.op, node: w.node, shape: w.dims, view: [w.view.rows, w.view.cols],
      transposed: w.view.transposed, group: w.group, dtype: w.dtypeName, storage: w.storage, source: w.source,
    })),
    channelGroups: groups.groups.map((g) => ({ id: g.id, channels: g.channels, members: g.members.map((m) => `${m.tensor}:${m.axis}`), prunable: g.prunable, reason: g.reason })),
  };
  if (values.json) return void console.log(JSON.stringify(info, null, 2));
  console.log(`${file}: ONNX IR ${info.irVersion}, opsets ${info.opsets.join(' ')}, ${info.nodes} nodes, ${info.params} float parameters, ${fmtBytes(info.bytes)}${info.external.length ? `, external data: ${info.external.join(', ')}` : ''}`);
  console.log(`inputs: ${info.inputs.map((i) => `${i.name}${fmtShape(i.dims)}`).join(' ')}  outputs: ${info.outputs.map((o) => `${o.name}${fmtShape(o.dims)}`).join(' ')}`);
  console.log(`\n${ws.length} prunable weights:`);
  const sub = subgraphNote(model);
  if (sub) console.log(sub);
  console.log(table(ws.map((w) => [w.name, w.op + (w.group > 1 ? ` g${w.group}` : ''), fmtShape(w.dims), `${w.view.rows}x${w.view.cols}${w.view.transposed ? ' (T)' : ''}`, w.dtypeName, w.storage]),
    ['weight', 'op', 'shape', 'view (out x in)', 'dtype', 'storage']));
  const pr = info.channelGroups.filter((g) => g.prunable);
  const kept = info.channelGroups.filter((g) => !g.prunable);
  console.log(`\n${info.channelGroups.length} channel groups: ${pr.length} prunable (${pr.reduce((a, g) => a + g.channels, 0)} channels), ${kept.length} kept whole`);
  for (const g of info.channelGroups) {
    console.log(`  #${g.id} ${g.channels} ch ${g.prunable ? 'prunable' : `kept whole: ${g.reason}`}: ${g.members.slice(0, 6).join(' ')}${g.members.length > 6 ? ` (+${g.members.length - 6})` : ''}`);
  }
}

/** @param {string[]} args */
async function prune(args) {
  const help = args.some((a) => a === '-h' || a === '--help');
  const prox = await import('./commands/prox-prune.js');
  if (prox.handles(args)) return help ? console.log(prox.HELP) : prox.main(args);
  const plan = await import('./commands/plan-prune.js');
  if (plan.handles(args) && !args.some((a) => a === '-h' || a === '--help')) return plan.main(args);
  const { values, positionals } = parse(args, {
    output: { type: 'string', short: 'o' }, sparsity: { type: 'string' }, nm: { type: 'string' },
    channels: { type: 'string' }, block: { type: 'string' }, 'round-to': { type: 'string' }, scope: { type: 'string' },
    method: { type: 'string' }, calib: { type: 'string' }, 'calib-count': { type: 'string' }, damp: { type: 'string' },
    'one-pass': { type: 'boolean' }, report: { type: 'string' }, eval: { type: 'string' }, metric: { type: 'string', multiple: true },
    quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return void console.log(HELP.prune);
  const file = fileArg(positionals, 'prune');
  if (!values.output) throw new UsageError(`prune needs -o OUT.onnx; see '${PROG} prune --help'`);
  const modes = /** @type {const} */ (['sparsity', 'nm', 'channels']).filter((k) => values[k] !== undefined);
  if (modes.length !== 1) throw new UsageError('give exactly one of --sparsity S, --nm N:M, --channels F');
  const scope = /** @type {Scope} */ (values.scope ?? 'layer'); // checked on the next line
  if (!['row', 'layer', 'global'].includes(scope)) throw new UsageError(`--scope must be row, layer or global (got "${scope}")`);
  const method = values.method ?? 'magnitude';
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new UsageError(`--method must be magnitude, wanda or sparsegpt (got "${method}")`);
  if (method === 'magnitude' && values.calib !== undefined) throw new UsageError('--calib is only used by --method wanda|sparsegpt');
  /** @type {[number, number] | undefined} */
  let block;
  if (values.block !== undefined) {
    const m = /^(\d+)x(\d+)$/.exec(values.block);
    if (!m || +m[1] < 1 || +m[2] < 1) throw new UsageError(`--block must be RxC with positive integers, e.g. 4x4 (got "${values.block}")`);
    if (modes[0] !== 'sparsity') throw new UsageError('--block applies to --sparsity only');
    block = [+m[1], +m[2]];
  }
  if (values['round-to'] !== undefined && modes[0] !== 'channels') throw new UsageError('--round-to applies to --channels only');
  let sparsity, nm, channels;
  try {
    if (modes[0] === 'sparsity') sparsity = checkSparsity(num('sparsity', values.sparsity), '--sparsity');
    if (modes[0] === 'nm') nm = parseNm(/** @type {string} */ (values.nm)); // the mode given (filtered above)
    if (modes[0] === 'channels') {
      channels = checkSparsity(num('channels', values.channels), '--channels');
      if (channels >= 1) throw new UsageError('--channels must be below 1: removing every channel leaves no model');
      if (scope === 'row') throw new UsageError('--scope row does not apply to --channels (use layer or global)');
      if (values['round-to'] !== undefined && !(Number.isInteger(Number(values['round-to'])) && Number(values['round-to']) >= 1)) {
        throw new UsageError(`--round-to needs a positive integer (got "${values['round-to']}")`);
      }
    }
  } catch (e) {
    if (e instanceof OnnxError) throw new UsageError(e.message);
    throw e;
  }
  const calibrated = method !== 'magnitude';
  for (const k of /** @type {const} */ (['calib-count', 'damp', 'one-pass'])) {
    if (values[k] !== undefined && !calibrated) throw new UsageError(`--${k} is only used by --method wanda|sparsegpt`);
  }
  /** @type {Calib | undefined} */
  let calib;
  if (calibrated) {
    if (block) throw new UsageError(`--block applies to --method magnitude (wanda prunes per output row, sparsegpt per block of columns)`);
    if (values.scope !== undefined && channels === undefined) throw new UsageError(`--scope applies to --method magnitude or --channels (wanda prunes per output row, sparsegpt per block of columns)`);
    if (values['one-pass'] && channels !== undefined) throw new UsageError('--one-pass applies to --sparsity / --nm (channel compensation is sequential)');
    const count = values['calib-count'] === undefined ? CALIB_DEFAULTS.calibrationCount : Number(values['calib-count']);
    if (!Number.isInteger(count) || count < 1) throw new UsageError(`--calib-count needs a positive integer (got "${values['calib-count']}")`);
    const damp = values.damp === undefined ? CALIB_DEFAULTS.percDamp : num('damp', values.damp);
    if (damp < 0) throw new UsageError(`--damp must be >= 0 (got ${damp})`);
    const src = values.calib ?? 'synthetic';
    if (src === '') throw new UsageError('--calib needs a directory or "synthetic"');
    calib = { src, count, damp, sequential: !values['one-pass'] };
  }
  if (values.eval === '') throw new UsageError('--eval needs a directory or "synthetic"');
  const evalSrc = values.eval ?? (calib?.src === 'synthetic' ? 'synthetic' : undefined);
  if (values.metric && !evalSrc) throw new UsageError('--metric applies when fidelity is measured: give --eval DIR|synthetic');
  if (calib && calib.src !== 'synthetic' && evalSrc && evalSrc !== 'synthetic') checkDisjoint(calib.src, evalSrc);
  const out = path.resolve(values.output);
  if (path.resolve(file) === out) throw new UsageError('the output must not overwrite the input model');
  if (values.report !== undefined && path.resolve(values.report) === out) throw new UsageError('--report and -o name the same file');

  const onProgress = progress(values.quiet);
  const model = await loadOnnx(file);
  const inputLocations = [...model.externalLocations];
  const kinds = parseMetrics(values.metric, model);
  const evalSamples = evalSrc ? await loadEvalSamples(model, evalSrc) : undefined;
  const evalOrt = evalSrc ? await loadOrt('--eval') : undefined;
  const t0 = Date.now();
  /** @type {AnyPruneReport} */
  let report;
  const roundTo = values['round-to'] === undefined ? undefined : Number(values['round-to']);
  // calib is set for --method wanda|sparsegpt only; --scope row is refused with --channels, and any
  // --scope with calibrated --sparsity / --nm (which leaves the default 'layer')
  if (calib) report = await calibrated_(model, { method: /** @type {'wanda' | 'sparsegpt'} */ (method), sparsity, nm, channels, scope: /** @type {'layer' | 'global'} */ (scope), roundTo, calib, quiet: values.quiet, onProgress });
  else if (sparsity !== undefined) report = pruneSparsity(model, { sparsity, block, scope, onProgress: onProgress('prune') });
  else if (nm) report = pruneNm(model, { nm, onProgress: onProgress('prune') });
  else {
    // the remaining mode: --channels (a number, and --scope row refused above)
    report = removeChannels(model, { fraction: /** @type {number} */ (channels), scope: /** @type {'layer' | 'global'} */ (scope), roundTo, onProgress: onProgress('channels') });
  }
  const saved = await saveOnnx(model, out);
  const inFiles = [path.resolve(file), ...inputLocations.map((l) => path.join(path.dirname(path.resolve(file)), l)).filter((p) => fs.existsSync(p))];
  const outFiles = [saved.model, ...(saved.data ? [saved.data] : [])];
  /** @type {({ source: string | undefined } & Awaited<ReturnType<typeof measureFidelity>>) | undefined} */
  let fidelity;
  /** @type {{ before: Awaited<ReturnType<typeof transportSize>>, after: Awaited<ReturnType<typeof transportSize>> } | undefined} */
  let transport;
  try {
    // both models run from their files: onnxruntime reads any external data next to them (evalOrt
    // is loaded whenever evalSamples are)
    if (evalSamples) fidelity = { source: evalSrc, ...(await measureFidelity(/** @type {OrtLike} */ (evalOrt), path.resolve(file), saved.model, evalSamples, kinds)) };
    transport = { before: await transportSize(inFiles), after: await transportSize(outFiles) };
  } catch (e) {
    for (const f of outFiles) fs.rmSync(f, { force: true }); // a failed run leaves no output
    throw e;
  }
  const full = {
    input: path.resolve(file), output: saved.model, externalData: saved.data ?? null, method,
    ...report,
    files: {
      bytesBefore: transport.before.raw, bytesAfter: transport.after.raw,
      gzipBefore: transport.before.gzip, gzipAfter: transport.after.gzip,
      brotliBefore: transport.before.brotli, brotliAfter: transport.after.brotli, brotliQuality: transport.after.brotliQuality,
    },
    ...(fidelity ? { fidelity } : {}),
    seconds: (Date.now() - t0) / 1000,
  };
  if (values.report !== undefined) {
    const tmp = `${values.report}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, JSON.stringify(full, null, 2) + '\n');
    fs.renameSync(tmp, values.report);
  }
  if (calib && channels === undefined) {
    console.log(table(/** @type {CalibLayerReport[]} */ (report.layers).map((l) => [l.name, l.op, fmtShape(l.shapeBefore), l.method, fmtPct(l.sparsity), l.relError == null ? '-' : l.relError.toFixed(4), l.note ?? '']),
      ['layer', 'op', 'shape', 'method', 'zeros', 'rel. error', 'note']));
  } else {
    console.log(table(report.layers.map((l) => [l.name, l.op, fmtShape(l.shapeBefore), fmtShape(l.shapeAfter), fmtPct(l.sparsity), fmtBytes(l.bytesBefore), fmtBytes(l.bytesAfter), l.note ?? '']),
      ['layer', 'op', 'before', 'after', 'zeros', 'bytes before', 'after', 'note']));
  }
  if (fidelity) {
    console.log(`\nfidelity to the original on ${fidelity.samples} held-out ${evalSrc === 'synthetic' ? 'generated samples' : `samples from ${evalSrc}`} (1 = same decisions; see --report):`);
    console.log(table(fidelityRows(fidelity), ['output', 'kind', 'score', 'measured']));
  }
  const p = report.params, fl = full.files;
  console.log(`\n${report.layers.length} layers; parameters ${p.before} -> ${p.after} (${fmtPct(1 - p.after / p.before)} fewer); zeros in pruned weights ${fmtPct(report.sparsity)}; file ${fmtBytes(fl.bytesBefore)} -> ${fmtBytes(fl.bytesAfter)} (gzip ${fmtBytes(fl.gzipBefore)} -> ${fmtBytes(fl.gzipAfter)}, brotli ${fmtBytes(fl.brotliBefore)} -> ${fmtBytes(fl.brotliAfter)})`);
  // fidelity.worst names one of fidelity.outputs
  if (fidelity) console.log(`fidelity ${fidelity.score.toFixed(4)} (worst output: ${fidelity.worst}, ${/** @type {OutputFidelity} */ (fidelity.outputs.find((o) => o.name === fidelity.worst)).kind}); all-outputs cosine ${fidelity.cosine.toFixed(4)}`);
  else console.log('fidelity not measured: --eval DIR (held-out samples) or --eval synthetic measures it');
  if (calib && report.compensation) {
    /** @type {Record<string, number>} */
    const used = {};
    for (const c of report.compensation) used[c.method] = (used[c.method] ?? 0) + 1;
    console.log(`calibration: ${report.options.calibration} ${calib.src === 'synthetic' ? 'generated' : `samples from ${calib.src}`}; channels scored with activation-aware norms; ${report.compensation.length} consumers of removed channels compensated (${Object.entries(used).map(([k, v]) => `${k} ${v}`).join(', ')}; see --report)`);
  } else if (calib) {
    /** @type {Record<string, number>} */
    const used = {};
    // calibratePrune's layers: calibrated without --channels, each with the method it got
    for (const l of /** @type {CalibLayerReport[]} */ (report.layers)) used[l.method] = (used[l.method] ?? 0) + 1;
    console.log(`calibration: ${report.calibration} ${calib.src === 'synthetic' ? 'generated' : `samples from ${calib.src}`}, ${report.sequential ? 'sequential' : 'one pass'} (${report.passes} capture passes over the samples); methods used: ${Object.entries(used).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  const sub = subgraphNote(model);
  if (sub) console.log(sub);
  if (report.folded?.biases) console.log(`removed channels' constant outputs folded into ${report.folded.biases} consumer biases (${report.folded.created} created)${report.folded.unknown ? `; ${report.folded.unknown} channel inputs read zero (constant not known, e.g. after a padded depthwise conv)` : ''}`);
  if (report.groups?.kept?.length) console.log(`${report.groups.kept.length} channel groups kept whole (see --report or inspect for why)`);
  console.log(`wrote ${saved.model}${saved.data ? ` and ${saved.data}` : ''}`);
}

/**
 * onnxruntime-node, loaded only for calibration: an optional peer dependency of the package. Typed
 * as the package's OrtLike, the part the pipeline calls (onnxruntime-node's overloads of create()
 * and run() include those calls but do not match OrtLike's single signatures).
 * @returns {Promise<OrtLike>}
 */
async function loadOrt(what = '--method wanda|sparsegpt') {
  try {
    const m = await import('onnxruntime-node');
    return /** @type {OrtLike} */ (/** @type {unknown} */ (m.default ?? m));
  } catch (caught) {
    const e = /** @type {Thrown | null | undefined} */ (caught);
    if (e && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND')) {
      throw new RunError(`${what} runs the model with onnxruntime-node, which is not installed: npm i onnxruntime-node`);
    }
    throw new RunError(`onnxruntime-node failed to load: ${e && e.message ? e.message : e}`);
  }
}

/**
 * Calibration-aware pruning (Wanda / SparseGPT) with progress lines per layer on stderr.
 * @param {OnnxModel} model
 * @param {{ method: 'wanda' | 'sparsegpt', sparsity: number | undefined, nm: [number, number] | undefined,
 *   channels: number | undefined, scope: 'layer' | 'global', roundTo: number | undefined, calib: Calib,
 *   quiet: boolean | undefined, onProgress: ReturnType<typeof progress> }} opts
 * @returns {Promise<AnyPruneReport>}
 */
async function calibrated_(model, { method, sparsity, nm, channels, scope, roundTo, calib, quiet, onProgress }) {
  const ort = await loadOrt();
  const calibration = calib.src === 'synthetic'
    ? makeInputSet(model, { count: calib.count })
    : await readCalibrationDir(calib.src, model, { limit: calib.count });
  const bar = progress(quiet);
  const tty = process.stderr.isTTY;
  let last = '';
  /** @type {(p: CalibProgress) => void} */
  const calibProgress = ({ done, total, phase, layer }) => {
    if (quiet) return;
    if (phase === 'done') { if (tty && last) process.stderr.write('\n'); last = ''; return; }
    const key = `${phase} ${layer}`;
    if (tty) bar(phase)(Math.floor(done), total, layer);
    else if (key !== last) process.stderr.write(`${phase}: ${Math.min(total, Math.floor(done) + 1)}/${total} ${layer}${phase === 'capture' ? ` (${calibration.length} samples)` : ''}\n`);
    last = key;
  };
  const sessionOptions = { logSeverityLevel: 3 };
  if (channels !== undefined) {
    return removeChannelsCalibrated(model, {
      ort, sessionOptions, calibration, method, fraction: channels, scope, roundTo, percDamp: calib.damp,
      onProgress: onProgress('channels'), onCalibProgress: calibProgress,
    });
  }
  return calibratePrune(model, {
    ort, sessionOptions, calibration, criterion: method, ...(nm ? { nm } : { sparsity }),
    sequential: calib.sequential, percDamp: calib.damp, onProgress: calibProgress,
  });
}

/**
 * Weights inside If / Loop / Scan bodies are neither listed nor pruned: say so when there are any.
 * @param {OnnxModel} model
 */
function subgraphNote(model) {
  const n = model.graph.node.filter((/** @type {{ attribute: AttributeFields[] }} */ x) => x.attribute.some((a) => a.g || (a.graphs && a.graphs.length))).length;
  return n ? `note: ${n} node(s) with subgraphs (If / Loop / Scan); weights inside subgraphs are not listed or pruned` : '';
}

/** @param {string[]} argv */
async function main(argv) {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '-h' || cmd === '--help' || cmd === 'help') return void console.log(HELP.main);
  if (cmd === 'prune') return prune(rest);
  if (cmd === 'inspect') return inspect(rest);
  if (cmd === 'sensitivity') return (await import('./commands/sensitivity.js')).main(rest);
  if (cmd === 'recover') return (await import('./commands/recover.js')).main(rest);
  throw new UsageError(`unknown command "${cmd}"; see '${PROG} --help'`);
}

main(process.argv.slice(2)).catch((e) => {
  if (e instanceof UsageError || e instanceof EvalUsageError) fail(e.message, 2);
  if (e instanceof RunError) fail(e.message, 1);
  // A refused model: its message, the stable code and (ONNX layer) the finer reason, on one line.
  if (e instanceof OnnxError) fail(`${e.message} [${e.code}${e.reason ? `, ${e.reason}` : ''}]`, 1);
  if (e && typeof e.code === 'string' && e.name !== 'Error') fail(`${e.message} [${e.code}]`, 1);
  // Anything else is a bug: one line still (the stack with SPARSEKIT_DEBUG=1), never a partial file
  // (outputs are written to temporary names and renamed last).
  const what = e instanceof RangeError ? 'out of memory or nested too deep' : 'unexpected error';
  const detail = process.env.SPARSEKIT_DEBUG && e && e.stack ? e.stack : `${e && e.name ? `${e.name}: ` : ''}${e && e.message !== undefined ? e.message : e}`;
  fail(`${what}: ${detail} (a bug: please report it with the model)`, 1);
});
