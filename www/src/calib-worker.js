// Module worker of the calibration panel: runs the calibration pipeline (www/src/calib/) with
// onnxruntime-web and sparsekit-wasm (single-threaded build; its Hessian/sparseGpt when present).
import * as ort from 'onnxruntime-web/wasm';
import { OnnxModel } from './onnx-model.js';
import { makeOrtRunner } from './calib/ort-runner.js';
import { makeEngine } from './calib/engine.js';
import { makeInputSet } from './calib/input-sets.js';
import { calibratePrune } from './calib/calibrate.js';
import { runSet, compareSets } from './calib/evaluate.js';

ort.env.wasm.numThreads = 1;
const runner = makeOrtRunner(ort, { executionProviders: ['wasm'] });
let engine = null;
let controller = null;

async function loadEngine(base) {
  if (engine) return engine;
  let sk = null;
  try {
    sk = await import(/* @vite-ignore */ new URL('sparsekit/src/browser.js', base).href);
  } catch {
    sk = await import('sparsekit-wasm');
  }
  await sk.default({ threads: false });
  engine = makeEngine(sk);
  return engine;
}

const targetOf = (t) => (t.nm ? { nm: t.nm } : { sparsity: t.sparsity });

async function prune(bytes, msg, criterionFor, signal, onProgress) {
  const model = OnnxModel.parse(bytes);
  const calibration = makeInputSet(model, { count: msg.pages + (msg.images?.length ?? 0), set: 'calibration', normalization: msg.normalization, images: msg.images ?? [] });
  const report = await calibratePrune({ model, runner, engine, calibration, sequential: msg.sequential, blockSize: msg.blockSize, percDamp: msg.percDamp,
    plan: (l) => { const c = criterionFor(l); return c && c !== 'dense' ? { criterion: c, ...targetOf(msg.target) } : null; }, signal, onProgress });
  return { model, report };
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  if (msg.type === 'cancel') { controller?.abort(); return; }
  controller = new AbortController();
  const { signal } = controller;
  const progress = (p) => self.postMessage({ type: 'progress', jobId: msg.jobId, ...p });
  try {
    await loadEngine(msg.base);
    const base = OnnxModel.parse(msg.bytes);
    const heldOut = makeInputSet(base, { count: msg.heldOut, set: 'heldOut', normalization: msg.normalization });
    const reference = await runSet(runner, msg.bytes, heldOut, signal);
    if (msg.type === 'run') {
      const { model, report } = await prune(msg.bytes, msg, (l) => msg.perLayer[l.name] ?? msg.criterion, signal, progress);
      const bytes = model.encode();
      const cmp = compareSets(reference, await runSet(runner, bytes, heldOut, signal));
      self.postMessage({ type: 'result', jobId: msg.jobId, bytes, report, cosine: cmp, engine: engine.name }, [bytes.buffer]);
    } else if (msg.type === 'compare') {
      const rows = [];
      const criteria = ['magnitude', 'wanda', 'sparsegpt'];
      for (let i = 0; i < criteria.length; i++) {
        const c = criteria[i];
        const { model, report } = await prune(msg.bytes, msg, (l) => (msg.perLayer[l.name] === 'dense' ? 'dense' : c), signal,
          (p) => progress({ ...p, done: i * p.total + p.done, total: p.total * criteria.length, phase: `${c}: ${p.phase}` }));
        const cmp = compareSets(reference, await runSet(runner, model.encode(), heldOut, signal));
        rows.push({ criterion: c, cosine: cmp.cosine, min: cmp.min, layers: report.layers.filter((l) => l.used !== 'dense').length });
      }
      self.postMessage({ type: 'compare-result', jobId: msg.jobId, rows, engine: engine.name });
    }
  } catch (e) {
    self.postMessage({ type: 'error', jobId: msg.jobId, error: { name: e?.name ?? 'Error', code: e?.code ?? null, message: String(e?.message ?? e) } });
  } finally { controller = null; }
};
