// Canvas views: the block mask heatmap (zoom, pan, hover), the block-norm histogram and the
// per-layer sparsity bars.

// Kept blocks: a blue -> teal -> yellow ramp by log norm (weak -> strong); pruned: light grey.
const RAMP = [[30, 64, 175], [13, 148, 136], [250, 204, 21]];
function ramp(t) {
  const x = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
  return RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
}
const PRUNED = [226, 232, 240];

function fitCanvas(canvas, cssHeight) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || canvas.parentElement.clientWidth || 600;
  const h = cssHeight ?? canvas.clientHeight ?? 200;
  canvas.style.height = `${h}px`;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return { ctx, w, h };
}

/** Heatmap of a block grid: kept blocks coloured by (log) norm, pruned blocks grey. */
export class Heatmap {
  constructor(canvas, tooltip, onInfo) {
    this.canvas = canvas; this.tooltip = tooltip; this.onInfo = onInfo;
    this.zoom = 1; this.ox = 0; this.oy = 0; this.layer = null; this.image = null;
    canvas.addEventListener('wheel', (e) => { if (!this.layer) return; e.preventDefault(); this.zoomAt(e.offsetX, e.offsetY, e.deltaY < 0 ? 1.25 : 0.8); }, { passive: false });
    canvas.addEventListener('mousemove', (e) => this.#hover(e));
    canvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
    let drag = null;
    canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, y: e.clientY, ox: this.ox, oy: this.oy }; });
    window.addEventListener('mouseup', () => { drag = null; });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      this.ox = drag.ox + (e.clientX - drag.x); this.oy = drag.oy + (e.clientY - drag.y); this.draw();
    });
  }

  setLayer(r) {
    this.layer = r;
    const [gr, gc] = r.grid;
    const img = new ImageData(gc, gr);
    let lo = Infinity, hi = -Infinity;
    for (let k = 0; k < r.blockNorms.length; k++) {
      const v = r.blockNorms[k];
      if (v > 0) { const l = Math.log(v); if (l < lo) lo = l; if (l > hi) hi = l; }
    }
    const span = hi > lo ? hi - lo : 1;
    for (let k = 0; k < gr * gc; k++) {
      let c = PRUNED;
      if (r.blockKeep[k]) {
        const v = r.blockNorms[k];
        const t = v > 0 ? (Math.log(v) - lo) / span : 0;
        c = ramp(t);
      }
      img.data.set([c[0], c[1], c[2], 255], k * 4);
    }
    const off = document.createElement('canvas');
    off.width = gc; off.height = gr;
    off.getContext('2d').putImageData(img, 0, 0);
    this.image = off;
    this.fit();
  }

  fit() {
    if (!this.layer) return;
    const [gr, gc] = this.layer.grid;
    const w = this.canvas.clientWidth || 600;
    const h = Math.min(420, Math.max(120, Math.round(w * gr / gc)));
    this.cssH = h;
    this.zoom = Math.min(w / gc, h / gr);
    this.ox = (w - gc * this.zoom) / 2; this.oy = (h - gr * this.zoom) / 2;
    this.draw();
  }

  zoomAt(x, y, f) {
    const z = Math.min(256, Math.max(0.05, this.zoom * f));
    this.ox = x - (x - this.ox) * (z / this.zoom); this.oy = y - (y - this.oy) * (z / this.zoom);
    this.zoom = z; this.draw();
  }

  zoomBy(f) { const w = this.canvas.clientWidth || 600; this.zoomAt(w / 2, (this.cssH || 200) / 2, f); }

  draw() {
    const { ctx, w, h } = fitCanvas(this.canvas, this.cssH || 200);
    ctx.fillStyle = '#f8fafc'; ctx.fillRect(0, 0, w, h);
    if (!this.image) return;
    ctx.imageSmoothingEnabled = false;
    const [gr, gc] = this.layer.grid;
    ctx.drawImage(this.image, this.ox, this.oy, gc * this.zoom, gr * this.zoom);
    if (this.zoom >= 6) {                                  // grid lines when blocks are big enough
      ctx.strokeStyle = 'rgba(15,23,42,0.15)'; ctx.lineWidth = 1; ctx.beginPath();
      const i0 = Math.max(0, Math.floor(-this.oy / this.zoom)), i1 = Math.min(gr, Math.ceil((h - this.oy) / this.zoom));
      const j0 = Math.max(0, Math.floor(-this.ox / this.zoom)), j1 = Math.min(gc, Math.ceil((w - this.ox) / this.zoom));
      for (let i = i0; i <= i1; i++) { const y = Math.round(this.oy + i * this.zoom) + 0.5; ctx.moveTo(this.ox + j0 * this.zoom, y); ctx.lineTo(this.ox + j1 * this.zoom, y); }
      for (let j = j0; j <= j1; j++) { const x = Math.round(this.ox + j * this.zoom) + 0.5; ctx.moveTo(x, this.oy + i0 * this.zoom); ctx.lineTo(x, this.oy + i1 * this.zoom); }
      ctx.stroke();
    }
  }

  #hover(e) {
    const r = this.layer;
    if (!r) return;
    const j = Math.floor((e.offsetX - this.ox) / this.zoom), i = Math.floor((e.offsetY - this.oy) / this.zoom);
    const [gr, gc] = r.grid;
    if (i < 0 || j < 0 || i >= gr || j >= gc) { this.tooltip.hidden = true; return; }
    const k = i * gc + j;
    const [bh, bw] = r.block;
    const unit = bh * bw === 1 ? 'element' : 'block';
    const text = `${unit} (${i}, ${j}) · rows ${i * bh}–${i * bh + bh - 1}, cols ${j * bw}–${j * bw + bw - 1}\n`
      + `${r.normKind === '|w|' ? '|w|' : 'L2 norm'} ${fmtNum(r.blockNorms[k])} · ${r.blockKeep[k] ? 'kept' : 'pruned'}`;
    this.tooltip.textContent = text;
    this.tooltip.hidden = false;
    const rect = this.canvas.getBoundingClientRect();
    this.tooltip.style.left = `${Math.min(rect.width - 220, e.offsetX + 14)}px`;
    this.tooltip.style.top = `${e.offsetY + 14}px`;
    this.onInfo?.(text);
  }
}

