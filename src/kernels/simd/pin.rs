//! Keeping SIMD values where they are computed: the engines (V8, SpiderMonkey) place a pure
//! value just before its first use, which undoes the interleaving the quad kernels are written
//! for; stores keep their place.

use core::mem::MaybeUninit;

use core::arch::wasm32::*;

/// The four blocks' per-lane sums (or statistics), each written to memory as soon as its block is
/// done. V8 places pure values next to their first use: without the stores, every block's first
/// sum was folded before any second one was formed, each element's reciprocal and conditioner
/// spilled in between, and the statistics' loads of all four blocks came before any arithmetic.
/// One vector at a time into an uninitialised local (a whole array went through a zero-fill and a
/// copy), the four blocks written out; the statistics are stored the same way (bench/README.md,
/// "Figures behind the code's choices").
#[inline(always)]
pub(super) fn pinned<const N: usize>(block: impl Fn(usize) -> [v128; N]) -> [[v128; N]; 4] {
    let mut out = MaybeUninit::<[[v128; N]; 4]>::uninit();
    let p = out.as_mut_ptr().cast::<v128>();
    // Written out rather than a loop, which LLVM kept (with a branch per block on `k`).
    // SAFETY: element k of a local array of four.
    unsafe {
        store_kept(p, block(0));
        store_kept(p.add(N), block(1));
        store_kept(p.add(2 * N), block(2));
        store_kept(p.add(3 * N), block(3));
    }
    // SAFETY: every vector was written above (not zeroed first: that was a memset per quad).
    unsafe { out.assume_init() }
}

/// Volatile stores of `v` at `p..p + N`, one vector at a time (a whole `[v128; N]` went through
/// a copy): stores the engines keep where they are.
///
/// # Safety
/// `p..p + N` must be valid for writes.
#[inline(always)]
unsafe fn store_kept<const N: usize>(p: *mut v128, v: [v128; N]) {
    for (j, x) in v.into_iter().enumerate() {
        // SAFETY: inside p..p + N (the caller's contract).
        unsafe { core::ptr::write_volatile(p.add(j), x) };
    }
}

/// Stores `v` where nothing reads it. The engines place a pure SIMD value just before its first
/// use; a store is a use that keeps its place in the instruction stream, so the values computed
/// before a fence come before the code after it (see [`super::newton::RootRegs::step_pair`]).
#[inline(always)]
pub(super) fn fence<const N: usize>(v: [v128; N]) {
    let mut sink = MaybeUninit::<[v128; N]>::uninit();
    // SAFETY: a local array of N vectors.
    unsafe { store_kept(sink.as_mut_ptr().cast::<v128>(), v) }
}

/// The first `n` elements of `buf` as initialised values.
///
/// # Safety
/// `buf[..n]` must all have been written.
#[inline(always)]
pub(super) unsafe fn written<T, const N: usize>(buf: &mut [MaybeUninit<T>; N], n: usize) -> &mut [T] {
    assert!(n <= N);
    // SAFETY: MaybeUninit<T> has T's layout; the caller has written the first n.
    unsafe { core::slice::from_raw_parts_mut(buf.as_mut_ptr().cast::<T>(), n) }
}
