use cudarc::driver::DriverError;
use cudarc::nvrtc::CompileError;

use crate::compile::CudaVersion;

/// Everything the CUDA layer can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `libcuda` could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver: libcuda could not be loaded")]
    NoDriver,
    /// The driver loaded but there is no device with this ordinal.
    #[error("no CUDA device {ordinal} ({count} present)")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// NVRTC is needed (no PTX embedded, or it was rejected) but `libnvrtc` could not be loaded.
    #[error("NVRTC is needed to compile `{module}` but libnvrtc could not be loaded")]
    NoNvrtc {
        /// The kernel module that needed compiling.
        module: String,
    },
    /// No embedded kernel file has this name.
    #[error("no embedded kernel module named `{0}`")]
    UnknownModule(String),
    /// The module has no kernel of this name.
    #[error("module `{module}` has no kernel `{kernel}`")]
    UnknownKernel {
        /// The module.
        module: String,
        /// The kernel asked for.
        kernel: String,
    },
    /// No image of the module loads: every way of making one was refused, typically because the
    /// driver is older than the toolkit (nvcc or NVRTC) that made the PTX.
    #[error(
        "no image of `{module}` loads on this driver (CUDA {driver}; NVRTC {}): {attempts}. \
         Update the NVIDIA driver to one for CUDA {} or newer, or use an NVRTC (libnvrtc) no newer than CUDA {driver}",
        nvrtc.map_or_else(|| "not found".to_string(), |v| v.to_string()),
        nvrtc.map_or_else(|| "of the toolkit".to_string(), |v| v.to_string())
    )]
    NothingLoads {
        /// The kernel module.
        module: String,
        /// The CUDA version the driver supports.
        driver: CudaVersion,
        /// The version of the NVRTC found, if any.
        nvrtc: Option<CudaVersion>,
        /// What was tried, and why each failed.
        attempts: String,
    },
    /// NVRTC rejected a source.
    #[error("NVRTC failed to compile `{module}`: {message}")]
    Compile {
        /// The kernel module.
        module: String,
        /// NVRTC's log or error.
        message: String,
    },
    /// Device memory is exhausted.
    #[error("out of device memory ({bytes} bytes requested)")]
    OutOfMemory {
        /// Size of the failed request.
        bytes: usize,
    },
    /// Host input the caller passed is unusable (lengths, shapes).
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// Any other driver failure.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
}

impl Error {
    pub(crate) fn compile(module: &str, e: CompileError) -> Self {
        let message = match e {
            CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => format!("{other:?}"),
        };
        Error::Compile { module: module.to_string(), message }
    }

    /// Maps an allocation failure to [`Error::OutOfMemory`] and passes other errors through.
    pub fn from_alloc(e: DriverError, bytes: usize) -> Self {
        if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            Error::OutOfMemory { bytes }
        } else {
            Error::Driver(e)
        }
    }

    /// True for the errors that mean "this machine has no usable GPU" (tests skip on these).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::NoDriver | Error::NoDevice { .. })
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
