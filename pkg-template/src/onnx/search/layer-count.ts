// The search over whole residual blocks (job mode search, target 'layers'; CLI `--min-fidelity F
// --channels layers:auto`): the blocks ranked once by ShortGPT's measured influence (block-influence.ts),
// then the largest count K of the least influential blocks whose removal keeps the held-out fidelity
// at the floor, each candidate judged as written (a copy with its K blocks removed, run on the
// held-out samples). K grows 1, 2, 4, … until a count misses the floor, then the gap is bisected:
// a decoder of 30 blocks is settled in at most 9 judgements. This assumes fidelity falls as blocks
// go in influence order, as ShortGPT's own removal curves do; a count skipped over by the bisection
// is never judged, and the steps in the report say which were.
import type { OnnxModel } from '../model.js';
import type { ModelRunner } from '../calib/ort-runner.js';
import type { InputSample } from '../calib/inputs.js';
import type { HeldOut } from '../calib/evaluate.js';
import { blockInfluence, leastInfluential, mostRemovable, type BlockInfluence } from '../calib/block-influence.js';
import { findResidualBlocks, removeResidualBlocks } from '../residual-blocks.js';
import { lowerBound } from './fidelity-link.js';
import { OnnxError } from '../errors.js';

/** One judged count: its fidelity (worst output), the lower bound with a confidence, and whether it met the floor. */
export interface LayerCountStep { count: number; fidelity: number; worst: string; bound?: number; pass: boolean }

export interface LayerCountResult {
  /** The model with the chosen blocks removed (a copy), or null when removing even one misses the floor. */
  model: OnnxModel | null;
  influence: BlockInfluence[];
  /** The removed blocks (indices in block order) and the node counts, as the layers mode reports them. */
  removed: { removed: number[]; nodesBefore: number; nodesAfter: number } | null;
  steps: LayerCountStep[];
}

export async function searchLayerCount(model: OnnxModel, opts: {
  runner: ModelRunner; calibration: InputSample[]; held: HeldOut; minFidelity: number; confidence?: number; signal?: AbortSignal;
  onProgress?: (p: { phase: 'influence' | 'verify'; done: number; total: number; label: string }) => void;
}): Promise<LayerCountResult> {
  const { runner, calibration, held, minFidelity, confidence, signal } = opts;
  const blocks = findResidualBlocks(model);
  if (blocks.length < 2) throw new OnnxError('unsupported', `the search over whole blocks needs at least 2 residual blocks (this model has ${blocks.length})`, 'invalid_arguments');
  // a block that cannot go (it writes a graph output) is never chosen: leastInfluential skips it
  const most = mostRemovable(blocks);
  if (most < 1) throw new OnnxError('unsupported', `no residual block of this model can be removed (${blocks.map((b) => `block ${b.index} ${b.why}`).join(', ')})`, 'invalid_arguments');
  opts.onProgress?.({ phase: 'influence', done: 0, total: blocks.length, label: `${blocks.length} blocks` });
  const influence = await blockInfluence(model, runner, calibration, { blocks, signal });
  const steps: LayerCountStep[] = [];
  // the largest count that met the floor so far (the only copy held)
  const best: { count: number; model: OnnxModel | null; removed: LayerCountResult['removed'] } = { count: 0, model: null, removed: null };
  const judge = async (count: number): Promise<boolean> => {
    opts.onProgress?.({ phase: 'verify', done: count, total: most, label: `${count} of ${blocks.length} blocks removed` });
    const m = model.copy();
    const removed = removeResidualBlocks(m, leastInfluential(influence, count), findResidualBlocks(m));
    const f = await held.judge(m, signal);
    const bound = confidence === undefined ? undefined : lowerBound(f, confidence).score;
    const pass = (bound ?? f.score) >= minFidelity;
    steps.push({ count, fidelity: f.score, worst: f.worst, ...(bound === undefined ? {} : { bound }), pass });
    if (pass && count > best.count) Object.assign(best, { count, model: m, removed });
    return pass;
  };
  let good = 0, bad = most + 1;
  for (let k = 1; k <= most; k = Math.min(most, 2 * k)) {
    if (await judge(k)) good = k;
    else { bad = k; break; }
    if (k === most) break;
  }
  while (bad - good > 1) {
    const k = (good + bad) >> 1;
    if (await judge(k)) good = k;
    else bad = k;
  }
  return { model: best.model, influence, removed: best.removed, steps };
}
