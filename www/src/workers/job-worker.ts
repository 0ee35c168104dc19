// Module worker of the page's pruning: builds one PruneJob from the job card's settings or the
// per-layer table's recipe (job-build.ts) and runs the package's runJob on it, as the CLI's `prune`
// does, with onnxruntime-web as the runner: one-shot channels / N:M / sparsity, a recipe, or the
// search down to a fidelity floor, scored by magnitude or calibrated, then recovery and quantization
// if asked, then the held-out fidelity.
import * as ort from 'onnxruntime-web/wasm';
import init, { variant } from 'sparsekit-wasm';
import { OnnxModel, dequantizeModel, makeOrtRunner, parseNm, planRecipe, runJob, FloorError, type OrtLike, type CompressResult, type JobReport } from 'sparsekit-wasm/onnx';
import { serve, PlaygroundError } from '../protocol.js';
import type { JobApi } from './api.js';
import { buildJob, needsCalibration } from './job-build.js';
import { jobLayers } from './job-layers.js';
import { jobSamples } from './job-samples.js';

ort.env.wasm.numThreads = 1;
const runner = makeOrtRunner(ort as unknown as OrtLike, { executionProviders: ['wasm'] });
let ready: Promise<void> | null = null;

/** All weights' elements, and the zeros of the prunable ones (what N:M and sparsity add). */
function figures(m: OnnxModel): { params: number; zeros: number } {
  let zeros = 0;
  for (const w of m.prunable()) { const v = m.readFloat(w); for (let i = 0; i < v.length; i++) if (v[i] === 0) zeros++; }
  return { params: m.weights.reduce((a, w) => a + w.numel, 0), zeros };
}

/** The report's note per layer (structured clone keeps none of the report's functions; JSON keeps the figures). */
function layerNotes(report: JobReport | null): Map<string, string> {
  const notes = new Map<string, string>();
  for (const l of report?.prune?.layers ?? []) if (l.note) notes.set(l.name, l.note);
  return notes;
}

/**
 * The model's bytes and its external data. External tensors go to one data file: the name of the
 * original one (so the download pairs as the input did), or `dataName` when the input spread them
 * over several files.
 */
function encodeWithData(model: OnnxModel, dataName: string): { bytes: Uint8Array; external: { path: string; data: Uint8Array }[] } {
  const locs = model.externalLocations;
  if (!locs.length) return { bytes: model.encode(), external: [] };
  const location = locs.length === 1 ? locs[0] : dataName;
  const chunks: Uint8Array[] = [];
  const bytes = model.encode({ location, sink: (b: Uint8Array) => { chunks.push(b.slice()); } });
  const data = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let off = 0;
  for (const c of chunks) { data.set(c, off); off += c.length; }
  return { bytes, external: [{ path: location, data }] };
}

const externalFiles = (files: { path: string; data: Uint8Array }[] | undefined) => Object.fromEntries((files ?? []).map((f) => [f.path, f.data]));

serve<JobApi>({
  async init() {
    await (ready ??= init({ threads: false }));
    return { variant: variant(), cores: navigator.hardwareConcurrency || 1, isolated: !!self.crossOriginIsolated };
  },
  async run(req, ctx) {
    await (ready ??= init({ threads: false }));
    const t0 = performance.now();
    const model = OnnxModel.parse(req.bytes, { externalFiles: externalFiles(req.external) });
    const before = figures(model);
    const needCalibration = needsCalibration(req);
    const samples = await jobSamples(model, req.samples, needCalibration);
    if (needCalibration && !samples.calibration.length) throw new PlaygroundError('invalid_arguments', `${req.recover ? 'recovery' : req.goal === 'layers' ? 'ranking the blocks by influence' : req.method} needs calibration samples: ask for at least one`);
    if ((req.floor !== null || req.recover) && !samples.heldOut.length) throw new PlaygroundError('invalid_arguments', `${req.floor !== null ? 'the fidelity floor' : 'recovery'} is measured on held-out samples: ask for at least one (generated, or your images)`);
    const job = buildJob(req, samples.calibration, samples.heldOut, samples.tokenizer);
    let out: { model: OnnxModel; report: JobReport } | null = null;
    let search: Omit<CompressResult, 'model' | 'report'> | null = null;
    try {
      out = await runJob(model, job, {
        ort: runner, signal: ctx.signal,
        onProgress: (p) => ctx.progress({ phase: p.phase, done: p.done, total: p.total, label: p.label ?? '', epoch: p.epoch, fidelity: p.fidelity }),
      });
      search = out.report.search ?? null;
    } catch (e) {
      // no plan met the floor: the page shows what the search measured, with nothing to download
      if (!(e instanceof FloorError && e.search)) throw e;
      search = e.search;
    }
    const report = out ? JSON.parse(JSON.stringify(out.report)) as JobReport : null;
    const after = out ? figures(out.model) : before;
    const enc = out ? encodeWithData(out.model, req.dataName ?? 'model.pruned.onnx.data') : null;
    const bytes = enc?.bytes ?? null, external = enc?.external ?? [];
    const nm = req.goal === 'nm' ? parseNm(req.nm, 'mode.nm') : null;
    // the view reads the written model back: a quantized result shows its weights as they dequantize
    const written = bytes ? OnnxModel.parse(bytes, { externalFiles: externalFiles(external) }) : null;
    if (written && report?.quantize) dequantizeModel(written);
    // a recipe's setting per layer, as the package resolved it for the run (names, patterns, default)
    const settings = written && req.goal === 'recipe' ? planRecipe(written, req.recipe ?? {}).resolved.settings : null;
    const layers = written ? jobLayers(written, nm, settings, layerNotes(report)) : [];
    if (bytes) ctx.transfer.push(bytes.buffer, ...external.map((f) => f.data.buffer));
    for (const l of layers) ctx.transfer.push(l.data.buffer, l.blockKeep.buffer, l.blockNorms.buffer);
    return {
      bytes, external, report, search: search ? JSON.parse(JSON.stringify(search)) as typeof search : null,
      params: { before: before.params, after: after.params }, zeros: { before: before.zeros, after: after.zeros },
      measuredOn: { images: samples.images, generated: samples.text ? 0 : samples.heldOut.length - samples.images, text: samples.text, calibration: samples.calibration.length },
      layers, ms: performance.now() - t0,
    };
  },
});
