//! The one error type of the streaming runtime.

/// A boxed error from a stage body; any `E: Into<BoxError>` a stage returns becomes one.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// `Result` with [`StreamError`].
pub type Result<T, E = StreamError> = std::result::Result<T, E>;

/// What the streaming runtime reports: misuse of an endpoint, a stopped run, or the stage that
/// ended a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// `pop` with `min == 0`: a batch must ask for at least one item.
    #[error("pop: min must be at least 1")]
    ZeroMin,
    /// `pop` with `min > max`.
    #[error("pop: min ({min}) is larger than max ({max})")]
    MinAboveMax {
        /// The requested minimum.
        min: usize,
        /// The requested maximum.
        max: usize,
    },
    /// `finalize(k)` with `k` larger than the batch.
    #[error("finalize: {k} items consumed from a batch of {len}")]
    FinalizeTooMany {
        /// Items the caller tried to consume.
        k: usize,
        /// Items in the batch.
        len: usize,
    },
    /// `commit(k)` with `k` larger than the reserved slot.
    #[error("commit: {k} items published from a slot of {n}")]
    CommitTooMany {
        /// Items the caller tried to publish.
        k: usize,
        /// Items reserved.
        n: usize,
    },
    /// A stage index or group size the topology does not have (for instance zero receivers).
    #[error("invalid topology: {0}")]
    Topology(String),
    /// Every receiver of the channel is gone, so pushed items could never be read.
    #[error("push: every receiver of the channel has been dropped")]
    Disconnected,
    /// A transport's connection failed, or its peer vanished without ending the stream.
    #[error("transport: {0}")]
    Transport(#[source] std::io::Error),
    /// A transport received bytes that are not a valid frame for this channel's item type.
    #[error("transport protocol: {0}")]
    Protocol(String),
    /// Another stage failed and the run was stopped; the run's error names that stage.
    #[error("the run was stopped because another stage failed")]
    Cancelled,
    /// A stage returned an error.
    #[error("stage '{stage}' failed: {source}")]
    Stage {
        /// The stage's name as given to `Pipeline::stage`.
        stage: String,
        /// What the stage returned.
        #[source]
        source: BoxError,
    },
    /// A stage panicked.
    #[error("stage '{stage}' panicked: {message}")]
    StagePanicked {
        /// The stage's name as given to `Pipeline::stage`.
        stage: String,
        /// The panic payload when it was a string.
        message: String,
    },
    /// The operating system refused to start a stage thread.
    #[error("stage '{stage}': could not start its thread: {source}")]
    Spawn {
        /// The stage's name.
        stage: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The compute function of a [`map_batches`](super::map_batches) stage failed.
    #[error("compute function failed: {0}")]
    Compute(#[source] BoxError),
    /// The CUDA layer failed (device buffers, copies, launches of GPU stages).
    #[error(transparent)]
    Cuda(#[from] cuda_kernels::Error),
}

impl StreamError {
    /// The stage that ended the run, when this error names one.
    pub fn stage(&self) -> Option<&str> {
        match self {
            StreamError::Stage { stage, .. } | StreamError::StagePanicked { stage, .. } => Some(stage),
            StreamError::Spawn { stage, .. } => Some(stage),
            _ => None,
        }
    }
}
