// The label-free fidelity of a pruned model against the original, as the cards show it: the model's
// score is its worst output's (a collapse in one output cannot hide behind a larger one), and every
// output is listed with its kind and its own figures. The cosine stays beside it, second: on a
// mixed output (pixel boxes next to class scores) it reads 0.99 while the decisions are gone.
import { fidelity, type FidelityReport } from 'sparsekit-wasm/onnx';
import type { BenchSide } from './workers/api.js';

/** Fidelity of side `b` against side `a` of one interleaved run (one sample, dims from the run). */
export function benchFidelity(a: BenchSide, b: BenchSide): FidelityReport {
  const shapes = Object.fromEntries(Object.entries(a.shapes).map(([k, v]) => [k, [...v]]));
  return fidelity([a.outputs], [b.outputs], { shapes });
}

const METRIC_LABELS: Record<string, string> = {
  top1Agreement: 'top-1 agreement', top5Agreement: 'top-5 agreement', meanKL: 'mean KL', componentF1: 'region F1',
  iou: 'IoU', stepAgreement: 'step agreement', cerVsOriginal: 'CER vs original', cosine: 'cosine',
  worstChannelRelError: 'worst channel rel. error', f1: 'box F1',
};

/** One line per output: kind, score and the kind's figures. */
export function fidelityList(report: FidelityReport): HTMLUListElement {
  const ul = document.createElement('ul');
  ul.className = 'fidelity-outputs';
  for (const o of report.outputs) {
    const li = document.createElement('li');
    const figures = Object.entries(o.metrics).filter(([k]) => k in METRIC_LABELS)
      .map(([k, v]) => `${METRIC_LABELS[k] ?? k} ${Number.isInteger(v) ? v : v.toFixed(4)}`).join(', ');
    li.textContent = `${o.name} (${o.kind}): ${o.score.toFixed(4)}${figures ? ` — ${figures}` : ''}${o.name === report.worst && report.outputs.length > 1 ? ' · worst' : ''}`;
    li.dataset.kind = o.kind;
    li.dataset.score = String(o.score);
    if (o.detail) li.title = o.detail;
    ul.append(li);
  }
  return ul;
}

/** The tile's sub-line: which output decides the score. */
export const fidelitySub = (report: FidelityReport): string =>
  `worst of ${report.outputs.length} output${report.outputs.length === 1 ? '' : 's'}: ${report.worst} (${report.outputs.find((o) => o.name === report.worst)?.kind ?? '?'})`;
