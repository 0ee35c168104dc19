// The block mask heatmap of one layer: kept blocks coloured by (log) norm, pruned blocks grey;
// wheel to zoom, drag to pan, hover to read a block.
import { fmtNum } from '../format.js';
import type { LayerResult } from '../layer-result.js';
import { fitCanvas } from './canvas.js';

// Kept blocks: a blue -> teal -> yellow ramp by log norm (weak -> strong); pruned: light grey.
const RAMP = [[30, 64, 175], [13, 148, 136], [250, 204, 21]];
function ramp(t: number): number[] {
  const x = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x)), f = x - i;
  return RAMP[i].map((a, k) => Math.round(a + (RAMP[i + 1][k] - a) * f));
}
const PRUNED = [226, 232, 240];

export class Heatmap {
  private zoom = 1;
  private ox = 0;
  private oy = 0;
  private cssH = 200;
  private layer: LayerResult | null = null;
  private image: HTMLCanvasElement | null = null;

  constructor(private readonly canvas: HTMLCanvasElement, private readonly tooltip: HTMLElement) {
    canvas.addEventListener('wheel', (e) => { if (!this.layer) return; e.preventDefault(); this.zoomAt(e.offsetX, e.offsetY, e.deltaY < 0 ? 1.25 : 0.8); }, { passive: false });
    canvas.addEventListener('mousemove', (e) => this.hover(e));
    canvas.addEventListener('mouseleave', () => { this.tooltip.hidden = true; });
    let drag: { x: number; y: number; ox: number; oy: number } | null = null;
    canvas.addEventListener('mousedown', (e) => { drag = { x: e.clientX, y: e.clientY, ox: this.ox, oy: this.oy }; });
    window.addEventListener('mouseup', () => { drag = null; });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      this.ox = drag.ox + (e.clientX - drag.x); this.oy = drag.oy + (e.clientY - drag.y); this.draw();
    });
  }

  setLayer(r: LayerResult): void {
    this.layer = r;
    const [gr, gc] = r.grid;
    const img = new ImageData(gc, gr);
    let lo = Infinity, hi = -Infinity;
    for (const v of r.blockNorms) if (v > 0) { const l = Math.log(v); if (l < lo) lo = l; if (l > hi) hi = l; }
    const span = hi > lo ? hi - lo : 1;
    for (let k = 0; k < gr * gc; k++) {
      const v = r.blockNorms[k];
      const c = r.blockKeep[k] ? ramp(v > 0 ? (Math.log(v) - lo) / span : 0) : PRUNED;
      img.data.set([c[0], c[1], c[2], 255], k * 4);
    }
    const off = document.createElement('canvas');
    off.width = gc; off.height = gr;
    off.getContext('2d')!.putImageData(img, 0, 0);
    this.image = off;
    this.fit();
  }

  fit(): void {
    if (!this.layer) return;
    const [gr, gc] = this.layer.grid;
    const w = this.canvas.clientWidth || 600;
    const h = Math.min(420, Math.max(120, Math.round(w * gr / gc)));
    this.cssH = h;
    this.zoom = Math.min(w / gc, h / gr);
    this.ox = (w - gc * this.zoom) / 2; this.oy = (h - gr * this.zoom) / 2;
    this.draw();
  }

  zoomAt(x: number, y: number, f: number): void {
    const z = Math.min(256, Math.max(0.05, this.zoom * f));
    this.ox = x - (x - this.ox) * (z / this.zoom); this.oy = y - (y - this.oy) * (z / this.zoom);
    this.zoom = z; this.draw();
  }

  zoomBy(f: number): void { this.zoomAt((this.canvas.clientWidth || 600) / 2, this.cssH / 2, f); }

  draw(): void {
    const { ctx, w, h } = fitCanvas(this.canvas, this.cssH);
    ctx.fillStyle = '#f8fafc'; ctx.fillRect(0, 0, w, h);
    if (!this.image || !this.layer) return;
    ctx.imageSmoothingEnabled = false;
    const [gr, gc] = this.layer.grid;
    const z = this.zoom;
    ctx.drawImage(this.image, this.ox, this.oy, gc * z, gr * z);
    if (z >= 6) {                                  // grid lines when blocks are big enough
      ctx.strokeStyle = 'rgba(15,23,42,0.15)'; ctx.lineWidth = 1; ctx.beginPath();
      const i0 = Math.max(0, Math.floor(-this.oy / z)), i1 = Math.min(gr, Math.ceil((h - this.oy) / z));
      const j0 = Math.max(0, Math.floor(-this.ox / z)), j1 = Math.min(gc, Math.ceil((w - this.ox) / z));
      for (let i = i0; i <= i1; i++) { const y = Math.round(this.oy + i * z) + 0.5; ctx.moveTo(this.ox + j0 * z, y); ctx.lineTo(this.ox + j1 * z, y); }
      for (let j = j0; j <= j1; j++) { const x = Math.round(this.ox + j * z) + 0.5; ctx.moveTo(x, this.oy + i0 * z); ctx.lineTo(x, this.oy + i1 * z); }
      ctx.stroke();
    }
  }

  private hover(e: MouseEvent): void {
    const r = this.layer;
    if (!r) return;
    const j = Math.floor((e.offsetX - this.ox) / this.zoom), i = Math.floor((e.offsetY - this.oy) / this.zoom);
    const [gr, gc] = r.grid;
    if (i < 0 || j < 0 || i >= gr || j >= gc) { this.tooltip.hidden = true; return; }
    const k = i * gc + j;
    const [bh, bw] = r.block;
    const unit = bh * bw === 1 ? 'element' : 'block';
    this.tooltip.textContent = `${unit} (${i}, ${j}) · rows ${i * bh}–${i * bh + bh - 1}, cols ${j * bw}–${j * bw + bw - 1}\n`
      + `${r.normKind === '|w|' ? '|w|' : 'L2 norm'} ${fmtNum(r.blockNorms[k])} · ${r.blockKeep[k] ? 'kept' : 'pruned'}`;
    this.tooltip.hidden = false;
    const rect = this.canvas.getBoundingClientRect();
    this.tooltip.style.left = `${Math.min(rect.width - 220, e.offsetX + 14)}px`;
    this.tooltip.style.top = `${e.offsetY + 14}px`;
  }
}
