// The playground's default rule (`defaultPlan`, exported by the package) timed on the three
// PaddleOCR models: the plan is computed from all prunable weights at once, so its cost grows
// with the model. Median of 5 runs per model. Usage: node bench/ocr/plan.mjs
import { defaultPlan } from 'sparsekit-wasm';
import { DET, CLS, REC, parseFile } from '../../kit/ocr-models.mjs';

const rows = [];
for (const [label, file] of [['det', DET], ['cls', CLS], ['rec', REC]]) {
  const m = parseFile(file);
  const ws = m.weights.filter((w) => w.prunable).map((w) => ({ dims: w.dims, reduceAxis: w.reduceAxis, op: w.op, data: m.readFloat(w) }));
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    defaultPlan(ws);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const params = ws.reduce((a, w) => a + w.data.length, 0);
  rows.push({ kind: 'plan', model: label, layers: ws.length, params, median_ms: +times[2].toFixed(1), best_ms: +times[0].toFixed(1) });
}
for (const r of rows) console.log(JSON.stringify(r));
