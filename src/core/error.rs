//! Typed errors of the core. Every refusal carries a stable machine-readable code (the `code`
//! strings of `docs/errors.md`) and the JS class it maps to; the bindings turn them into real JS errors.

use std::fmt;

/// Declares `ErrorKind` from one list of `Variant => "code"` pairs: the enum, `ALL` and `code()`
/// come from the same lines, so no kind can miss its code or its place in the list.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $name:ident => $code:literal,)*) => {
        /// What went wrong, one variant per stable error code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $($(#[$doc])* $name,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order: the one source of the error-code list (the
            /// TypeScript `ErrorCode` union is generated from it and `docs/errors.md` is checked
            /// against it).
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name,)*];

            /// The stable code, as `err.code` in JS.
            pub fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$name => $code,)*
                }
            }
        }
    };
}

error_kinds! {
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
    /// A numeric argument that must be finite (or in a range) is not.
    InvalidValue => "invalid_value",
    /// A model graph with an operator (or an attribute of one) the training core does not
    /// implement: refused by name before anything runs.
    UnsupportedOp => "unsupported_op",
    /// An in-place write through a view whose indices alias the same storage element.
    AliasedView => "aliased_view",
    /// An allocation that does not fit in (wasm) memory.
    OutOfMemory => "out_of_memory",
    /// An object used after `free()`.
    UseAfterFree => "use_after_free",
    /// A write to a param that a running operation is reading (a re-entrant call from a
    /// progress callback).
    ReentrantCall => "reentrant_call",
    /// A JS array whose buffer was detached (transferred or freed) before the call read it.
    DetachedBuffer => "detached_buffer",
    /// A Hessian that is not positive definite after damping (raise `percDamp`).
    SingularHessian => "singular_hessian",
    /// The JS runtime lacks a feature the module needs (WebAssembly SIMD128).
    UnsupportedEnvironment => "unsupported_environment",
    /// A call before the module was initialized (`await init()` in a browser); thrown by the JS layer.
    NotInitialized => "not_initialized",
    /// A wasm trap or an unexpected JS exception: a bug, never the error path of a bad input;
    /// thrown by the JS layer.
    InternalError => "internal_error",
}

impl ErrorKind {
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

    #[test]
    fn codes_are_distinct_snake_case() {
        let codes: std::collections::BTreeSet<_> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len(), "codes must be distinct");
        assert!(codes.iter().all(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit())));
        assert_eq!(ErrorKind::ALL.first(), Some(&ErrorKind::InvalidView));
        assert_eq!(ErrorKind::ALL.last(), Some(&ErrorKind::InternalError));
    }
}
