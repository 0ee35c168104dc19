//! Chunked scaling of a contiguous row (masks, multipliers).

/// Multiplies each `chunk`-long piece `j` of the contiguous `row` by `factors[j * f_stride]`.
pub fn scale_chunks(row: &mut [f32], chunk: usize, factors: &[f32], f_stride: usize) {
    debug_assert!(chunk > 0 && row.len().is_multiple_of(chunk));
    for (j, c) in row.chunks_exact_mut(chunk).enumerate() {
        let f = factors[j * f_stride];
        for x in c {
            *x *= f;
        }
    }
}
