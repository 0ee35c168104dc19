// The job card, the page's main path: goal (smaller / faster / N:M / sparsity, a fixed amount or
// down to a fidelity floor, or per layer: the per-layer table's recipe; scoring; quantization) →
// samples (generated, your images, or text with the model's tokenizer.json) → recovery as the last
// step → run → result → download. One PruneJob
// per run, built and run by the package's runJob in workers/job-worker.ts, as the CLI's `prune` runs
// it: the same settings write the same model on both faces.
import { JOB_DEFAULTS, type JobMethod } from 'sparsekit-wasm/onnx';
import { $, button, clearError, input, select, showError } from '../dom.js';
import { WorkerError } from '../protocol.js';
import type { JobRequest, JobSamplesRequest, JobStep } from '../workers/api.js';
import { jobClient } from '../workers.js';
import { tableRecipe } from '../run.js';
import { clearJobResult, renderJobResult } from './job-result.js';
import { recoverProgress, resetRecoverView } from './recover-view.js';

let bytes: Uint8Array | null = null;
let controller: AbortController | null = null, gen = 0;

const num = (id: string) => Number(input(id).value);

function fail(field: string, msg: string): never { throw new Error(`${field}: ${msg}`); }

async function readSamples(): Promise<JobSamplesRequest> {
  const calibration = Math.floor(num('job-calib')), heldOut = Math.floor(num('goal-samples'));
  if (!(calibration >= 0)) fail('Calibration samples', 'a whole number, 0 or more');
  if (!(heldOut >= 0)) fail('Held-out samples', 'a whole number, 0 or more');
  const images = [...(input('goal-images').files ?? [])];
  const file = input('job-text-file').files?.[0];
  const pasted = $<HTMLTextAreaElement>('job-text').value;
  if (!file && !pasted.trim()) return { calibration, heldOut, images, text: null };
  if (images.length) fail('Samples', 'give images or text, not both');
  const tok = input('job-tokenizer').files?.[0];
  if (!tok) fail('Tokenizer', 'text needs the model folder\'s tokenizer.json');
  const seqLen = Math.floor(num('job-seq-len'));
  if (!(seqLen >= 2)) fail('Tokens per sample', 'a whole number, 2 or more');
  const format = file && /\.jsonl$/i.test(file.name) ? 'jsonl' : 'txt';
  return { calibration, heldOut, images, text: { text: file ? await file.text() : pasted, format, tokenizer: await tok.text(), seqLen } };
}

function readRecover(): JobRequest['recover'] {
  if (!input('recover-enabled').checked) return null;
  const steps = (['stats', 'lsq', 'distill'] as const).filter((s) => input(`recover-step-${s}`).checked);
  if (!steps.length) fail('Recovery', 'choose at least one step');
  const epochs = Math.floor(num('recover-epochs')), minutes = num('recover-minutes'), lr = num('recover-lr'), batchSize = Math.floor(num('recover-batch'));
  const features = num('recover-features');
  if (!(epochs >= 1)) fail('Epochs', 'at least 1');
  if (!(minutes >= 0)) fail('Minutes', '0 (no time budget) or more');
  if (!(lr > 0)) fail('Learning rate', 'must be positive');
  if (!(batchSize >= 1)) fail('Batch', 'at least one sample');
  if (!(Number.isInteger(features) && features >= 0)) fail('Matched blocks', 'a whole number, 0 for the outputs only');
  return { steps, epochs, minutes, lr, batchSize, features };
}

