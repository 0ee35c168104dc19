// The layers a pruning job leaves dense unless its plan names them: the output head of a language
// model. SparseGPT, Wanda and OWL prune the linear layers inside the decoder blocks and leave the
// embeddings and the head dense — the head makes every token's distribution, and on SmolLM2-135M
// half of its 576 x 49 152 weights removed costs more perplexity than the blocks' own pruning
// (issue 37). The embedding tables are read by Gather, so no pruning mode reaches them.
import { toNum, type OnnxModel } from '../model.js';

/** A layer left dense by default, and why (said in the job's report). */
export interface KeptDense { name: string; why: string }

/** The fewest rows a Gather table needs to count as a vocabulary (token embeddings, not a small lookup). */
const MIN_VOCAB = 256;

/**
 * The linear layers whose outputs number the rows of a table the graph gathers from (a token
 * embedding): the language-model head, tied to the embedding or not.
 */
export function defaultDense(model: OnnxModel): KeptDense[] {
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
