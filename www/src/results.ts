// The results card: totals over all layers, the per-layer sparsity bars, and the selected layer's
// mask heatmap, block-norm histogram and details.
import { $, select, statTile } from './dom.js';
import { fmtBytes, fmtInt, pct } from './format.js';
import { Heatmap } from './render/heatmap.js';
import { drawHistogram, drawSparsityBars, type BarGeometry } from './render/charts.js';
import { state } from './state.js';
import type { LayerResult } from './layer-result.js';

let heatmap: Heatmap | null = null;
let barGeo: BarGeometry | null = null;

export interface Totals { params: number; nnz: number; dense: number; csr: number; bsr: number; nm24: number; nm24Layers: number; sparsity: number }

export function totals(results: LayerResult[]): Totals {
  const t = { params: 0, nnz: 0, dense: 0, csr: 0, bsr: 0, nm24: 0, nm24Layers: 0, sparsity: 0 };
  for (const r of results) {
    t.params += r.numel; t.nnz += r.nnz; t.dense += r.bytes.dense; t.csr += r.bytes.csr; t.bsr += r.bytes.bsr;
    if (r.bytes.nm24 != null) { t.nm24 += r.bytes.nm24; t.nm24Layers++; } else t.nm24 += r.bytes.dense;
  }
  t.sparsity = t.params ? 1 - t.nnz / t.params : 0;
  return t;
}

export function renderResults(): void {
  const results = state.run?.results;
  if (!results) return;
  $('results-card').hidden = false;
  const t = totals(results);
  const box = $('totals');
  box.replaceChildren(
    statTile('total sparsity', pct(t.sparsity), 'total-sparsity', `over ${results.length} prunable weights`),
    statTile('parameters', fmtInt(t.params)),
    statTile('non-zeros', fmtInt(t.nnz)),
    statTile('dense', fmtBytes(t.dense), null, 'float32'),
    statTile('CSR', fmtBytes(t.csr), null, `${(t.csr / t.dense * 100).toFixed(0)}% of dense`),
    statTile('BSR', fmtBytes(t.bsr), null, `${(t.bsr / t.dense * 100).toFixed(0)}% of dense`),
    statTile('2:4 form', fmtBytes(t.nm24), null, `${t.nm24Layers}/${results.length} layers 2:4; others dense`),
  );
  for (const r of results) {
    const cell = state.layers[r.id].row?.querySelector('.result');
    if (!cell) continue;
    cell.textContent = pct(r.sparsity);
    (cell as HTMLElement).title = [`${r.pattern}${r.global ? ' (global)' : ''}`, ...r.notes].join('\n');
    cell.classList.toggle('noted', r.notes.length > 0);
  }
  select('layer-select').replaceChildren(...results.map((r) => new Option(`${r.name} · ${pct(r.sparsity)}`, String(r.id))));
  const first = results.find((r) => r.id === state.selected) ?? results.find((r) => r.criterion !== 'none') ?? results[0];
  selectLayer(first.id);
}

export function selectLayer(id: number): void {
  const r = state.run?.results.find((x) => x.id === id);
  if (!r) return;
  state.selected = r.id;
  select('layer-select').value = String(r.id);
  const meta = $('layer-meta');
  meta.replaceChildren();
  const line = (text: string, cls?: string) => { const p = document.createElement('div'); p.textContent = text; if (cls) p.className = cls; meta.append(p); };
  const scope = r.criterion === 'hard' ? ` · scope ${r.scope}` : '';
  line(`${r.dims.join('×')} viewed as ${r.rows}×${r.cols} · ${r.pattern}${scope}`);
  line(`${r.criterion === 'nm' ? 'elements' : 'blocks'} kept ${fmtInt(r.blocksKept)} / ${fmtInt(r.blocksTotal)} · sparsity ${pct(r.sparsity)} · ${fmtInt(r.nnz)} non-zeros · CSR ${fmtBytes(r.bytes.csr)} · BSR(${r.bytes.bsrBlock.join('x')}) ${fmtBytes(r.bytes.bsr)}${r.bytes.nm24 != null ? ` · 2:4 ${fmtBytes(r.bytes.nm24)}` : ''}`);
  for (const n of r.notes) line(`note: ${n}`, 'note');
  heatmap ??= new Heatmap($<HTMLCanvasElement>('heatmap'), $('tooltip'));
  heatmap.setLayer(r);
  drawHistogram($<HTMLCanvasElement>('histogram'), r);
  drawBars();
}

function drawBars(): void {
  if (state.run) barGeo = drawSparsityBars($<HTMLCanvasElement>('bars'), state.run.results, state.selected);
}

/** A click on the bars selects the layer of the bar under it. */
export function onBarsClick(e: MouseEvent): void {
  const results = state.run?.results;
  if (!results || !barGeo) return;
  const i = Math.floor((e.offsetY - barGeo.top) / barGeo.row);
  if (i >= 0 && i < results.length) selectLayer(results[i].id);
}

export const zoom = {
  by(f: number) { heatmap?.zoomBy(f); },
  fit() { heatmap?.fit(); },
};

/** Redraws the canvases at the new width. */
export function redraw(): void {
  const r = state.run?.results.find((x) => x.id === state.selected);
  if (!r) return;
  heatmap?.fit();
  drawHistogram($<HTMLCanvasElement>('histogram'), r);
  drawBars();
}
