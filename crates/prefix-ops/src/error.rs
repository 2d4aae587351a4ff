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
    /// Segment offsets that are not non-decreasing or run past the data.
    #[error("invalid offsets: {0}")]
    InvalidOffsets(String),
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
