// Module worker of the calibration card: each run is one PruneJob (sparsity or N:M, method magnitude
// / Wanda / SparseGPT) run by the package's runJob with onnxruntime-web, as the CLI's
// `prune --method` runs it; layers the card keeps dense make it a recipe job ({"default": target,
// "layers": {name: "dense"}}). The held-out fidelity is runJob's, on held-out seeds, never the
// calibration set.
import * as ort from 'onnxruntime-web/wasm';
import init from 'sparsekit-wasm';
import { OnnxModel, makeOrtRunner, makeInputSet, runJob, type JobMethod, type JobMode, type JobProgress, type OrtLike, type PruneJob } from 'sparsekit-wasm/onnx';
import { serve } from '../protocol.js';
import type { CalibApi, CalibRequest, CalibStep } from './api.js';

ort.env.wasm.numThreads = 1;
// (OrtLike declares one create(bytes) signature; onnxruntime-web's overloads include it)
const runner = makeOrtRunner(ort as unknown as OrtLike, { executionProviders: ['wasm'] });
const ENGINE = 'sparsekit-wasm (single-threaded SIMD128)';
let ready: Promise<void> | null = null;

/** The card's target on every layer, or a recipe when some layers are kept dense. */
function modeOf(msg: CalibRequest): JobMode {
  const dense = Object.keys(msg.dense);
  if (!dense.length) return 'nm' in msg.target ? { kind: 'nm', nm: msg.target.nm } : { kind: 'sparsity', sparsity: msg.target.sparsity };
  const setting = 'nm' in msg.target ? { nm: msg.target.nm.join(':') } : { sparsity: msg.target.sparsity };
  return { kind: 'recipe', recipe: { default: setting, layers: Object.fromEntries(dense.map((n) => [n, 'dense'])) } };
}

/** One job of the card: `method` on the card's target, measured on the held-out samples. */
async function prune(msg: CalibRequest, method: JobMethod, signal: AbortSignal, onProgress: (p: JobProgress) => void) {
  await (ready ??= init({ threads: false }));
  const model = OnnxModel.parse(msg.bytes);
  const calibration = makeInputSet(model, { count: msg.pages + msg.images.length, set: 'calibration', normalization: msg.normalization, images: msg.images });
  const heldOut = makeInputSet(model, { count: msg.heldOut, set: 'heldOut', normalization: msg.normalization });
  const job: PruneJob = {
    mode: modeOf(msg), method, eval: { samples: heldOut },
    // magnitude reads no samples; the calibrated methods read these, layer by layer unless one pass is asked for
    calibration: method === 'magnitude' ? undefined : { samples: calibration, sequential: msg.sequential, percDamp: msg.percDamp },
  };
  return runJob(model, job, { ort: runner, signal, onProgress });
}

const step = (p: JobProgress): CalibStep => ({ done: p.done, total: p.total, phase: p.phase, layer: p.label });

serve<CalibApi>({
  async run(msg, ctx) {
    const { model, report } = await prune(msg, msg.criterion, ctx.signal, (p) => ctx.progress(step(p)));
    const bytes = model.encode();
    ctx.transfer.push(bytes.buffer);
    return { bytes, report: JSON.parse(JSON.stringify(report)) as typeof report, engine: ENGINE };
  },
  async compare(msg, ctx) {
    const rows = [];
    const methods = ['magnitude', 'wanda', 'sparsegpt'] as const;
    for (let i = 0; i < methods.length; i++) {
      const c = methods[i];
      const { report } = await prune(msg, c, ctx.signal, (p) => ctx.progress({ ...step(p), done: i * p.total + p.done, total: p.total * methods.length, phase: `${c}: ${p.phase}` }));
      const f = report.fidelity!; // every job of the card has held-out samples
      rows.push({ criterion: c, fidelity: f.score, worst: f.worst, cosine: f.cosine, layers: (report.prune?.layers ?? []).filter((l) => l.zeros > 0).length });
    }
    return { rows, engine: ENGINE };
  },
});