async function readRequest(b: Uint8Array): Promise<JobRequest> {
  const goal = select('goal-kind').value as JobRequest['goal'];
  // the table's rows are the plan: no floor to search down to, no amount
  const recipe = goal === 'recipe' ? tableRecipe() : null;
  const floor = input('goal-use-floor').checked && !recipe ? num('goal-floor') : null;
  if (floor !== null && !(floor > 0 && floor <= 1)) fail('Fidelity floor', 'in (0, 1]');
  // goal layers counts blocks; the others take a percentage
  const amount = goal === 'layers' ? num('goal-amount') : num('goal-amount') / 100;
  if (floor === null && goal === 'layers' && !(Number.isInteger(amount) && amount >= 1)) fail('Blocks removed', 'a whole number, at least 1');
  if (floor === null && goal !== 'nm' && goal !== 'layers' && !recipe && !(amount >= 0 && amount < 1)) fail(goal === 'sparsity' ? 'Sparsity' : 'Channels removed', 'a percentage in [0, 100)');
  const maxSteps = Math.floor(num('goal-steps'));
  if (!(maxSteps >= 1)) fail('Plans verified', 'at least one');
  const levels = input('goal-levels').value.split(/[\s,]+/).filter(Boolean).map(Number);
  if (floor !== null && goal !== 'nm' && goal !== 'layers' && (!levels.length || levels.some((l) => !(l > 0 && l < 1)))) fail('Levels', 'fractions in (0, 1), e.g. 0.25, 0.5');
  const scheme = select('job-quantize').value;
  const group = Math.floor(num('job-group'));
  const tables = select('job-tables').value;
  if (scheme === 'int4' && !(group >= 1)) fail('Group', 'a whole number of weights, e.g. 32');
  return {
    bytes: b.slice(), goal, recipe, floor, amount, nm: input('goal-nm').value, levels, maxSteps,
    method: select('job-method').value as JobMethod,
    quantize: scheme === 'int8' || scheme === 'int4' ? { scheme, group, ...(tables === 'scheme' ? {} : { embeddings: tables as 'int8' | 'int4' | 'int3' | 'float' }) } : null,
    samples: await readSamples(), recover: readRecover(),
  };
}

/** The amount field's other value (a percentage while it counts blocks, and the reverse). */
let otherAmount = '1', amountIsCount = false;

/** Which fields the goal uses: the amount without a floor, the levels with one (not for N:M). */
function syncFields(): void {
  const goal = select('goal-kind').value, table = goal === 'recipe', floor = input('goal-use-floor').checked && !table;
  input('goal-use-floor').disabled = table;
  input('goal-floor').disabled = !floor;
  input('goal-steps').disabled = !floor || goal === 'layers'; // the blocks' search judges each count it tries, as many as it needs
  input('goal-levels').disabled = !floor || goal === 'nm' || goal === 'layers';
  input('goal-amount').disabled = floor || goal === 'nm' || table;
  input('goal-nm').disabled = goal !== 'nm';
  input('job-group').disabled = select('job-quantize').value !== 'int4';
  select('job-tables').disabled = select('job-quantize').value === 'none';
  $('goal-amount-label').firstChild!.textContent = goal === 'sparsity' ? 'sparsity ' : goal === 'layers' ? 'blocks removed ' : 'channels removed ';
  // a count of blocks, not a percentage: the field's steps and unit follow, each kind keeping its own value
  const amount = input('goal-amount'), blocks = goal === 'layers';
  if (blocks !== amountIsCount) {
    [amount.value, otherAmount] = [otherAmount, amount.value];
    amount.max = blocks ? '' : '95';
    amount.step = blocks ? '1' : '5';
    amountIsCount = blocks;
  }
  $('goal-amount-unit').hidden = blocks;
  $('recover-fields').hidden = !input('recover-enabled').checked;
}

function setBusy(on: boolean, label = ''): void {
  button('goal-run').disabled = on || !bytes;
  button('goal-cancel').disabled = !on;
  $('goal-progress').hidden = !on;
  $('goal-status').textContent = label;
}

