// Input statistics shared by the layers that read the same tensor the same way: q / k / v of an
// attention block, gate / up of a SwiGLU MLP, the convolutions of a CNN that read one feature map
// with one geometry. XᵀX depends only on the input and on how it is turned into vectors (rows, or
// the Conv patches of one kernel / stride / dilation / padding, per group), never on the weight, so
// one accumulation serves every consumer; SparseGPT's reference (github.com/IST-DASLab/sparsegpt,
// `add_batch` per layer) accumulates one per layer instead, which costs the same XᵀX once per
// consumer. Sharing is safe because nothing downstream changes a Hessian: the core's sparse_gpt
// damps and factors its own f64 copy (src/calib/sparsegpt.rs, `h.matrix_f64()`), and wandaScores /
// relReconError only read it.
import * as sk from 'sparsekit-wasm';
import type { CalibLayer } from './layers.js';
import type { LayerStats } from './layer-prune.js';

/** What sharing saved: Hessians accumulated, and what one per consumer would have cost. */
export interface SharingStats {
  /** Layers given statistics. */
  consumers: number;
  /** Distinct statistics accumulated (one per input and vector kind). */
  accumulated: number;
  /** Multiply-adds of the XᵀX updates done, and those one Hessian per layer would have done. */
  flops: number;
  flopsUnshared: number;
}

/**
 * The identity of a layer's statistics: its input tensor and how that becomes vectors. Layers with
 * the same key get the same Hessian (bit for bit what each would accumulate alone: the same
 * vectors added in the same order).
 */
export function statsKey(l: CalibLayer): string {
  const c = l.conv;
  // Unset fields stay distinct from explicit defaults: at worst two equal geometries do not share.
  const geom = c ? [c.kernelShape, c.strides, c.dilations, c.pads].map((v) => (v ? v.join(',') : '-')).join('/') : '';
  return `${l.input}\u0000${l.stats}\u0000${l.cols}\u0000${l.group}\u0000${geom}`;
}

/** Adds an (N, C, H, W) input to one Hessian per Conv group (each sees only its C/G channels). */
function addGrouped(hs: sk.Hessian[], x: Float32Array, [N, C, H, W]: number[], conv: sk.ConvGeometry) {
  const G = hs.length, Cg = C / G, plane = Cg * H * W;
  const slice = new Float32Array(N * plane);
  hs.forEach((h, g) => {
    for (let n = 0; n < N; n++) slice.set(x.subarray((n * C + g * Cg) * H * W, (n * C + g * Cg) * H * W + plane), n * plane);
    h.addConv(slice, [N, Cg, H, W], conv);
  });
}

interface Entry { layer: CalibLayer; stats: LayerStats; consumers: number }

/**
 * The statistics of a set of layers, one accumulation per distinct key. `shared: false` gives
 * every layer its own (the reference behaviour, kept for the bit-for-bit test and the bench).
 */
export class SharedStats {
  private readonly byKey = new Map<string, Entry>();
  private readonly ofLayer = new Map<CalibLayer, Entry>();
  /** Per captured tensor name: the entries that read it. */
  private readonly byInput = new Map<string, Entry[]>();
  readonly sharing: SharingStats = { consumers: 0, accumulated: 0, flops: 0, flopsUnshared: 0 };

  /**
   * `normsOnly(l)`: the layer reads only its inputs' norms (Wanda on the rows of a MatMul / Gemm), so
   * it gets those instead of a Hessian; the patches of a Conv still go through the Hessian's diagonal.
   */
  constructor(layers: CalibLayer[], shared = true, normsOnly: (l: CalibLayer) => boolean = () => false) {
    try {
      for (const l of layers) {
        if (!l.stats) continue;
        const norms = l.stats === 'rows' && normsOnly(l);
        const key = `${norms ? 'norms' : 'xtx'}\u0000${shared ? statsKey(l) : `${l.index}`}`;
        let e = this.byKey.get(key);
        if (!e) {
          e = { layer: l, consumers: 0, stats: l.stats === 'grouped' ? { groups: [] } : {} };
          // Registered before allocating, so free() releases what a failed allocation leaves.
          this.byKey.set(key, e);
          if (norms) e.stats.norms = { sumSq: new Float64Array(l.cols), count: 0 };
          else if (e.stats.groups) for (let g = 0; g < l.group; g++) e.stats.groups.push(new sk.Hessian(l.cols));
          else e.stats.h = new sk.Hessian(l.cols);
          (this.byInput.get(l.input) ?? this.byInput.set(l.input, []).get(l.input)!).push(e);
          this.sharing.accumulated++;
        }
        e.consumers++;
        this.ofLayer.set(l, e);
        this.sharing.consumers++;
      }
    } catch (err) { this.free(); throw err; }
  }

  /** The tensors to capture. */
  inputs(): string[] { return [...this.byInput.keys()]; }

  /** A layer's statistics (the same object for layers that share them), or undefined without. */
  get(l: CalibLayer): LayerStats | undefined { return this.ofLayer.get(l)?.stats; }

  /** Adds one captured value of tensor `name` (dims as onnxruntime gave them) to every statistic reading it. */
  add(name: string, x: Float32Array, dims: readonly number[]): void {
    for (const e of this.byInput.get(name) ?? []) {
      const l = e.layer, s = e.stats;
      if (s.norms) {
        const c = l.cols, n = x.length / c, sq = s.norms.sumSq;
        for (let r = 0; r < n; r++) for (let j = 0; j < c; j++) { const v = x[r * c + j]; sq[j] += v * v; }
        s.norms.count += n;
        // v vectors of width c: v·c multiply-adds, against v·c·(c+1)/2 for a Hessian
        this.sharing.flops += n * c;
        this.sharing.flopsUnshared += n * c * e.consumers;
        continue;
      }
      const before = this.count(s);
      if (l.stats === 'conv') s.h!.addConv(x, dims as number[], l.conv!);
      else if (l.stats === 'grouped') addGrouped(s.groups!, x, dims as number[], l.conv!);
      else s.h!.addRows(x, x.length / l.cols);
      // An update of v vectors of width c costs v·c·(c+1)/2 multiply-adds (the symmetric half).
      const colsPer = l.cols, work = (this.count(s) - before) * colsPer * (colsPer + 1) / 2;
      this.sharing.flops += work;
      this.sharing.flopsUnshared += work * e.consumers;
    }
  }

  private count(s: LayerStats): number {
    return (s.groups ?? [s.h!]).reduce((a, h) => a + h.count, 0);
  }

  /** Releases every Hessian once (wasm memory), however many layers shared it. */
  free(): void {
    for (const e of this.byKey.values()) for (const h of e.stats.groups ?? (e.stats.h ? [e.stats.h] : [])) h.free();
    this.byKey.clear();
    this.ofLayer.clear();
    this.byInput.clear();
  }
}