export function fmtNum(x) {
  if (x === 0) return '0';
  const a = Math.abs(x);
  return a >= 1000 || a < 1e-3 ? x.toExponential(3) : x.toPrecision(4);
}

/** Histogram of block norms (kept blue, pruned grey) with the threshold(s) drawn in red. */
export function drawHistogram(canvas, r) {
  const { ctx, w, h } = fitCanvas(canvas, 180);
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
  const v = r.blockNorms;
  if (!v.length) return;
  let lo = Infinity, hi = -Infinity;
  for (const x of v) { if (x < lo) lo = x; if (x > hi) hi = x; }
  const sorted = Float32Array.from(v).sort();
  hi = Math.max(sorted[Math.floor(0.995 * (sorted.length - 1))], ...r.thresholds.map((t) => t * 1.05));
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
  for (const t of r.thresholds) {
    const x = pad.l + ((t - lo) / (hi - lo)) * pw;
    ctx.beginPath(); ctx.moveTo(x, pad.t); ctx.lineTo(x, pad.t + ph); ctx.stroke();
  }
  ctx.setLineDash([]);
  if (r.thresholds.length === 1) {
    ctx.fillStyle = '#dc2626'; ctx.textAlign = 'left';
    const x = pad.l + ((r.thresholds[0] - lo) / (hi - lo)) * pw;
    ctx.fillText(`threshold ${fmtNum(r.thresholds[0])}`, Math.min(x + 4, w - 110), pad.t + 12);
  }
}

/** One horizontal bar per layer: its sparsity; click selects a layer. Returns the row height. */
export function drawSparsityBars(canvas, results, selectedId) {
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
    const name = r.name.length > 34 ? '…' + r.name.slice(-33) : r.name;
    ctx.fillText(name, label - 6, y + row / 2);
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
