//! The 2:4 keep-mask of consecutive groups of four.

/// One group of 4: element `i` is kept when fewer than 2 others beat it (a larger key, or an
/// equal key at a lower index).
#[inline(always)]
pub fn nm24_group(g: &[f32], m: &mut [core::mem::MaybeUninit<u8>]) {
    let k = [
        crate::kernels::order::magnitude_key(g[0]),
        crate::kernels::order::magnitude_key(g[1]),
        crate::kernels::order::magnitude_key(g[2]),
        crate::kernels::order::magnitude_key(g[3]),
    ];
    for i in 0..4 {
        let mut beaten = 0u32;
        for j in 0..4 {
            beaten += u32::from(k[j] > k[i] || (k[j] == k[i] && j < i));
        }
        m[i].write(u8::from(beaten < 2));
    }
}

/// 2:4 keep-mask of consecutive groups of 4: in each group the 2 largest `|x|` are kept, ties to
/// the lower index, NaN ranks below every number (the order of [`crate::kernels::order::magnitude_key`]).
/// `values.len() == mask.len()`, a multiple of 4.
pub fn nm24_mask(values: &[f32], mask: &mut [u8]) {
    // SAFETY: initialised bytes seen as possibly-uninitialised ones; only 0/1 are written.
    nm24_mask_uninit(values, unsafe { &mut *(mask as *mut [u8] as *mut [core::mem::MaybeUninit<u8>]) })
}

/// [`nm24_mask`] into storage not yet initialised (every byte is written), so the caller's
/// output needs no zero-fill pass.
pub fn nm24_mask_uninit(values: &[f32], mask: &mut [core::mem::MaybeUninit<u8>]) {
    debug_assert!(values.len() == mask.len() && values.len().is_multiple_of(4));
    for (g, m) in values.chunks_exact(4).zip(mask.chunks_exact_mut(4)) {
        nm24_group(g, m);
    }
}
