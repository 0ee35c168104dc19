//! Typed errors of the core. Every refusal carries a stable machine-readable code (the `code`
//! strings of `API.md`) and the JS class it maps to; the bindings turn them into real JS errors.

use std::fmt;

/// What went wrong, one variant per stable error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidView,
    ViewOutOfBounds,
    BlockRankMismatch,
    InvalidBlockShape,
    ShapeMismatch,
    InvalidOrders,
    IncompatibleCoupling,
    ScopeRankMismatch,
    InvalidScopeShape,
    InvalidSparsity,
    InvalidNnz,
    InvalidArguments,
    InvalidEps,
    ParamNot2d,
    InvalidNmShape,
    InvalidNmPattern,
    UnsupportedPattern,
    /// A numeric argument that must be finite (or in a range) is not.
    InvalidValue,
    /// An in-place write through a view whose indices alias the same storage element.
    AliasedView,
    /// An allocation that does not fit in (wasm) memory.
    OutOfMemory,
    /// An object used after `free()`.
    UseAfterFree,
    /// A write to a param that a running operation is reading (a re-entrant call from a
    /// progress callback).
    ReentrantCall,
    /// A JS array whose buffer was detached (transferred or freed) before the call read it.
    DetachedBuffer,
    /// A Hessian that is not positive definite after damping (raise `percDamp`).
    SingularHessian,
    /// The JS runtime lacks a feature the module needs (WebAssembly SIMD128).
    UnsupportedEnvironment,
}

impl ErrorKind {
    /// Every kind, in declaration order: the one source of the error-code list (the TypeScript
    /// `ErrorCode` union and the table of `docs/errors.md` are generated from or checked
    /// against it).
    pub const ALL: [ErrorKind; 25] = {
        use ErrorKind::*;
        [
            InvalidView,
            ViewOutOfBounds,
            BlockRankMismatch,
            InvalidBlockShape,
            ShapeMismatch,
            InvalidOrders,
            IncompatibleCoupling,
            ScopeRankMismatch,
            InvalidScopeShape,
            InvalidSparsity,
            InvalidNnz,
            InvalidArguments,
            InvalidEps,
            ParamNot2d,
            InvalidNmShape,
            InvalidNmPattern,
            UnsupportedPattern,
            InvalidValue,
            AliasedView,
            OutOfMemory,
            UseAfterFree,
            ReentrantCall,
            DetachedBuffer,
            SingularHessian,
            UnsupportedEnvironment,
        ]
    };

    /// The stable code, as `err.code` in JS.
    pub fn code(self) -> &'static str {
        use ErrorKind::*;
        match self {
            InvalidView => "invalid_view",
            ViewOutOfBounds => "view_out_of_bounds",
            BlockRankMismatch => "block_rank_mismatch",
            InvalidBlockShape => "invalid_block_shape",
            ShapeMismatch => "shape_mismatch",
            InvalidOrders => "invalid_orders",
            IncompatibleCoupling => "incompatible_coupling",
            ScopeRankMismatch => "scope_rank_mismatch",
            InvalidScopeShape => "invalid_scope_shape",
            InvalidSparsity => "invalid_sparsity",
            InvalidNnz => "invalid_nnz",
            InvalidArguments => "invalid_arguments",
            InvalidEps => "invalid_eps",
            ParamNot2d => "param_not_2d",
            InvalidNmShape => "invalid_nm_shape",
            InvalidNmPattern => "invalid_nm_pattern",
            UnsupportedPattern => "unsupported_pattern",
            InvalidValue => "invalid_value",
            AliasedView => "aliased_view",
            OutOfMemory => "out_of_memory",
            UseAfterFree => "use_after_free",
            ReentrantCall => "reentrant_call",
            DetachedBuffer => "detached_buffer",
            SingularHessian => "singular_hessian",
            UnsupportedEnvironment => "unsupported_environment",
        }
    }

    /// The JS class the error is thrown as (all are `instanceof SparseKitError`).
    pub fn class_name(self) -> &'static str {
        match self {
            ErrorKind::ShapeMismatch => "ShapeMismatchError",
            ErrorKind::IncompatibleCoupling => "CouplingError",
            _ => "SparseKitError",
        }
    }
}

/// A refused call: the kind (stable code) and a message that says what was wrong and what was
/// expected.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }

    /// An n-d shape that differs from the one the operation needs.
    pub fn shape_mismatch(context: &str, expected: &[usize], got: &[usize]) -> Self {
        Error::new(ErrorKind::ShapeMismatch, format!("{context}: has shape {got:?} where {expected:?} is needed"))
    }

    /// The stable kind (its `code()` is `err.code` in JS).
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// What was wrong and what was expected.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// A flat array whose length is not the product of the shape it must have.
    pub fn length_mismatch(context: &str, shape: &[usize], expected: usize, got: usize) -> Self {
        Error::new(
            ErrorKind::ShapeMismatch,
            format!("{context}: expected {expected} elements (shape {shape:?}, flat row-major), got {got}"),
        )
    }

    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.kind.code())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand used across the core: `bail!(Kind, "fmt", args)`.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::core::error::Error::new($crate::core::error::ErrorKind::$kind, format!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    /// `ALL` must list every variant of the enum, in order: read the variants from this file's
    /// own source so that a kind added to the enum but not to `ALL` fails here.
    #[test]
    fn all_lists_every_variant_in_order() {
        let src = include_str!("error.rs");
        let start = src.find("pub enum ErrorKind {").unwrap();
        let body = &src[start..start + src[start..].find("\n}").unwrap()];
        let declared: Vec<&str> = body
            .lines()
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(|l| l.trim_end_matches(','))
            .collect();
        let listed: Vec<String> = ErrorKind::ALL.iter().map(|k| format!("{k:?}")).collect();
        assert_eq!(declared, listed);
        let codes: std::collections::BTreeSet<_> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len(), "codes must be distinct");
    }
}
