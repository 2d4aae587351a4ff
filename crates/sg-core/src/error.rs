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
    /// An index at or past the number of items it selects from (grid points, components,
    /// matrix rows, dimensions).
    #[error("{what} {idx} is out of range: there are {len} (valid indices 0..{len})")]
    IndexOutOfRange {
        /// What the index selects: "grid point", "component", "matrix row", ...
        what: &'static str,
        /// The index passed.
        idx: u64,
        /// The number of items.
        len: u64,
    },
    /// A size that must be at least 1 was 0 (matrix columns, components per point, grids to
    /// stack).
    #[error("{what} must be at least 1, got 0")]
    Zero {
        /// The quantity that was 0.
        what: &'static str,
    },
    /// A flat array whose length must be a multiple of a row length is not.
    #[error("{what}: length {len} is not a multiple of the row length {row}")]
    NotMultiple {
        /// What was passed.
        what: &'static str,
        /// Its length.
        len: usize,
        /// The row length it must be a multiple of.
        row: usize,
    },
    /// Grids that must share one description do not.
    #[error("grid {index} has a different description (d, n, truncation or boundary) than grid 0")]
    DifferentGrids {
        /// The position of the first grid that differs.
        index: usize,
    },
    /// An allocation the size of which follows from the arguments cannot be made: its byte
    /// count overflows, or the allocator refused it. Checked before any work is done.
    #[error("{what}: cannot allocate {bytes} bytes")]
    Allocation {
        /// What was to be allocated.
        what: &'static str,
        /// The bytes asked for (saturated at `u128::MAX`).
        bytes: u128,
    },
    /// An evaluation point with a coordinate that is NaN or infinite.
    #[error("point {row}: coordinate {dim} is not finite ({value:?})")]
    NonFinite {
        /// The row (point) number.
        row: usize,
        /// The dimension.
        dim: usize,
        /// The value, as f64.
        value: f64,
    },
    /// An evaluation point outside the unit cube.
    #[error("point {row}: coordinate {dim} = {value:?} lies outside [0, 1]")]
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
