// The layers a pruning job leaves dense unless its plan names them: the output head of a language
// model. SparseGPT, Wanda and OWL prune the linear layers inside the decoder blocks and leave the
// embeddings and the head dense — the head makes every token's distribution, and on SmolLM2-135M
// half of its 576 x 49 152 weights removed costs more perplexity than the blocks' own pruning
// (issue 37). The embedding tables are read by Gather, so no pruning mode reaches them.
// And a fixed projection 0, 1, ..., C-1: YOLOv8's DFL, the expected value of each box side's
// distribution over C bins (Li et al. 2020, "Generalized Focal Loss"; ultralytics' nn/modules/block.py
// DFL sets that 1x1 conv's weight to arange(C) and never trains it). It is arithmetic, not a learned
// weight: 2:4 on it zeroes half the bins and every box moves, which no calibration can compensate
// (bench/RESULTS.md, "Issue 38: a YOLOv8n trained here").
import { toNum, type OnnxModel } from '../model.js';

/** A layer left dense by default, and why (said in the job's report). */
export interface KeptDense { name: string; why: string }

/** The fewest rows a Gather table needs to count as a vocabulary (token embeddings, not a small lookup). */
const MIN_VOCAB = 256;

/** Every layer a sparsity / N:M job leaves dense by default: language-model heads, fixed projections. */
export function defaultDense(model: OnnxModel): KeptDense[] {
  return [...lmHeads(model), ...fixedProjections(model)];
}

/**
 * Conv weights [1, C, 1, 1] (C >= 2) holding exactly 0, 1, ..., C-1: the expected value of a
 * distribution over C bins (YOLOv8's DFL).
 */
export function fixedProjections(model: OnnxModel): KeptDense[] {
  return model.prunable()
    .filter((w) => w.op === 'Conv' && w.dims.length === 4 && w.dims[0] === 1 && w.dims[1] >= 2 && w.dims[2] === 1 && w.dims[3] === 1)
    .filter((w) => model.readFloat(w).every((v, i) => v === i))
    .map((w) => ({ name: w.name, why: `fixed projection 0..${w.dims[1] - 1}: YOLOv8's DFL, the expected value over ${w.dims[1]} bins, arithmetic and not a learned weight; left dense` }));
}

/**
 * The linear layers whose outputs number the rows of a table the graph gathers from (a token
 * embedding): the language-model head, tied to the embedding or not.
 */
export function lmHeads(model: OnnxModel): KeptDense[] {
  const constants = model.constants();
  const vocab = new Set<number>();
  for (const n of model.graph.node) {
    if (n.op_type !== 'Gather') continue;
    const t = constants.get(n.input[0])?.tensor;
    if (t && t.dims.length === 2 && toNum(t.dims[0]) >= MIN_VOCAB) vocab.add(toNum(t.dims[0]));
  }
  if (!vocab.size) return [];
  return model.prunable()
    .filter((w) => vocab.has(w.view!.rows))
    .map((w) => ({ name: w.name, why: `language-model head (${w.view!.rows} outputs, the rows of a token embedding): left dense, as SparseGPT and Wanda leave it` }));
}
