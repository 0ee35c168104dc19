// `sparsekit-wasm prune IN.onnx -o OUT.onnx --sparsity S [--block RxC] --prox`: block sparsity
// reached by proximal sparse training (proxPrune: distillation towards IN with the block soft
// threshold after every Adam step, each layer's threshold set to zero its share of a cubic ramp; then the exact projection
// and a masked recovery), instead of a one-shot magnitude cut. Progress with an ETA on stderr;
// Ctrl-C writes nothing (OUT is written at the end through a temporary file).
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, saveOnnx, proxPrune } from '../../src/onnx/index.js';
import { parseMetrics } from '../fidelity-cli.js';
import { PROG, UsageError, runCommand, parse, num, posInt, loadOrt, samplesOf, checkTrainingSets, trainingProgress, interruptible, distillFlags } from './cli-util.js';

/** @typedef {import('../../src/onnx/index.js').ProxProgress} ProxProgress */

export const HELP = `Usage: ${PROG} prune IN.onnx -o OUT.onnx --sparsity S [--block RxC] --prox [options]

  Reaches S of RxC blocks (default 4x4) in every prunable layer by sparse training instead of a
  one-shot cut: IN is distilled towards itself on unlabeled samples while, after each Adam step, the
  block soft threshold with Adam's second moments as conditioners zeroes blocks, each layer's
  threshold set to zero its share of a cubic ramp to S. Then each layer is cut to exactly S (the blocks of least
  norm; most are zero already) and recovered with the zeros held, keeping the best held-out epoch.

  --prox                  this mode
  --sparsity S            fraction of blocks to zero per layer, in (0, 1)
  --block RxC             block on the layer's (outputs x inputs) view (default 4x4)
  --scope layer|global    S in every layer (default), or S of the model's blocks under one threshold
                          over the conditioned block norms (sensitive layers keep more)
  --epochs N              epochs of the proximal phase (default 4 without --minutes)
  --minutes M             time budget of the proximal phase (alone: the ramp follows the clock)
  --recover-epochs N      epochs of masked recovery after the cut (default 2; 0: none)
  --recover-minutes M     time budget of that recovery
  --ramp F                part of the proximal steps over which the target ramps up (default 0.75)
  --calib DIR|synthetic   training inputs (default synthetic); --calib-count N (default 64, at most 512)
  --eval DIR|synthetic    held-out samples for the fidelity (default: the training samples); --eval-count N (16)
  --metric OUTPUT=KIND    how to read an output for the fidelity (as prune --metric)
  --lr LR                 Adam's learning rate (default 1e-4); --batch B samples per step (default 8)
  --loss logits|kl        loss of a Softmax-made classification / sequence output (as recover --loss;
                          default: logits for a classification, kl for a sequence)
  --features N|A,B        also distill N matched block outputs of the student (cut points of its graph,
                          evenly spaced; channel-pruned ones on their kept channels), or these tensors
  --feature-weight W      total weight of those feature losses, each a relative MSE (default 1)
  --report R.json         write the report as JSON
  -q, --quiet             no progress lines`;

/** @satisfies {import('./cli-util.js').ArgOptions} */
const OPTIONS = {
  output: { type: 'string', short: 'o' }, prox: { type: 'boolean' }, sparsity: { type: 'string' }, block: { type: 'string' }, scope: { type: 'string' },
  epochs: { type: 'string' }, minutes: { type: 'string' }, 'recover-epochs': { type: 'string' }, 'recover-minutes': { type: 'string' }, ramp: { type: 'string' },
  calib: { type: 'string' }, 'calib-count': { type: 'string' }, eval: { type: 'string' }, 'eval-count': { type: 'string' },
  metric: { type: 'string', multiple: true }, lr: { type: 'string' }, batch: { type: 'string' }, report: { type: 'string' },
  loss: { type: 'string' }, features: { type: 'string' }, 'feature-weight': { type: 'string' }, quiet: { type: 'boolean', short: 'q' },
};

const MAX_SAMPLES = 512;

/** @param {string[]} args */
export const handles = (args) => args.includes('--prox');

