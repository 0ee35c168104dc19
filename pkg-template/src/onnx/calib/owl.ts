// Outlier-weighted layerwise sparsity (OWL, Yin et al. 2023, "Outlier Weighed Layerwise Sparsity"):
// layers that hold more outlier features get less sparsity. A weight is an outlier when its Wanda
// score |W_ij|·‖x_j‖ exceeds M times its layer's mean score; a layer's outlier ratio D_l is the
// share of such weights. The ratios are mapped linearly onto keep-ratios spanning 2λ, centred so
// that the model keeps 1 - S of its prunable weights. The paper allocates per decoder block with
// equal block sizes (a plain mean); here each linear layer gets its own ratio and the centring is
// weighted by the layers' sizes, so the total sparsity is S whatever the layers' shapes. The
// statistics are one pass over the dense model, the inputs' norms only (what Wanda reads).
import type { OnnxModel } from '../model.js';
import { OnnxError } from '../errors.js';
import { findLayers, type CalibLayer } from './layers.js';
import { normScores, viewValues } from './layer-prune.js';
import { SharedStats } from './shared-stats.js';
import { Sweep } from './sweep.js';
import { asF32 } from './tensor.js';
import type { ModelRunner } from './ort-runner.js';
import type { InputSample } from './inputs.js';

/** OWL's two settings: the outlier threshold M (times the layer's mean score) and the half-width λ of the ratios' range. */
export interface OwlOptions { m?: number; lambda?: number }

/** The paper's settings for LLaMA (M = 5, λ = 0.08). */
export const OWL_DEFAULTS = { m: 5, lambda: 0.08 } as const;

/** One layer's share of outliers and the sparsity it gets. */
export interface OwlLayer { name: string; outlierRatio: number; sparsity: number }

/**
 * Per-layer sparsities with mean `sparsity` (weighted by size) for the layers `include` accepts,
 * from their outlier ratios on the calibration samples. Layers without statistics (no capture, a
 * Conv) keep the uniform `sparsity`.
 */
export async function owlSparsities(model: OnnxModel, p: {
  runner: ModelRunner; calibration: InputSample[]; sparsity: number; include?: (l: CalibLayer) => boolean; options?: OwlOptions;
}): Promise<OwlLayer[]> {
  const m = p.options?.m ?? OWL_DEFAULTS.m, lambda = p.options?.lambda ?? OWL_DEFAULTS.lambda;
  if (!(Number.isFinite(m) && m > 0)) throw new OnnxError('unsupported', `OWL's m must be a positive number (got ${m})`, 'invalid_arguments');
  if (!(Number.isFinite(lambda) && lambda >= 0 && lambda < 0.5)) throw new OnnxError('unsupported', `OWL's lambda must be in [0, 0.5) (got ${lambda})`, 'invalid_arguments');
  const layers = findLayers(model).filter((l) => (p.include ? p.include(l) : true));
  const rows = layers.filter((l) => l.stats === 'rows');
  const stats = new SharedStats(rows, true, () => true);
  const ratio = new Map<CalibLayer, number>();
  try {
    await new Sweep(model, p.runner, p.calibration).capture(stats.inputs(), (name, t) => stats.add(name, asF32(t), t.dims), { hold: false });
    for (const l of rows) {
      const scores = normScores(viewValues(model.readFloat(l.weight), l), l.rows, l.cols, stats.get(l)!.norms!);
      let sum = 0;
      for (let i = 0; i < scores.length; i++) sum += scores[i];
      const cut = m * (sum / scores.length);
      let out = 0;
      for (let i = 0; i < scores.length; i++) if (scores[i] > cut) out++;
      ratio.set(l, out / scores.length);
    }
  } finally {
    stats.free();
  }
  const ds = [...ratio.values()];
  const lo = Math.min(...ds), hi = Math.max(...ds);
  // Keep-ratios spanning 2λ (all equal when every layer has the same outlier share), centred on 1 - S by size.
  const spread = new Map([...ratio].map(([l, d]) => [l, hi > lo ? ((d - lo) / (hi - lo)) * 2 * lambda : 0]));
  const total = [...spread.keys()].reduce((a, l) => a + l.weight.numel, 0);
  const mean = total ? [...spread].reduce((a, [l, v]) => a + v * l.weight.numel, 0) / total : 0;
  return layers.map((l) => {
    const v = spread.get(l);
    const s = v === undefined ? p.sparsity : Math.min(1, Math.max(0, p.sparsity - (v - mean)));
    return { name: l.name, outlierRatio: ratio.get(l) ?? NaN, sparsity: s };
  });
}
