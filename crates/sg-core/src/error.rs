//! The crate's error type.

/// Everything that can go wrong when describing a grid or handing it data.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SgError {
    /// A grid needs at least one dimension.
    #[error("dimension d must be at least 1")]
    ZeroDimension,
    /// More dimensions than the crate supports.
    #[error("dimension d = {d} exceeds the supported maximum {max}")]
    DimensionTooLarge {
        /// The dimension asked for.
        d: usize,
        /// The largest supported dimension.
        max: usize,
    },
    /// A grid needs at least one level.
    #[error("level n must be at least 1")]
    ZeroLevel,
    /// More levels than the crate supports (indices are `u32`).
    #[error("level n = {n} exceeds the supported maximum {max}")]
    LevelTooLarge {
        /// The level asked for.
        n: u32,
        /// The largest supported level.
        max: u32,
    },
    /// A truncation vector needs one entry per dimension.
    #[error("truncation vector has {got} entries, the grid has {expected} dimensions")]
    TruncationLength {
        /// The number of dimensions.
        expected: usize,
        /// The length passed.
        got: usize,
    },
    /// A truncation entry of 0 would allow no level at all in that dimension.
    #[error("truncation entry c[{dim}] is 0; every dimension needs at least level 1")]
    TruncationZero {
        /// The offending dimension.
        dim: usize,
    },
    /// The grid has more points than a `u64` (or, for storage, a `usize`) can count.
    #[error("the grid has too many points to index with {what}")]
    TooManyPoints {
        /// The integer type that overflowed.
        what: &'static str,
    },
    /// A slice or matrix has the wrong length.
    #[error("{what}: expected length {expected}, got {got}")]
    LengthMismatch {
        /// What was passed.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length passed.
        got: usize,
    },
    /// A (levels, indices) pair that is not a point of this grid.
    #[error("not a point of this grid: {0}")]
    NotAGridPoint(String),
    /// A linear index at or past the number of points.
    #[error("linear index {idx} out of range for a grid of {len} points")]
    IndexOutOfRange {
        /// The index passed.
        idx: u64,
        /// The number of points.
        len: u64,
    },
    /// An evaluation point with a coordinate that is NaN or infinite.
    #[error("point {row}: coordinate {dim} is not finite ({value})")]
    NonFinite {
        /// The row (point) number.
        row: usize,
        /// The dimension.
        dim: usize,
        /// The value, as f64.
        value: f64,
    },
    /// An evaluation point outside the unit cube.
    #[error("point {row}: coordinate {dim} = {value} lies outside [0, 1]")]
    OutsideDomain {
        /// The row (point) number.
        row: usize,
        /// The dimension.
        dim: usize,
        /// The value, as f64.
        value: f64,
    },
}

/// `Result` with [`SgError`].
pub type Result<T, E = SgError> = std::result::Result<T, E>;
