// Module worker of the calibration panel: runs the package's calibration pipeline
// (sparsekit-wasm/onnx calibratePrune) with onnxruntime-web, single-threaded sparsekit-wasm.
import * as ort from 'onnxruntime-web/wasm';
import init from 'sparsekit-wasm';
import { OnnxModel, makeOrtRunner, makeInputSet, calibratePrune, runSet, compareSets } from 'sparsekit-wasm/onnx';

ort.env.wasm.numThreads = 1;
const runner = makeOrtRunner(ort, { executionProviders: ['wasm'] });
const ENGINE = 'sparsekit-wasm (single-threaded SIMD128)';
let ready = null;
let controller = null;

const targetOf = (t) => (t.nm ? { nm: t.nm } : { sparsity: t.sparsity });

async function prune(bytes, msg, criterionFor, signal, onProgress) {
  const model = OnnxModel.parse(bytes);
  const calibration = makeInputSet(model, { count: msg.pages + (msg.images?.length ?? 0), set: 'calibration', normalization: msg.normalization, images: msg.images ?? [] });
  const report = await calibratePrune(model, {
    ort: runner, calibration, sequential: msg.sequential, blockSize: msg.blockSize, percDamp: msg.percDamp,
    criterion: (l) => criterionFor(l) ?? 'dense', ...targetOf(msg.target), signal, onProgress,
  });
  return { model, report };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.type === 'cancel') { controller?.abort(); return; }
  controller = new AbortController();
  const { signal } = controller;
  const progress = (p) => self.postMessage({ type: 'progress', jobId: msg.jobId, ...p });
  try {
    ready ??= init({ threads: false });
    await ready;
    const base = OnnxModel.parse(msg.bytes);
    const heldOut = makeInputSet(base, { count: msg.heldOut, set: 'heldOut', normalization: msg.normalization });
    const reference = await runSet(runner, msg.bytes, heldOut, signal);
    if (msg.type === 'run') {
      const { model, report } = await prune(msg.bytes, msg, (l) => msg.perLayer[l.name] ?? msg.criterion, signal, progress);
      const bytes = model.encode();
      const cmp = compareSets(reference, await runSet(runner, bytes, heldOut, signal));
      self.postMessage({ type: 'result', jobId: msg.jobId, bytes, report, cosine: cmp, engine: ENGINE }, [bytes.buffer]);
    } else if (msg.type === 'compare') {
      const rows = [];
      const criteria = ['magnitude', 'wanda', 'sparsegpt'];
      for (let i = 0; i < criteria.length; i++) {
        const c = criteria[i];
        const { model, report } = await prune(msg.bytes, msg, (l) => (msg.perLayer[l.name] === 'dense' ? 'dense' : c), signal,
          (p) => progress({ ...p, done: i * p.total + p.done, total: p.total * criteria.length, phase: `${c}: ${p.phase}` }));
        const cmp = compareSets(reference, await runSet(runner, model.encode(), heldOut, signal));
        rows.push({ criterion: c, cosine: cmp.cosine, min: cmp.min, layers: report.layers.filter((l) => l.method !== 'dense').length });
      }
      self.postMessage({ type: 'compare-result', jobId: msg.jobId, rows, engine: ENGINE });
    }
  } catch (e) {
    self.postMessage({ type: 'error', jobId: msg.jobId, error: { name: e?.name ?? 'Error', code: e?.code ?? null, message: String(e?.message ?? e) } });
  } finally { controller = null; }
};
