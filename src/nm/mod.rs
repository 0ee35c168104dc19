//! N:M magnitude pruning after NVIDIA ASP: pattern names and enumeration, the 1-D best mask,
//! ASP's tensor layouts, transposable 2-D masks, the channel-permutation search and the
//! `MagnitudeSearcher` that applies masks to params. Magnitudes rank with `kernels::order`.

mod asp;
mod one_d;
mod pattern;
mod permute;
mod searcher;
mod two_d;

pub use asp::{create_asp_mask, AspLayout, AspPattern};
pub use one_d::{fill, fill_streamed, kept_magnitude, m4n2_1d, mn_1d_best, mn_1d_best_streamed, reshape_1d};
pub use pattern::{check_nm, compute_valid_1d_patterns, get_nmprune_info, MAX_PATTERN_BYTES, MAX_PATTERN_ROWS};
pub use permute::{invert_permutation, nm_kept_magnitude, permute_columns, search_permutation, sweeps_from_f64, PermutationResult};
pub use searcher::{apply_mask, MagnitudeSearcher, Tensor};
pub use two_d::{m4n2_2d_best, m4n2_2d_greedy, valid_2d_patterns};
