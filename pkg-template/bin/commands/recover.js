// `sparsekit-wasm recover PRUNED.onnx --teacher ORIG.onnx -o OUT.onnx`: wins back what pruning broke
// (closed-form steps, then distillation towards the original), without labels. Ctrl-C stops with
// nothing written; --checkpoint saves the state after every epoch and continues from it when it
// exists. A model with an operator the training core lacks: exit 1, one line naming it, no output.
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, saveOnnx, recover, JOB_DEFAULTS } from 'sparsekit-wasm/onnx';
import { parse, help, posInt, oneFile } from '../cli/args.js';
import { modelInput } from '../cli/model-input.js';
import { PROG, UsageError, RunError } from '../cli/errors.js';
import { loadOrt, parseMetrics, readSamples, checkSources, checkSamples, textOptions } from '../cli/samples.js';
import { progress, writeJson, interruptible, formCounts } from '../cli/print.js';
import { saveState, readState } from '../cli/checkpoint.js';
import { useThreads, THREADS_HELP } from '../cli/threads.js';
import { trainingOptions } from '../cli/training.js';

export const SUMMARY = 'recover PRUNED.onnx --teacher IN.onnx -o OUT.onnx …   win back what pruning broke (distillation)';

const USAGE = `Usage: ${PROG} recover PRUNED.onnx --teacher ORIG.onnx -o OUT.onnx [options]

  Brings a pruned model back towards its original on unlabeled samples: per-channel statistics
  correction, a least-squares refit of the 1x1 convolutions (each kept only if the held-out fidelity
  does not drop), then distillation (Adam; the pruned model's zeros stay zero, removed channels stay
  removed), keeping the parameters that score best on the held-out samples (--eval; default: the
  training samples). A quantized pruned model (int8 / int4 forms) trains on its forms' grids and is
  written in them again.`;

/** @param {string[]} argv */
export async function main(argv) {
  const { values, positionals } = parse('recover', argv);
  if (values.help) return void console.log(`${help('recover', USAGE)}\n\n${THREADS_HELP}`);
  const file = (await modelInput(oneFile(positionals, 'recover', 'pruned model'))).model;
  if (!values.output) throw new UsageError(`recover needs -o OUT.onnx; see '${PROG} recover --help'`);
  if (typeof values.teacher !== 'string') throw new UsageError('recover needs --teacher ORIG.onnx (the original model)');
  const out = path.resolve(/** @type {string} */ (values.output));
  const ck = /** @type {string | undefined} */ (values.checkpoint);
  for (const [what, p] of [['pruned model', file], ['--teacher', values.teacher], ['--checkpoint', ck], ['--report', values.report]]) {
    if (typeof p === 'string' && path.resolve(p) === out) throw new UsageError(`the output must not overwrite the ${what}`);
  }
  await useThreads(file);
  const count = values['calib-count'] === undefined ? JOB_DEFAULTS.calibrationCount : posInt('calib-count', values['calib-count']);
  const training = trainingOptions(values);
  const calibSrc = /** @type {string | undefined} */ (values.calib) ?? 'synthetic';
  const evalSrc = /** @type {string | undefined} */ (values.eval);
  checkSources(calibSrc, evalSrc);
  const resume = ck && fs.existsSync(ck) ? readState(ck) : undefined;

  const teacherInput = await modelInput(values.teacher);
  const [pruned, teacher] = [await loadOnnx(file), await loadOnnx(teacherInput.model)];
  const tIn = teacher.inputs.map((i) => i.name).join(','), pIn = pruned.inputs.map((i) => i.name).join(',');
  if (tIn !== pIn) throw new RunError(`the teacher's inputs (${tIn}) are not the pruned model's (${pIn})`);
  const kinds = parseMetrics(/** @type {string[] | undefined} */ (values.metric), teacher);
  const ort = await loadOrt();
  const text = textOptions(values, teacherInput);
  const samples = await readSamples('calib', calibSrc, teacher, count, text, true);
  const evalSamples = evalSrc ? await readSamples('eval', evalSrc, teacher, values['eval-count'] === undefined ? undefined : posInt('eval-count', values['eval-count']), text) : undefined;
  checkSamples(samples, evalSamples);
  if (resume && !values.quiet) process.stderr.write(`continuing from ${ck} (epoch ${resume.epoch})\n`);

  const interrupt = interruptible(values.quiet === true);
  const bar = progress(values.quiet === true);
  let report;
  try {
    report = await recover(pruned, teacher, samples, {
      ort, sessionOptions: { logSeverityLevel: 3 }, cutStore: 'file', evalSamples, kinds, ...training,
      resume, onCheckpoint: ck ? (s) => saveState(ck, s) : undefined, signal: interrupt.signal,
      onProgress: (p) => bar({ phase: p.phase, done: p.step, total: p.steps, epoch: p.epoch, epochs: p.epochs, loss: p.loss, fidelity: p.fidelity, eta: p.eta }),
    });
  } catch (e) {
    if (interrupt.signal.aborted) { process.stderr.write(`${PROG}: interrupted; nothing written${ck && fs.existsSync(ck) ? ` (the last epoch's state is in ${ck}: run again to continue)` : ''}\n`); process.exit(130); }
    throw e;
  } finally { interrupt.release(); }
  const saved = await saveOnnx(pruned, out);
  if (typeof values.report === 'string') writeJson(values.report, { input: path.resolve(file), teacher: path.resolve(values.teacher), output: saved.model, ...report });
  const judged = report.judgedOn === 'eval' ? `${evalSamples?.length} held-out samples` : `the ${samples.length} training samples (no --eval given)`;
  for (const s of report.closedForm) console.log(`${s.step}: ${s.layers} layers, fidelity ${s.before.toFixed(4)} -> ${s.after.toFixed(4)} ${s.applied ? 'kept' : 'rolled back'}${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`);
  const d = report.distill;
  if (d) console.log(`distill: ${d.epochs} epochs, ${d.steps} steps (${d.stopped === 'time' ? 'time budget' : 'epochs'}), best fidelity ${d.bestScore.toFixed(4)} at epoch ${d.bestEpoch}; ${d.params} parameters, state ${(d.stateBytes / 1e6).toFixed(1)} MB; losses ${Object.entries(d.losses).map(([k, v]) => `${k}: ${v.loss}`).join(', ')}${d.features?.length ? `; features ${d.features.map((x) => (x.channels === x.teacherChannels ? x.name : `${x.name} (${x.channels} of ${x.teacherChannels} channels)`)).join(', ')}` : ''}`);
  if (report.quantize) {
    console.log(`quantized again in the input's forms: ${formCounts(report.quantize.layers.filter((l) => l.form !== 'float'))}; recovery trained on their grids, so the file is the recovered model`);
  }
  console.log(`fidelity on ${judged}: ${report.before.score.toFixed(4)} -> ${report.after.score.toFixed(4)} (worst output ${report.after.worst}); ${(report.ms / 1000).toFixed(1)} s`);
  console.log(`wrote ${saved.model}`);
}
