// `sparsekit-wasm recover PRUNED.onnx --teacher ORIG.onnx --calib DIR|synthetic -o OUT.onnx`: wins back
// what pruning broke (closed-form steps, then distillation towards the original), without labels.
// Progress with an ETA on stderr; Ctrl-C stops with nothing written (OUT is only written at the
// end, through a temporary file); --checkpoint saves the state after every epoch (temporary file +
// rename), --resume continues from it. A model with an operator the training core lacks: exit 1, one
// line naming it, no output.
import fs from 'node:fs';
import path from 'node:path';
import { loadOnnx, saveOnnx, recover } from '../../src/onnx/index.js';
import { parseMetrics } from '../fidelity-cli.js';
import { PROG, UsageError, RunError, runCommand, parse, num, posInt, loadOrt, samplesOf, checkTrainingSets, trainingProgress, interruptible, distillFlags } from './cli-util.js';

/** @typedef {import('../../src/onnx/index.js').RecoverState} RecoverState */

export const HELP = `Usage: ${PROG} recover PRUNED.onnx --teacher ORIG.onnx -o OUT.onnx [options]

  Brings a pruned model back towards its original on unlabeled samples: per-channel statistics
  correction, a least-squares refit of the 1x1 convolutions (each kept only if the held-out fidelity
  does not drop), then distillation (Adam; the pruned model's zeros stay zero, removed channels stay
  removed), keeping the parameters that score best on the held-out samples.

  --teacher ORIG.onnx     the original (unpruned) model
  -o, --output OUT.onnx   where to write the recovered model (written last: an interrupted run leaves none)
  --calib DIR|synthetic   training inputs (default synthetic; the formats of prune --calib)
  --calib-count N         samples to generate, or the first N of DIR (default 64, at most 512)
  --eval DIR|synthetic    held-out samples that decide what is kept (default: the training samples)
  --eval-count N          (default 16)
  --metric OUTPUT=KIND    how to read an output for the fidelity (as prune --metric)
  --epochs N              distillation epochs (default 4); --minutes M: a time budget (first reached stops)
  --lr LR                 Adam's learning rate (default 1e-4)
  --batch B               samples per step (default 8)
  --steps LIST            of stats,lsq,distill (default all three)
  --loss logits|kl        loss of a classification / sequence output made by a Softmax: MSE to the
                          teacher's logits or KL of the probabilities (default: logits for a
                          classification output, kl for a sequence output)
  --features N|A,B        also distill N matched block outputs of the student (cut points of its graph,
                          evenly spaced; channel-pruned ones on their kept channels), or these tensors
  --feature-weight W      total weight of those feature losses, each a relative MSE (default 1)
  --checkpoint CKPT       save the state after every epoch (atomically)
  --resume CKPT           continue from a saved state
  --report R.json         write the report as JSON
  -q, --quiet             no progress lines
  -h, --help              this help`;

/** @satisfies {import('./cli-util.js').ArgOptions} */
const OPTIONS = {
  output: { type: 'string', short: 'o' }, teacher: { type: 'string' }, calib: { type: 'string' }, 'calib-count': { type: 'string' },
  eval: { type: 'string' }, 'eval-count': { type: 'string' }, metric: { type: 'string', multiple: true }, epochs: { type: 'string' },
  minutes: { type: 'string' }, lr: { type: 'string' }, batch: { type: 'string' }, steps: { type: 'string' }, checkpoint: { type: 'string' },
  resume: { type: 'string' }, loss: { type: 'string' }, features: { type: 'string' }, 'feature-weight': { type: 'string' }, report: { type: 'string' }, quiet: { type: 'boolean', short: 'q' }, help: { type: 'boolean', short: 'h' },
};

const MAX_SAMPLES = 512;

/**
 * A checkpoint as bytes: a JSON header line, then each tensor's float32 values in header order.
 * @param {RecoverState} s
 */
