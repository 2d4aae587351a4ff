//! [`SplitError`]: everything the splitting module reports.

/// A boxed error from an operation's own code (a CPU or GPU implementation of a
/// [`Splittable`](super::Splittable)).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything the splitting module can report.
#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    /// A split or a schedule over no device at all.
    #[error("no devices to split the work over")]
    NoDevices,
    /// Lists that must pair up (devices and models, devices and shares) have different lengths.
    #[error("{what}: {got} given for {devices} devices")]
    Mismatch {
        /// Which list.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The number of devices.
        devices: usize,
    },
    /// A time model with a non-finite or negative coefficient.
    #[error("time model of device {device} is unusable: {reason}")]
    BadModel {
        /// Index of the device in the list.
        device: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A parameter outside its domain (grain of 0, shares that do not add up, ...).
    #[error("invalid parameter: {0}")]
    Invalid(String),
    /// The operation has no implementation for this kind of device.
    #[error("operation has no implementation for device {device} ({fingerprint})")]
    Unsupported {
        /// Index of the device in the list.
        device: usize,
        /// Its fingerprint.
        fingerprint: String,
    },
    /// The CUDA layer failed (no driver, no device, ...).
    #[error(transparent)]
    Cuda(#[from] cuda_kernels::Error),
    /// The operation itself failed on a device.
    #[error("operation failed on {fingerprint}: {source}")]
    Task {
        /// The device's fingerprint.
        fingerprint: String,
        /// The operation's error.
        #[source]
        source: BoxError,
    },
    /// A worker thread panicked (a bug in the operation); the panic is reported, not re-raised.
    #[error("a worker on {fingerprint} panicked")]
    Panicked {
        /// The device's fingerprint.
        fingerprint: String,
    },
    /// Reading or writing the calibration store failed.
    #[error("calibration store {path}: {message}")]
    Store {
        /// The store's file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// `Result` with [`SplitError`].
pub type Result<T, E = SplitError> = std::result::Result<T, E>;
