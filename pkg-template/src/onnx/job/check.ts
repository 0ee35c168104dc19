// Validation of a PruneJob before anything runs: every refusal names the job option it is about
// (`option`, a path such as 'mode.sparsity'), so each face can say it in its own words (the CLI
// names its flag, the playground its field). A refused job has changed nothing.
import { JobError } from '../errors.js';
import { checkNm, pair } from '../nm-pattern.js';
import { parseRecipe } from '../recipe/recipe.js';
import type { JobMode, JobTraining, PruneJob } from './types.js';
import { JOB_DEFAULTS } from './defaults.js';
import { trainingInputsProblem } from '../recover/train-setup.js';
import { CHANNEL_SCORES, channelScoresText } from '../calib/defaults.js';

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isPosInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 1;

function fraction(option: string, x: unknown, { open = false, code = 'invalid_sparsity' } = {}): void {
  if (!isNum(x) || x < 0 || x > 1 || (open && (x === 0 || x === 1))) {
    throw new JobError(option, `must be a number in ${open ? '(0, 1)' : '[0, 1]'} (got ${String(x)})`, code);
  }
}

function checkMode(mode: JobMode, method: string): void {
  const calibrated = method !== 'magnitude';
  switch (mode.kind) {
    case 'sparsity':
      fraction('mode.sparsity', mode.sparsity);
      if (mode.block !== undefined) {
        pair('mode.block', mode.block, 'invalid_block_shape');
        if (calibrated) throw new JobError('mode.block', `applies to method magnitude (wanda prunes per output row, sparsegpt per block of columns)`);
      }
      if (mode.scope !== undefined && !['row', 'layer', 'global'].includes(mode.scope)) throw new JobError('mode.scope', `must be row, layer or global (got ${String(mode.scope)})`);
      if (mode.scope !== undefined && mode.scope !== 'layer' && calibrated) throw new JobError('mode.scope', `applies to method magnitude (wanda prunes per output row, sparsegpt per block of columns)`);
      if (mode.allocation !== undefined && !['uniform', 'owl'].includes(mode.allocation)) throw new JobError('mode.allocation', `must be uniform or owl (got ${String(mode.allocation)})`);
      if (mode.allocation === 'owl' && ((mode.scope ?? 'layer') !== 'layer' || (mode.block && (mode.block[0] !== 1 || mode.block[1] !== 1)))) {
        throw new JobError('mode.allocation', 'owl sets a sparsity per layer: it takes scope layer and 1x1 blocks');
      }
      return;
    case 'nm':
      checkNm('mode.nm', mode.nm);
      return;
    case 'channels':
      fraction('mode.fraction', mode.fraction);
      if (mode.fraction >= 1) throw new JobError('mode.fraction', 'must be below 1: removing every channel leaves no model', 'invalid_sparsity');
      if (mode.roundTo !== undefined && !isPosInt(mode.roundTo)) throw new JobError('mode.roundTo', `must be a positive integer (got ${String(mode.roundTo)})`);
      if (mode.scope !== undefined && !['layer', 'global'].includes(mode.scope)) throw new JobError('mode.scope', `must be layer or global for channels (got ${String(mode.scope)})`);
      if (mode.score !== undefined && !(CHANNEL_SCORES as readonly string[]).includes(mode.score)) throw new JobError('mode.score', `must be ${channelScoresText} (got ${String(mode.score)})`);
      if (mode.score !== undefined && !calibrated) throw new JobError('mode.score', 'applies to methods wanda and sparsegpt (magnitude scores channels by their weights)');
      if (mode.heads !== undefined && mode.heads !== 'groups' && mode.heads !== 'query') throw new JobError('mode.heads', `must be groups or query (got ${String(mode.heads)})`);
      if (mode.heads === 'query' && mode.score === 'influence') throw new JobError('mode.score', 'influence ranks heads across layers, which query heads within KV groups cannot follow: use fluctuation');
      return;
    case 'layers':
      if (!isPosInt(mode.count)) throw new JobError('mode.count', `must be a positive integer (got ${String(mode.count)})`);
      if (calibrated) throw new JobError('method', 'applies to weight pruning: layers are chosen by their measured influence');
      return;
    case 'recipe':
      if (mode.recipe === null || mode.recipe === undefined) throw new JobError('mode.recipe', 'is required');
      return;
    case 'search':
      if (!['sparsity', 'nm', 'channels', 'layers'].includes(mode.target)) throw new JobError('mode.target', `must be sparsity, nm, channels or layers (got ${String(mode.target)})`);
      if (!isNum(mode.minFidelity) || !(mode.minFidelity > 0 && mode.minFidelity <= 1)) throw new JobError('mode.minFidelity', `must be in (0, 1] (got ${String(mode.minFidelity)})`);
      if (mode.target === 'layers') {
        // whole blocks go by their measured influence, judged as written: no levels, table or method
        for (const k of ['nm', 'levels', 'objective', 'maxSteps', 'tableSamples', 'roundTo'] as const) {
          if (mode[k] !== undefined) throw new JobError(`mode.${k}`, 'does not apply to target layers (whole blocks, least influential first, as many as the floor allows)');
        }
        if (calibrated) throw new JobError('method', 'applies to weight pruning: layers are chosen by their measured influence');
      }
      if (mode.heads !== undefined && mode.target !== 'channels') throw new JobError('mode.heads', `applies to target channels (got target ${mode.target})`);
      if (mode.heads !== undefined && mode.heads !== 'groups' && mode.heads !== 'query') throw new JobError('mode.heads', `must be groups or query (got ${String(mode.heads)})`);
      if (mode.target === 'nm') checkNm('mode.nm', mode.nm);
      else if (mode.nm !== undefined) throw new JobError('mode.nm', `applies to target nm (got target ${mode.target})`);
      if (mode.levels !== undefined) {
        if (mode.target === 'nm') throw new JobError('mode.levels', 'apply to targets sparsity and channels (nm has one level)');
        if (!Array.isArray(mode.levels) || !mode.levels.length || !mode.levels.every(isNum)) throw new JobError('mode.levels', `must be a non-empty list of numbers (got ${JSON.stringify(mode.levels)})`);
      }
      if (mode.objective !== undefined && !['params', 'flops', 'latency', 'bytes'].includes(mode.objective)) throw new JobError('mode.objective', `must be params, flops, latency or bytes (got ${String(mode.objective)})`);
      if (mode.objective === 'latency' && mode.target !== 'channels') throw new JobError('mode.objective', 'latency needs target channels (zeros do not make onnxruntime faster)');
      if (mode.confidence !== undefined && !(isNum(mode.confidence) && mode.confidence > 0 && mode.confidence < 1)) throw new JobError('mode.confidence', `must be in (0, 1), e.g. 0.95 (got ${String(mode.confidence)})`);
      for (const k of ['maxSteps', 'tableSamples', 'roundTo'] as const) {
        if (mode[k] !== undefined && !isPosInt(mode[k])) throw new JobError(`mode.${k}`, `must be a positive integer (got ${String(mode[k])})`);
      }
      return;
    case 'prox':
      fraction('mode.sparsity', mode.sparsity, { open: true });
      if (mode.block !== undefined) pair('mode.block', mode.block, 'invalid_block_shape');
      if (mode.scope !== undefined && !['layer', 'global'].includes(mode.scope)) throw new JobError('mode.scope', `must be layer or global for prox (got ${String(mode.scope)})`);
      if (calibrated) throw new JobError('method', 'applies to one-shot pruning: prox reaches its sparsity by training');
      if (mode.epochs !== undefined && !isPosInt(mode.epochs)) throw new JobError('mode.epochs', `must be a positive integer (got ${String(mode.epochs)})`);
      for (const k of ['minutes', 'recoverMinutes'] as const) {
        if (mode[k] !== undefined && !(isNum(mode[k]) && (mode[k] as number) > 0)) throw new JobError(`mode.${k}`, `must be > 0 (got ${String(mode[k])})`);
      }
      if (mode.recoverEpochs !== undefined && !(Number.isInteger(mode.recoverEpochs) && mode.recoverEpochs >= 0)) throw new JobError('mode.recoverEpochs', `must be an integer >= 0 (got ${String(mode.recoverEpochs)})`);
      if (mode.ramp !== undefined && !(isNum(mode.ramp) && mode.ramp > 0 && mode.ramp <= 1)) throw new JobError('mode.ramp', `must be in (0, 1] (got ${String(mode.ramp)})`);
      return;
    default:
      throw new JobError('mode.kind', `must be sparsity, nm, channels, layers, recipe, search or prox (got ${String((mode as { kind?: unknown }).kind)})`);
  }
}

