//! The crate's error type.

/// Everything the learners can report.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// A grid description or adaptive grid that `sg-core` rejects.
    #[error(transparent)]
    Grid(#[from] sg_core::SgError),
    /// An error of the CPU operators.
    #[error(transparent)]
    Cpu(#[from] sg_cpu::Error),
    /// A data set with no point (or no column).
    #[error("{what} is empty")]
    Empty {
        /// What was empty.
        what: &'static str,
    },
    /// Arrays whose lengths must agree do not.
    #[error("{what}: expected {expected}, got {got}")]
    LengthMismatch {
        /// What was passed.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length passed.
        got: usize,
    },
    /// A value that is NaN or infinite.
    #[error("{what} row {row}, column {col} is not finite ({value:?})")]
    NonFinite {
        /// Which array.
        what: &'static str,
        /// Its row.
        row: usize,
        /// Its column.
        col: usize,
        /// The value.
        value: f64,
    },
    /// A data point outside the unit cube.
    #[error("data point {row}: coordinate {col} = {value:?} lies outside [0, 1]")]
    OutsideDomain {
        /// The row.
        row: usize,
        /// The dimension.
        col: usize,
        /// The value.
        value: f64,
    },
    /// A builder parameter out of its range.
    #[error("parameter {name}: {reason}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A grid whose dimension differs from the data's.
    #[error("the grid has {grid} dimensions, the data {data}")]
    DimensionMismatch {
        /// The grid's dimension.
        grid: usize,
        /// The data's columns.
        data: usize,
    },
    /// Input that cannot be parsed (CSV).
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// Reading input failed.
    #[error("reading input: {0}")]
    Io(#[from] std::io::Error),
    /// An error of another operator backend (a GPU, say), kept as its source.
    #[error("operator backend {backend}: {source}")]
    Backend {
        /// The backend's name.
        backend: &'static str,
        /// Its error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

/// `Result` with [`LearnError`].
pub type Result<T, E = LearnError> = std::result::Result<T, E>;
