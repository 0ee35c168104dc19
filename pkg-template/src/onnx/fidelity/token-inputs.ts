// The token ids and attention mask of the samples a text model's outputs were computed on: the
// targets of next-token perplexity and the positions that count (padding does not). Read from the
// held-out InputSamples' feeds by their Hugging Face names.

/** A feed as the fidelity module reads it (an InputSample's FeedTensor fits). */
export interface TokenFeed { data: ArrayLike<number | bigint>; dims: readonly number[] }

/** The inputs of one sample, by name (an InputSample fits). */
export interface SampleInputs { feeds: Record<string, TokenFeed> }

/** One sample's ids and mask, flat [B * S], with B and S. */
export interface TokenRows { ids: Float64Array; mask: Float64Array | null; batch: number; seqLen: number }

const flat = (f: TokenFeed) => Float64Array.from(f.data as ArrayLike<number>, (x) => Number(x));

/** The sample's `input_ids` (and `attention_mask` of the same shape), or null when it has none of rank 2. */
export function tokenRows(s: SampleInputs | undefined): TokenRows | null {
  const ids = s?.feeds.input_ids;
  if (!ids || ids.dims.length !== 2) return null;
  const m = s.feeds.attention_mask;
  const fits = m && m.dims.length === 2 && m.dims[0] === ids.dims[0] && m.dims[1] === ids.dims[1];
  return { ids: flat(ids), mask: fits ? flat(m) : null, batch: ids.dims[0], seqLen: ids.dims[1] };
}
