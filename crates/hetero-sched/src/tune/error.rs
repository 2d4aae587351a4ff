//! The tuner's error type.

use std::path::PathBuf;

/// Errors of spaces, strategies, the tuning cache and cache files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TuneError {
    /// A parameter or space description is unusable (empty value list, zero step, ...).
    #[error("invalid space: {0}")]
    InvalidSpace(String),
    /// A constraint names a parameter the space does not have.
    #[error("constraint `{constraint}` names unknown parameter `{param}`")]
    UnknownParam {
        /// The constraint.
        constraint: String,
        /// The missing parameter.
        param: String,
    },
    /// No strategy has this name.
    #[error("unknown strategy `{0}` (known: {known})", known = super::strategy::NAMES.join(", "))]
    UnknownStrategy(String),
    /// A budget of zero evaluations, or otherwise unusable.
    #[error("invalid budget: {0}")]
    InvalidBudget(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A cache file is not valid JSON, or not in Kernel Tuner's cache format.
    #[error("{path}: not a Kernel Tuner cache file: {reason}")]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The user's cache directory could not be determined.
    #[error("no cache directory (set HETKIT_CACHE_DIR)")]
    NoCacheDir,
}

/// `Result` with [`TuneError`].
pub type Result<T, E = TuneError> = std::result::Result<T, E>;