/** @param {string[]} args */
export async function main(args) {
  await runCommand(async () => {
    const { values, positionals } = parse(args, OPTIONS);
    if (positionals.length !== 1) throw new UsageError(`prune takes exactly one input model (got ${positionals.length}); see '${PROG} prune --help'`);
    if (!values.output) throw new UsageError(`prune needs -o OUT.onnx; see '${PROG} prune --help'`);
    if (values.sparsity === undefined) throw new UsageError('--prox needs --sparsity S (the block sparsity to reach)');
    const sparsity = num('sparsity', values.sparsity);
    if (!(sparsity > 0 && sparsity < 1)) throw new UsageError(`--sparsity must be in (0, 1) with --prox (got ${values.sparsity})`);
    const m = /^(\d+)x(\d+)$/.exec(values.block ?? '4x4');
    if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw new UsageError(`--block needs RxC with positive integers (got "${values.block}")`);
    const block = /** @type {[number, number]} */ ([Number(m[1]), Number(m[2])]);
    const scope = values.scope ?? 'layer';
    if (scope !== 'layer' && scope !== 'global') throw new UsageError(`--scope is layer or global (got "${values.scope}")`);
    const file = positionals[0], out = path.resolve(values.output);
    if (path.resolve(file) === out) throw new UsageError('the output must not overwrite the input');
    const count = posInt('calib-count', values['calib-count'], 64);
    if (count > MAX_SAMPLES) throw new UsageError(`--calib-count is at most ${MAX_SAMPLES}`);
    const evalCount = posInt('eval-count', values['eval-count'], 16);
    const minutes = values.minutes === undefined ? undefined : num('minutes', values.minutes);
    if (minutes !== undefined && !(minutes > 0)) throw new UsageError(`--minutes must be > 0 (got ${minutes})`);
    const epochs = values.epochs === undefined ? undefined : posInt('epochs', values.epochs, 4);
    const recoverMinutes = values['recover-minutes'] === undefined ? undefined : num('recover-minutes', values['recover-minutes']);
    if (recoverMinutes !== undefined && !(recoverMinutes > 0)) throw new UsageError(`--recover-minutes must be > 0 (got ${recoverMinutes})`);
    const recoverEpochs = values['recover-epochs'] === undefined ? undefined : Number(values['recover-epochs']);
    if (recoverEpochs !== undefined && !(Number.isInteger(recoverEpochs) && recoverEpochs >= 0)) throw new UsageError(`--recover-epochs needs an integer >= 0 (got "${values['recover-epochs']}")`);
    const ramp = values.ramp === undefined ? undefined : num('ramp', values.ramp);
    if (ramp !== undefined && !(ramp > 0 && ramp <= 1)) throw new UsageError(`--ramp must be in (0, 1] (got ${ramp})`);
    const lr = values.lr === undefined ? undefined : num('lr', values.lr);
    if (lr !== undefined && !(lr > 0)) throw new UsageError(`--lr must be > 0 (got ${lr})`);
    const batchSize = posInt('batch', values.batch, 8);
    checkTrainingSets(values.calib, values.eval);
    const { features, featureWeight, softmaxLoss } = distillFlags(values);

    const model = await loadOnnx(file);
    const kinds = parseMetrics(values.metric, model);
    const ort = await loadOrt();
    const samples = await samplesOf(values.calib, model, count, 'calibration');
    const evalSamples = values.eval ? await samplesOf(values.eval, model, evalCount, 'heldOut') : undefined;

    const interrupt = interruptible(values.quiet);
    const onProgress = trainingProgress(values.quiet, (/** @type {ProxProgress} */ p) => (p.sparsity !== undefined ? ` blocks zero ${(100 * p.sparsity).toFixed(1)}%${p.target !== undefined ? ` (ramp ${(100 * p.target).toFixed(1)}%)` : ''}` : ''));
    let report;
    try {
      report = await proxPrune(model, samples, {
        ort, sessionOptions: { logSeverityLevel: 3 }, evalSamples, kinds, sparsity, block, scope, epochs, minutes, ramp, recoverEpochs, recoverMinutes, lr, batchSize, features, featureWeight, softmaxLoss, onProgress, signal: interrupt.signal,
      });
    } catch (e) {
      if (interrupt.signal.aborted) { process.stderr.write(`${PROG}: interrupted; nothing written\n`); process.exit(130); }
      throw e;
    } finally { interrupt.release(); }
    const saved = await saveOnnx(model, out);
    if (values.report) {
      const tmp = `${values.report}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, JSON.stringify({ input: path.resolve(file), output: saved.model, ...report }, null, 2));
      fs.renameSync(tmp, values.report);
    }
    const last = report.history[report.history.length - 1];
    if (report.features.length) console.log(`features: ${report.features.map((f) => f.name).join(', ')}`);
    console.log(`prox: ${report.steps} steps, ${report.history.length} epochs; blocks zero ${(100 * report.reached).toFixed(1)}% before the cut${last ? `, fidelity ${last.fidelity.toFixed(4)}` : ''}`);
    console.log(`cut to ${(100 * report.projected.sparsity).toFixed(1)}% of ${block.join('x')} blocks: fidelity ${report.projected.fidelity.toFixed(4)}`);
    if (report.recovered) console.log(`recovered: fidelity ${report.recovered.before.score.toFixed(4)} -> ${report.recovered.after.score.toFixed(4)}`);
    console.log(`fidelity on ${evalSamples ? `${evalSamples.length} held-out samples` : `the ${samples.length} training samples (no --eval given)`}: ${report.fidelity.toFixed(4)}; ${(report.ms / 1000).toFixed(1)} s`);
    console.log(`wrote ${saved.model}`);
  });
}