function encodeState(s) {
  /** @type {[string, string, number][]} */
  const index = [];
  /** @type {Buffer[]} */
  const parts = [];
  for (const which of /** @type {const} */ (['params', 'best'])) {
    for (const [name, v] of Object.entries(s[which])) { index.push([which, name, v.length]); parts.push(Buffer.from(v.buffer, v.byteOffset, v.byteLength)); }
  }
  // The trainer's own state (Adam's moments included) when the training core saves it: bytes, not floats.
  if (s.trainer) { index.push(['trainer', '', s.trainer.length]); parts.push(Buffer.from(s.trainer.buffer, s.trainer.byteOffset, s.trainer.byteLength)); }
  const head = JSON.stringify({ format: 'sparsekit-recover', version: s.version, epoch: s.epoch, steps: s.steps, bestScore: s.bestScore, history: s.history, index });
  return Buffer.concat([Buffer.from(`${head}\n`), ...parts]);
}

/**
 * @param {string} file
 * @returns {RecoverState}
 */
function readState(file) {
  let buf;
  try { buf = fs.readFileSync(file); } catch (caught) {
    throw new UsageError(`cannot read --resume ${file}: ${/** @type {{ code?: string }} */ (caught).code ?? caught}`);
  }
  const nl = buf.indexOf(10);
  /** @type {{ format?: string, version?: number, epoch: number, steps: number, bestScore: number, history: RecoverState['history'], index: [string, string, number][] }} */
  let head;
  try { head = JSON.parse(buf.subarray(0, nl).toString('utf8')); } catch { throw new RunError(`${file} is not a recover checkpoint`); }
  if (head.format !== 'sparsekit-recover' || head.version !== 1 || !Array.isArray(head.index)) throw new RunError(`${file} is not a recover checkpoint (version 1)`);
  /** @type {RecoverState} */
  const s = { version: 1, epoch: head.epoch, steps: head.steps, bestScore: head.bestScore, history: head.history, params: {}, best: {} };
  let off = nl + 1;
  for (const [which, name, n] of head.index) {
    if (which === 'trainer') {
      if (!Number.isInteger(n) || n < 0 || off + n > buf.length) throw new RunError(`${file} is truncated`);
      s.trainer = new Uint8Array(buf.subarray(off, off + n));
      off += n;
      continue;
    }
    if (!Number.isInteger(n) || n < 0 || off + 4 * n > buf.length) throw new RunError(`${file} is truncated`);
    const v = new Float32Array(n);
    new Uint8Array(v.buffer).set(buf.subarray(off, off + 4 * n));
    (which === 'best' ? s.best : s.params)[name] = v;
    off += 4 * n;
  }
  return s;
}


