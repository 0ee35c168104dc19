// The block-norm histogram of a layer and the per-layer sparsity bars.
import { fmtNum } from '../format.js';
import type { LayerResult } from '../layer-result.js';
import { fitCanvas } from './canvas.js';

/** Histogram of block norms (kept blue, pruned grey) with the threshold(s) drawn in red. */
export function drawHistogram(canvas: HTMLCanvasElement, r: LayerResult): void {
  const { ctx, w, h } = fitCanvas(canvas, 180);
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
  const v = r.blockNorms;
  if (!v.length) return;
  let lo = Infinity;
  for (const x of v) if (x < lo) lo = x;
  const sorted = Float32Array.from(v).sort();
  let hi = Math.max(sorted[Math.floor(0.995 * (sorted.length - 1))], ...r.thresholds.map((t) => t * 1.05));
  if (!(hi > lo)) hi = lo + 1;
  const bins = 60;
  const kept = new Float64Array(bins), pruned = new Float64Array(bins);
  for (let k = 0; k < v.length; k++) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(((v[k] - lo) / (hi - lo)) * bins)));
    (r.blockKeep[k] ? kept : pruned)[b]++;
  }
  let max = 1;
  for (let b = 0; b < bins; b++) max = Math.max(max, kept[b] + pruned[b]);
  const pad = { l: 36, r: 8, t: 8, b: 24 };
  const pw = w - pad.l - pad.r, ph = h - pad.t - pad.b, bw = pw / bins;
  for (let b = 0; b < bins; b++) {
    const x = pad.l + b * bw;
    const hp = (pruned[b] / max) * ph, hk = (kept[b] / max) * ph;
    ctx.fillStyle = '#cbd5e1'; ctx.fillRect(x, pad.t + ph - hp, Math.max(1, bw - 1), hp);
    ctx.fillStyle = '#2563eb'; ctx.fillRect(x, pad.t + ph - hp - hk, Math.max(1, bw - 1), hk);
  }
  ctx.fillStyle = '#475569'; ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'left'; ctx.fillText(fmtNum(lo), pad.l, h - 6);
  ctx.textAlign = 'right'; ctx.fillText(fmtNum(hi), w - pad.r, h - 6);
  ctx.fillText(String(max), pad.l - 4, pad.t + 10);
  ctx.textAlign = 'center'; ctx.fillText(r.normKind === '|w|' ? '|w|' : 'block L2 norm', pad.l + pw / 2, h - 6);
  ctx.strokeStyle = '#dc2626'; ctx.lineWidth = 2; ctx.setLineDash([5, 3]);
  const xOf = (t: number) => pad.l + ((t - lo) / (hi - lo)) * pw;
  for (const t of r.thresholds) { ctx.beginPath(); ctx.moveTo(xOf(t), pad.t); ctx.lineTo(xOf(t), pad.t + ph); ctx.stroke(); }
  ctx.setLineDash([]);
  if (r.thresholds.length === 1) {
    ctx.fillStyle = '#dc2626'; ctx.textAlign = 'left';
    ctx.fillText(`threshold ${fmtNum(r.thresholds[0])}`, Math.min(xOf(r.thresholds[0]) + 4, w - 110), pad.t + 12);
  }
}

/** Where the bars are: the first bar's top and the row height (for clicks). */
export interface BarGeometry { row: number; top: number }

/** One horizontal bar per layer: its sparsity; the selected layer highlighted. */
export function drawSparsityBars(canvas: HTMLCanvasElement, results: LayerResult[], selectedId: number | null): BarGeometry {
  const row = 14;
  const { ctx, w, h } = fitCanvas(canvas, Math.max(40, results.length * row + 24));
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
  const label = Math.min(260, Math.round(w * 0.4));
  const pw = w - label - 60;
  ctx.font = '11px ui-monospace, monospace'; ctx.textBaseline = 'middle';
  results.forEach((r, i) => {
    const y = 4 + i * row;
    if (r.id === selectedId) { ctx.fillStyle = '#e0e7ff'; ctx.fillRect(0, y, w, row); }
    ctx.fillStyle = '#0f172a'; ctx.textAlign = 'right';
    ctx.fillText(r.name.length > 34 ? '…' + r.name.slice(-33) : r.name, label - 6, y + row / 2);
    ctx.fillStyle = '#e2e8f0'; ctx.fillRect(label, y + 2, pw, row - 4);
    ctx.fillStyle = r.criterion === 'nm' ? '#7c3aed' : r.global ? '#0891b2' : r.criterion === 'none' ? '#94a3b8' : '#2563eb';
    ctx.fillRect(label, y + 2, pw * r.sparsity, row - 4);
    ctx.fillStyle = '#0f172a'; ctx.textAlign = 'left';
    ctx.fillText(`${(r.sparsity * 100).toFixed(1)}%`, label + pw + 6, y + row / 2);
  });
  const x50 = label + pw * 0.5 + 0.5;
  ctx.strokeStyle = 'rgba(220,38,38,0.5)'; ctx.beginPath(); ctx.moveTo(x50, 0); ctx.lineTo(x50, results.length * row + 4); ctx.stroke();
  ctx.fillStyle = '#64748b'; ctx.textAlign = 'center'; ctx.fillText('50%', x50, results.length * row + 14);
  return { row, top: 4 };
}