/** The job's options as the card names them: a JobError about one names the field (as the CLI names its flag). */
const FIELDS: Record<string, string> = {
  'mode.nm': 'N:M', 'mode.minFidelity': 'Fidelity floor', 'mode.sparsity': 'Sparsity', 'mode.fraction': 'Channels removed',
  'mode.levels': 'Levels per unit', 'mode.maxSteps': 'Plans verified', 'method': 'Scoring', 'quantize.scheme': 'Quantize',
  'quantize.group': 'Group', 'quantize.embeddings': 'Embedding tables', 'calibration.samples': 'Calibration samples', 'eval.samples': 'Held-out samples',
  'recover.epochs': 'Epochs', 'recover.minutes': 'Minutes', 'recover.lr': 'Learning rate', 'recover.batchSize': 'Batch',
  'recover.features': 'Matched blocks', 'recover.steps': 'Recovery steps',
};

/** A failed job in the card's words: the field a JobError is about, then what is wrong with it. */
function jobFailure(e: unknown): string {
  const w = e instanceof WorkerError ? e : null;
  if (w?.option && w.message.startsWith(`${w.option} `)) return `${FIELDS[w.option] ?? w.option}: ${w.message.slice(w.option.length + 1)}`;
  return `The job failed: ${(e as Error).message}`;
}

const PHASES: Record<string, string> = { sensitivity: 'sensitivity', verify: 'verifying plans', prune: 'pruning', channels: 'removing channels', quantize: 'quantizing' };

function onProgress(p: JobStep): void {
  $<HTMLProgressElement>('goal-progress').value = p.total ? Math.min(1, p.done / p.total) : 0;
  const rec = recoverProgress(p);
  $('goal-status').textContent = rec ?? `${PHASES[p.phase] ?? p.phase} · ${p.done}/${p.total}${p.label ? ` · ${p.label}` : ''}`;
}

async function run(): Promise<void> {
  if (!bytes || controller) return;
  clearError();
  let req: JobRequest;
  try { req = await readRequest(bytes); } catch (e) { showError((e as Error).message); return; }
  const my = ++gen;
  clearJobResult();
  resetRecoverView();
  controller = new AbortController();
  setBusy(true, 'starting…');
  try {
    const r = await jobClient.request('run', req, { onProgress, signal: controller.signal });
    if (my !== gen) return;
    await renderJobResult(r, req);
    setBusy(false, r.bytes ? 'done' : 'no plan met the floor');
  } catch (e) {
    if (my !== gen) return;
    const cancelled = e instanceof WorkerError && e.code === 'cancelled';
    setBusy(false, cancelled ? 'cancelled' : '');
    if (!cancelled) showError(jobFailure(e));
  } finally { if (my === gen) controller = null; }
}

function cancel(): void {
  const c = controller;
  if (!c) return;
  $('goal-status').textContent = 'cancelling…';
  jobClient.cancel(c);
}

export function initJobPanel(): void {
  // the fields start at the job's defaults, the figures the CLI's help prints
  input('job-calib').value = String(JOB_DEFAULTS.calibrationCount);
  input('goal-samples').value = String(JOB_DEFAULTS.generatedEvalCount);
  input('goal-steps').value = String(JOB_DEFAULTS.maxSteps);
  input('recover-epochs').value = String(JOB_DEFAULTS.epochs);
  input('recover-lr').value = String(JOB_DEFAULTS.lr);
  input('recover-batch').value = String(JOB_DEFAULTS.batchSize);
  button('goal-run').addEventListener('click', () => void run());
  button('goal-cancel').addEventListener('click', cancel);
  for (const id of ['goal-kind', 'goal-use-floor', 'job-quantize', 'recover-enabled']) $(id).addEventListener('change', syncFields);
  syncFields();
}

/** A new model was loaded, or none (models with external data: the job runs on a self-contained .onnx). */
export function setJobModel(b: Uint8Array | null, hasExternal: boolean): void {
  if (controller) { gen++; controller = null; jobClient.restart(); }
  bytes = hasExternal ? null : b;
  $('job-card').hidden = !b;
  $('job-unsupported').hidden = !hasExternal;
  clearJobResult();
  resetRecoverView();
  setBusy(false, '');
}