/** @param {string[]} args */
export async function main(args) {
  await runCommand(async () => {
    const { values, positionals } = parse(args, OPTIONS);
    if (values.help) return void console.log(HELP);
    if (positionals.length !== 1) throw new UsageError(`recover takes exactly one pruned model (got ${positionals.length}); see '${PROG} recover --help'`);
    if (!values.output) throw new UsageError(`recover needs -o OUT.onnx; see '${PROG} recover --help'`);
    if (!values.teacher) throw new UsageError('recover needs --teacher ORIG.onnx (the original model)');
    const file = positionals[0], out = path.resolve(values.output);
    for (const [what, p] of [['pruned model', file], ['--teacher', values.teacher], ['--resume', values.resume], ['--checkpoint', values.checkpoint], ['--report', values.report]]) {
      if (p && path.resolve(p) === out) throw new UsageError(`the output must not overwrite the ${what}`);
    }
    const count = posInt('calib-count', values['calib-count'], 64);
    if (count > MAX_SAMPLES) throw new UsageError(`--calib-count is at most ${MAX_SAMPLES}`);
    const evalCount = posInt('eval-count', values['eval-count'], 16);
    const epochs = values.epochs === undefined ? undefined : posInt('epochs', values.epochs, 1);
    const minutes = values.minutes === undefined ? undefined : num('minutes', values.minutes);
    if (minutes !== undefined && !(minutes > 0)) throw new UsageError(`--minutes must be > 0 (got ${minutes})`);
    const lr = values.lr === undefined ? undefined : num('lr', values.lr);
    if (lr !== undefined && !(lr > 0)) throw new UsageError(`--lr must be > 0 (got ${lr})`);
    const batchSize = values.batch === undefined ? undefined : posInt('batch', values.batch, 8);
    const steps = values.steps === undefined ? undefined : values.steps.split(',').map((s) => s.trim());
    if (steps && (!steps.length || steps.some((s) => !['stats', 'lsq', 'distill'].includes(s)))) throw new UsageError(`--steps takes a list of stats, lsq, distill (got "${values.steps}")`);
    checkTrainingSets(values.calib, values.eval);
    const { features, featureWeight, softmaxLoss } = distillFlags(values);
    const resume = values.resume ? readState(values.resume) : undefined;

    const [pruned, teacher] = [await loadOnnx(file), await loadOnnx(values.teacher)];
    const tIn = teacher.inputs.map((i) => i.name).join(','), pIn = pruned.inputs.map((i) => i.name).join(',');
    if (tIn !== pIn) throw new RunError(`the teacher's inputs (${tIn}) are not the pruned model's (${pIn})`);
    const kinds = parseMetrics(values.metric, teacher);
    const ort = await loadOrt();
    const samples = await samplesOf(values.calib, teacher, count, 'calibration');
    const evalSamples = values.eval ? await samplesOf(values.eval, teacher, evalCount, 'heldOut') : undefined;

    // Ctrl-C: the run stops at its next step and nothing is written.
    const interrupt = interruptible(values.quiet);
    const onProgress = trainingProgress(values.quiet);
    const onCheckpoint = values.checkpoint ? (/** @type {RecoverState} */ s) => {
      const ck = /** @type {string} */ (values.checkpoint);
      const tmp = `${ck}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, encodeState(s));
      fs.renameSync(tmp, ck);
    } : undefined;
    let report;
    try {
      report = await recover(pruned, teacher, samples, {
        ort, sessionOptions: { logSeverityLevel: 3 }, evalSamples, kinds, softmaxLoss, features, featureWeight, epochs, minutes, lr, batchSize,
        steps: /** @type {('stats' | 'lsq' | 'distill')[] | undefined} */ (steps), resume, onCheckpoint, onProgress, signal: interrupt.signal,
      });
    } catch (e) {
      if (interrupt.signal.aborted) { process.stderr.write(`${PROG}: interrupted; nothing written${values.checkpoint && fs.existsSync(values.checkpoint) ? ` (the last epoch's state is in ${values.checkpoint}: --resume it)` : ''}\n`); process.exit(130); }
      throw e;
    } finally { interrupt.release(); }
    const saved = await saveOnnx(pruned, out);
    if (values.report) {
      const tmp = `${values.report}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, JSON.stringify({ input: path.resolve(file), teacher: path.resolve(values.teacher), output: saved.model, ...report }, null, 2));
      fs.renameSync(tmp, values.report);
    }
    const judged = report.judgedOn === 'eval' ? `${evalSamples?.length} held-out samples` : `the ${samples.length} training samples (no --eval given)`;
    for (const s of report.closedForm) console.log(`${s.step}: ${s.layers} layers, fidelity ${s.before.toFixed(4)} -> ${s.after.toFixed(4)} ${s.applied ? 'kept' : 'rolled back'}${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`);
    const d = report.distill;
    if (d) console.log(`distill: ${d.epochs} epochs, ${d.steps} steps (${d.stopped === 'time' ? 'time budget' : 'epochs'}), best fidelity ${d.bestScore.toFixed(4)} at epoch ${d.bestEpoch}; ${d.params} parameters, state ${(d.stateBytes / 1e6).toFixed(1)} MB; losses ${Object.entries(d.losses).map(([k, v]) => `${k}: ${v.loss}`).join(', ')}${d.features?.length ? `; features ${d.features.map((f) => (f.channels === f.teacherChannels ? f.name : `${f.name} (${f.channels} of ${f.teacherChannels} channels)`)).join(', ')}` : ''}`);
    console.log(`fidelity on ${judged}: ${report.before.score.toFixed(4)} -> ${report.after.score.toFixed(4)} (worst output ${report.after.worst}); ${(report.ms / 1000).toFixed(1)} s`);
    console.log(`wrote ${saved.model}`);
  });
}
