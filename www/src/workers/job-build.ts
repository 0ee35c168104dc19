// The job card's settings as one PruneJob: the same object the CLI's `prune` builds from its flags
// (pkg-template/bin/commands/prune.js), so that the same settings write the same model on both
// faces. Options the card leaves at their defaults are left out of the job, as the CLI leaves out
// flags that are not given (JOB_DEFAULTS fills both in the same way).
import { parseNm, type InputSample, type JobMode, type PruneJob } from 'sparsekit-wasm/onnx';
import type { JobRequest } from './api.js';

/** What the goal asks for: the mode of the job (a search when a floor is given). */
export function jobMode(req: JobRequest): JobMode {
  if (req.goal === 'recipe') return { kind: 'recipe', recipe: req.recipe ?? {} };
  if (req.goal === 'layers') return req.floor !== null ? { kind: 'search', target: 'layers', minFidelity: req.floor } : { kind: 'layers', count: req.amount };
  const channels = req.goal === 'smaller' || req.goal === 'faster';
  if (req.floor !== null) {
    const target = channels ? 'channels' as const : req.goal === 'nm' ? 'nm' as const : 'sparsity' as const;
    return {
      kind: 'search', target, minFidelity: req.floor,
      nm: target === 'nm' ? parseNm(req.nm, 'mode.nm') : undefined,
      levels: target === 'nm' ? undefined : req.levels,
      objective: req.goal === 'faster' ? 'latency' : undefined,
      maxSteps: req.maxSteps,
    };
  }
  if (req.goal === 'nm') return { kind: 'nm', nm: parseNm(req.nm, 'mode.nm') };
  if (req.goal === 'sparsity') return { kind: 'sparsity', sparsity: req.amount };
  return { kind: 'channels', fraction: req.amount };
}

/** Whether the job reads calibration samples: a calibrated method, recovery, or blocks ranked by their influence. */
export const needsCalibration = (req: JobRequest): boolean => req.method !== 'magnitude' || !!req.recover || req.goal === 'layers';

/** The whole job on these samples (calibration: only what the method or recovery reads). */
export function buildJob(req: JobRequest, calibration: InputSample[], heldOut: InputSample[], tokenizer?: Record<string, unknown>): PruneJob {
  const job: PruneJob = { mode: jobMode(req) };
  if (tokenizer) job.tokenizer = tokenizer;
  if (req.method !== 'magnitude') job.method = req.method;
  if (needsCalibration(req)) job.calibration = { samples: calibration };
  if (heldOut.length) job.eval = { samples: heldOut };
  if (req.quantize) {
    job.quantize = { scheme: req.quantize.scheme, group: req.quantize.scheme === 'int4' ? req.quantize.group : undefined };
    if (req.quantize.embeddings) job.quantize.embeddings = req.quantize.embeddings;
  }
  if (req.recover) {
    const r = req.recover;
    job.recover = {
      steps: r.steps, epochs: r.epochs, minutes: r.minutes > 0 ? r.minutes : undefined, lr: r.lr, batchSize: r.batchSize,
      features: r.features > 0 ? r.features : undefined,
    };
  }
  return job;
}
