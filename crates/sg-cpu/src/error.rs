use sg_core::SgError;

/// Everything sg-cpu can report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Bad grid description or data, as `sg-core` reports it (lengths, points outside the
    /// domain, non-finite coordinates, ...).
    #[error(transparent)]
    Sg(#[from] SgError),
    /// A block holds 2^32 points or more: in-block positions are 32-bit in the kernels.
    #[error("a block of 2^{level_sum} points is too large for the CPU kernels (at most 2^31)")]
    BlockTooLarge {
        /// `Σ (l_t − 1)` of the block.
        level_sum: u32,
    },
    /// Arguments whose shapes do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),
}

/// `Result` with sg-cpu's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
