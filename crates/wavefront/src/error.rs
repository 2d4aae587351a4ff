//! The crate's one error type.

/// Everything the wavefront executors and applications reject.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WavefrontError {
    /// A grid extent is 0: there is nothing to sweep, and no boundary to check against.
    #[error("the grid is empty: {axis} has extent 0")]
    EmptyGrid {
        /// Which extent (`"rows"`, `"cols"`, `"n0"`, ...).
        axis: &'static str,
    },
    /// The number of cells does not fit in memory or in `usize`.
    #[error("a grid of {cells} cells cannot be allocated")]
    TooLarge {
        /// The requested cell count (saturated at `u128::MAX` when it overflowed).
        cells: u128,
    },
    /// A boundary vector has the wrong length.
    #[error("boundary `{side}` has {got} values; this grid needs {want} (or none for a constant boundary)")]
    BoundaryLength {
        /// The boundary field.
        side: &'static str,
        /// Its length.
        got: usize,
        /// The length the grid needs.
        want: usize,
    },
    /// An executor parameter is out of range (tile 0, thread count 0, ...).
    #[error("invalid wavefront configuration: {0}")]
    InvalidConfig(String),
    /// A GPU band was asked for but the kernel has no GPU form (a Rust closure cannot run on a
    /// GPU; use a built-in application or a CUDA kernel source).
    #[error("band {band} asks for a GPU, but this kernel has no GPU form")]
    NoGpuKernel {
        /// The requested band.
        band: isize,
    },
    /// A residue that the scoring matrix does not know.
    #[error(
        "sequence {seq}: byte {byte:#04x} ({shown:?}) at position {pos} is not a letter of the scoring matrix"
    )]
    UnknownResidue {
        /// `'a'` or `'b'`.
        seq: char,
        /// 0-based position in that sequence.
        pos: usize,
        /// The byte.
        byte: u8,
        /// The byte as a character, for the message.
        shown: char,
    },
    /// Gap penalties or scores that the alignment kernels reject.
    #[error("invalid scoring: {0}")]
    InvalidScoring(String),
    /// A tuning log, model or cache file that cannot be read or written.
    #[error("tuning file {path}: {reason}")]
    TuneFile {
        /// The file.
        path: std::path::PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// A tuning step that cannot proceed: no training data, a learner that failed, an
    /// evaluation whose result differs from the sequential reference.
    #[error("wavefront tuning: {0}")]
    Tune(String),
    /// The CUDA layer: no driver or device, a kernel that did not compile, a failed launch.
    #[error(transparent)]
    Cuda(#[from] cuda_kernels::Error),
}

/// `Result` with [`WavefrontError`].
pub type Result<T, E = WavefrontError> = std::result::Result<T, E>;
