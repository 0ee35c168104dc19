// "Effect on the model": the original and the pruned model run with onnxruntime-web on the same
// deterministic input, interleaved after a warm-up (a first run pays for allocations and caches, so
// timing it against a later run of the other model measures the order, not the pruning): output
// label-free fidelity per output (the worst output's score leads), cosine and max |Δ| beside it, and
// the median latency of each with its count.
import { $, describeError, showError, statTile } from './dom.js';
import { fmtNum } from './format.js';
import { compareOutputs } from './model-input.js';
import { benchFidelity, fidelityList, fidelitySub } from './fidelity-view.js';
import { state } from './state.js';
import { interleavedRun } from './test-input.js';

/** Timed rounds (original and pruned alternated) after WARMUP discarded rounds. */
export const EFFECT_RUNS = 5;
export const WARMUP = 1;

export async function evaluate(): Promise<void> {
  const box = $('effect');
  const { loaded, run } = state;
  if (!loaded || !run) return;
  box.textContent = `running the original and the pruned model with onnxruntime-web (${WARMUP} warm-up, then ${EFFECT_RUNS} interleaved runs each)…`;
  try {
    const { res, inputs } = await interleavedRun(loaded, run.pruned, EFFECT_RUNS, WARMUP);
    if (state.run !== run) return;                       // a newer run or model replaced this one
    $('eval-input').textContent = `(deterministic input ${inputs.map((i) => `${i.name}: ${i.shape.join('×')}`).join(', ')})`;
    const cmp = compareOutputs(res.a.outputs, res.b.outputs);
    const fid = benchFidelity(res.a, res.b);
    const timing = `median of ${EFFECT_RUNS} runs, interleaved with the other model after ${WARMUP} warm-up`;
    const big = document.createElement('div');
    big.className = 'totals';
    big.append(
      statTile('fidelity (worst output)', fid.score.toFixed(4), 'fidelity', fidelitySub(fid)),
      statTile('cosine similarity', cmp.cosine.toFixed(5), 'cosine'),
      statTile('max |Δ|', fmtNum(cmp.maxAbs), 'max-abs-diff'),
      statTile('inference (original)', `${res.a.medianMs.toFixed(1)} ms`, 'latency-original', timing),
      statTile('inference (pruned)', `${res.b.medianMs.toFixed(1)} ms`, 'latency-pruned', timing),
    );
    box.replaceChildren(big);
    Object.assign(box.dataset, { runs: String(EFFECT_RUNS), warmup: String(WARMUP), input: inputs.map((i) => i.shape.join('x')).join(',') });
    const list = fidelityList(fid);
    for (const [i, o] of cmp.outputs.entries()) list.children[i]?.append(` · cosine ${o.cosine.toFixed(5)}, max |Δ| ${fmtNum(o.maxAbs)}`);
    box.append(list);
  } catch (e) {
    box.textContent = '';
    showError(`Running the models with onnxruntime-web failed: ${describeError(e)}`);
  }
}
