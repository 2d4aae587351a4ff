/// Everything prefix-ops can report. Shared by the scan, tridiagonal and sort modules.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two inputs that must have the same length do not.
    #[error("length mismatch: {what} has {got} elements, expected {expected}")]
    LengthMismatch {
        /// Which input.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The length it must have.
        expected: usize,
    },
    /// Two-dimensional inputs whose shapes must agree do not.
    #[error("shape mismatch: {what} has shape {got:?}, expected {expected:?}")]
    ShapeMismatch {
        /// Which input.
        what: &'static str,
        /// Its shape (rows, columns).
        got: (usize, usize),
        /// The shape it must have.
        expected: (usize, usize),
    },
    /// Segment offsets that break the convention of [`crate::segments`] (start at 0, never
    /// decrease, end at the data length).
    #[error("invalid offsets: {0}")]
    InvalidOffsets(String),
    /// Data that do not form whole rows (see [`crate::segments`]).
    #[error("{len} elements do not form whole rows of {row_len}")]
    InvalidRows {
        /// Elements given.
        len: usize,
        /// The row length asked for.
        row_len: usize,
    },
    /// A scratch buffer sized by the input could not be allocated.
    #[error("cannot allocate {bytes} bytes for {what}")]
    Alloc {
        /// What the buffer was for.
        what: &'static str,
        /// Its size in bytes (saturated at `usize::MAX`).
        bytes: usize,
    },
    /// Any other unusable argument.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// A tridiagonal solver without a fallback met an exactly zero pivot: the system is singular
    /// (pivoting LU) or needs pivoting (Thomas).
    #[error("zero pivot in tridiagonal system {system} at row {row}")]
    ZeroPivot {
        /// Index of the system in its batch.
        system: usize,
        /// Row at which elimination stopped.
        row: usize,
    },
    /// The GPU layer failed (no device, out of memory, compile error, ...).
    #[error(transparent)]
    Gpu(#[from] cuda_kernels::Error),
}

/// `Result` with prefix-ops' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
