//! What a proximal call is given per spec ([`Part`]) and which bracket denominator it uses.

use crate::layout::{Strided, Tiling};

/// The two bracket denominators of the proximal step, one per kind of spec (a difference the
/// conformance cases pin; tests/data/sparsekit-cases/README.md, "BlockSpec / BlockCoupling").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bracket {
    /// `BlockSpec`: `den = max(D, 0) + eps`.
    BlockSpec,
    /// `BlockCoupling`: `den = max(D, eps)`.
    Coupling,
}

/// One spec's share of the (joint) blocks.
pub struct Part<'a> {
    pub tiling: &'a Tiling,
    pub x_layout: &'a Strided,
    pub x: &'a [f32],
    pub h_layout: &'a Strided,
    pub h: &'a [f32],
    /// Aligned grid index -> this spec's grid index (`None`: identity).
    pub map: Option<&'a [usize]>,
}