function checkTraining(option: string, t: JobTraining): void {
  if (t.epochs !== undefined && !isPosInt(t.epochs)) throw new JobError(`${option}.epochs`, `must be a positive integer (got ${String(t.epochs)})`);
  if (t.minutes !== undefined && !(isNum(t.minutes) && t.minutes > 0)) throw new JobError(`${option}.minutes`, `must be > 0 (got ${String(t.minutes)})`);
  if (t.lr !== undefined && !(isNum(t.lr) && t.lr > 0)) throw new JobError(`${option}.lr`, `must be > 0 (got ${String(t.lr)})`);
  if (t.batchSize !== undefined && !isPosInt(t.batchSize)) throw new JobError(`${option}.batchSize`, `must be a positive integer (got ${String(t.batchSize)})`);
  if (t.schedule !== undefined && !['constant', 'cosine'].includes(t.schedule)) throw new JobError(`${option}.schedule`, `must be constant or cosine (got ${JSON.stringify(t.schedule)})`);
  if (t.warmup !== undefined && !(isNum(t.warmup) && t.warmup >= 0 && t.warmup < 1)) throw new JobError(`${option}.warmup`, `must be a share of the run in [0, 1) (got ${String(t.warmup)})`);
  if (t.steps !== undefined && (!Array.isArray(t.steps) || !t.steps.length || t.steps.some((s) => !['stats', 'lsq', 'distill'].includes(s)))) {
    throw new JobError(`${option}.steps`, `must be a list of stats, lsq, distill (got ${JSON.stringify(t.steps)})`);
  }
  if (t.featureWeight !== undefined && !(isNum(t.featureWeight) && t.featureWeight > 0)) throw new JobError(`${option}.featureWeight`, `must be > 0 (got ${String(t.featureWeight)})`);
  if (t.softmaxLoss !== undefined && !['logits', 'kl'].includes(t.softmaxLoss)) throw new JobError(`${option}.softmaxLoss`, `must be logits or kl (got ${String(t.softmaxLoss)})`);
  for (const k of ['trimPadding', 'groupByLength'] as const) {
    if (t[k] !== undefined && typeof t[k] !== 'boolean') throw new JobError(`${option}.${k}`, `must be true or false (got ${JSON.stringify(t[k])})`);
  }
  if (t.features !== undefined && !(isPosInt(t.features) || (Array.isArray(t.features) && t.features.length && t.features.every((f) => typeof f === 'string' && f)))) {
    throw new JobError(`${option}.features`, `must be a count or a list of tensor names (got ${JSON.stringify(t.features)})`);
  }
}

