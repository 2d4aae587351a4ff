//! [`StencilError`]: everything the stencil crate can report.

/// Why a stencil could not be built, bound or applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StencilError {
    /// The specification text is malformed or breaks a rule of the language; `position` is the
    /// byte offset into the specification, `line` and `column` count from 1.
    #[error("{message} at position {position} (line {line}, column {column})")]
    Parse {
        /// What is wrong.
        message: String,
        /// Byte offset of the offending token.
        position: usize,
        /// Line of the offending token, from 1.
        line: usize,
        /// Column (in characters) of the offending token, from 1.
        column: usize,
    },
    /// A stencil description that is not a stencil: no points, a repeated offset, an offset too
    /// large, a non-finite weight, an unknown or misused name.
    #[error("invalid stencil: {0}")]
    Invalid(String),
    /// A scalar or parameter array used by the specification has no value yet.
    #[error("unbound {kind} `{name}` (first used at position {position})")]
    Unbound {
        /// `"scalar"` or `"parameter array"`.
        kind: &'static str,
        /// Its name in the specification.
        name: String,
        /// Byte offset of its first use.
        position: usize,
    },
    /// A grid or parameter array whose shape does not fit the stencil.
    #[error("shape: {0}")]
    Shape(String),
    /// A configuration that cannot run here or on this grid.
    #[error("configuration: {0}")]
    Config(String),
    /// A halo exchange between sub-domains failed (a peer hung up).
    #[error("halo exchange: {0}")]
    Transport(String),
    /// The CUDA layer: no GPU, a generated kernel that did not compile, a failed launch.
    #[error(transparent)]
    Cuda(#[from] cuda_kernels::Error),
    /// The tuner rejected its space or budget, or the tuning cache could not be used.
    #[error(transparent)]
    Tune(#[from] hetero_sched::tune::TuneError),
}

/// `Result` with [`StencilError`].
pub type Result<T, E = StencilError> = std::result::Result<T, E>;

impl StencilError {
    /// True when this machine has no usable GPU.
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, StencilError::Cuda(e) if e.is_no_gpu())
    }
}