/** Whether the job trains on its calibration samples (recovery, or prox's sparse training): their bound and the statistics' share follow from it. */
export const jobTrains = (job: PruneJob): boolean => job.mode.kind === 'prox' || job.recover !== undefined;

/**
 * Checks a job and returns the method it runs with. Throws a JobError naming the first option that
 * cannot be right; what needs the model (layer names of a recipe, the samples' shapes) is checked by
 * the steps that read it, still before any weight changes.
 */
export function checkJob(job: PruneJob): { method: 'magnitude' | 'wanda' | 'sparsegpt' } {
  if (!job || typeof job !== 'object' || !job.mode || typeof job.mode !== 'object') throw new JobError('mode', 'is required (one of sparsity, nm, channels, layers, recipe, search, prox)');
  // a recipe may name its method (the job's method overrides it)
  const method = job.method ?? (job.mode?.kind === 'recipe' ? parseRecipe(job.mode.recipe).method : undefined) ?? JOB_DEFAULTS.method;
  if (!['magnitude', 'wanda', 'sparsegpt'].includes(method)) throw new JobError('method', `must be magnitude, wanda or sparsegpt (got ${String(method)})`);
  checkMode(job.mode, method);
  const cal = job.calibration;
  if (cal !== undefined) {
    if (!Array.isArray(cal.samples) || !cal.samples.length) throw new JobError('calibration.samples', 'must hold at least one sample');
    if (cal.percDamp !== undefined && !(isNum(cal.percDamp) && cal.percDamp >= 0)) throw new JobError('calibration.percDamp', `must be >= 0 (got ${String(cal.percDamp)})`);
    if (cal.refit !== undefined && !(Number.isInteger(cal.refit) && cal.refit >= 0 && cal.refit <= 10000)) throw new JobError('calibration.refit', `must be an integer from 0 to 10000 (got ${String(cal.refit)})`);
    if (cal.statsLimit !== undefined && !isPosInt(cal.statsLimit)) throw new JobError('calibration.statsLimit', `must be a positive integer (got ${String(cal.statsLimit)})`);
    for (const k of ['actOrder', 'scaleSearch', 'centre'] as const) if (cal[k] !== undefined && typeof cal[k] !== 'boolean') throw new JobError(`calibration.${k}`, `must be a boolean (got ${String(cal[k])})`);
    if (cal.sequential === false && job.mode.kind === 'channels') throw new JobError('calibration.sequential', 'one pass applies to sparsity / nm (channel compensation is sequential)');
  }
  if (job.keepDense !== undefined) {
    if (!Array.isArray(job.keepDense) || job.keepDense.some((x) => typeof x !== 'string')) throw new JobError('keepDense', 'must be a list of weight names');
    if (job.mode.kind !== 'sparsity' && job.mode.kind !== 'nm') throw new JobError('keepDense', `applies to the sparsity and nm modes (a ${job.mode.kind} plan says per layer)`);
  }
  const owl = job.mode.kind === 'sparsity' && job.mode.allocation === 'owl';
  const layers = job.mode.kind === 'layers' || (job.mode.kind === 'search' && job.mode.target === 'layers');
  const needsCalibration = method !== 'magnitude' || job.mode.kind === 'prox' || layers || job.recover !== undefined || owl;
  if (needsCalibration && !cal) throw new JobError('calibration.samples', `are needed by ${method !== 'magnitude' ? `method ${method}` : job.mode.kind === 'prox' ? 'prox' : owl ? 'allocation owl' : layers ? 'layers (the blocks\' influence is measured on them)' : 'recover'}`);
  if (job.eval !== undefined && (!Array.isArray(job.eval.samples) || !job.eval.samples.length)) throw new JobError('eval.samples', 'must hold at least one sample');
  if (job.tokenizer !== undefined && (job.tokenizer === null || typeof job.tokenizer !== 'object' || Array.isArray(job.tokenizer))) throw new JobError('tokenizer', `must be a parsed tokenizer.json or a loaded Tokenizer (got ${Array.isArray(job.tokenizer) ? 'an array' : typeof job.tokenizer})`);
  if (job.mode.kind === 'search' && !job.eval) throw new JobError('eval.samples', 'are needed by the search: its floor is measured on held-out samples');
  if (job.mode.kind === 'search' && job.mode.tableSamples !== undefined && job.eval && job.mode.tableSamples > job.eval.samples.length) {
    throw new JobError('mode.tableSamples', `must be at most the ${job.eval.samples.length} held-out samples (got ${job.mode.tableSamples})`);
  }
  if (job.recover !== undefined && job.recover !== true) checkTraining('recover', job.recover);
  if (job.recover !== undefined && job.mode.kind === 'prox') throw new JobError('recover', 'is part of prox already (its recoverEpochs / recoverMinutes)');
  if (job.training !== undefined) checkTraining('training', job.training);
  const q = job.quantize;
  if (q !== undefined) {
    if (!q || !['int8', 'int4'].includes(q.scheme)) throw new JobError('quantize.scheme', `must be int8 or int4 (got ${String(q?.scheme)})`);
    if (q.group !== undefined) {
      if (q.scheme !== 'int4') throw new JobError('quantize.group', 'applies to int4 (int8 has one scale per output channel)');
      if (!isPosInt(q.group) || q.group < 16 || (q.group & (q.group - 1)) !== 0) throw new JobError('quantize.group', `must be a power of two >= 16 (got ${String(q.group)})`);
    }
    if (q.method !== undefined && !['gptq', 'rtn'].includes(q.method)) throw new JobError('quantize.method', `must be gptq or rtn (got ${String(q.method)})`);
    if (q.embeddings !== undefined && !['int8', 'int4', 'int3', 'float'].includes(q.embeddings)) throw new JobError('quantize.embeddings', `(the embedding tables' bits) must be int8, int4, int3 or float (got ${String(q.embeddings)})`);
    if (q.int4MatMul !== undefined) {
      if (!['nbits', 'dynamic'].includes(q.int4MatMul)) throw new JobError('quantize.int4MatMul', `must be nbits or dynamic (got ${String(q.int4MatMul)})`);
      if (q.scheme !== 'int4') throw new JobError('quantize.int4MatMul', 'applies to the int4 scheme');
    }
    if (q.keptDense !== undefined) {
      if (!['scheme', 'int8'].includes(q.keptDense)) throw new JobError('quantize.keptDense', `must be scheme or int8 (got ${String(q.keptDense)})`);
      // Nothing to do elsewhere: refused rather than ignored.
      if (q.keptDense === 'int8' && q.scheme !== 'int4') throw new JobError('quantize.keptDense', 'int8 applies to the int4 scheme (int8 already writes every layer at 8 bits)');
      if (q.keptDense === 'int8' && job.mode.kind !== 'sparsity' && job.mode.kind !== 'nm') throw new JobError('quantize.keptDense', `applies to sparsity and nm jobs, the ones that keep layers dense (this is ${job.mode.kind})`);
    }
    const m = job.mode;
    if (job.recover !== undefined && m.kind === 'search' && m.target !== 'channels' && (m.objective ?? JOB_DEFAULTS.objective) === 'bytes') {
      // the mixed search verifies its plan quantized; recovery afterwards would move the weights off their grids
      throw new JobError('recover', 'does not combine with the mixed search (quantize with a bytes search of sparsity or nm), which verifies its plan already quantized');
    }
    if (q.method === 'gptq' && !cal?.samples.length) throw new JobError('quantize.method', 'gptq compensates through the inputs of each layer: it needs calibration samples (calibration.samples)');
  }
  if (job.output !== undefined && !(job.output && ['onnx', 'transformers.js'].includes(job.output.layout))) {
    throw new JobError('output.layout', `must be onnx or transformers.js (got ${String(job.output?.layout)})`);
  }
  const heavy = jobTrains(job) && cal?.samples ? trainingInputsProblem(cal.samples) : undefined;
  if (heavy) throw new JobError('calibration.samples', heavy);
  return { method };
}
