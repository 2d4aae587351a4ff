use sg_core::SgError;

/// Everything sg-cuda can report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The CUDA layer failed: no driver or device, out of device memory
    /// ([`cuda_kernels::Error::OutOfMemory`]), a kernel that did not compile or launch, ...
    #[error(transparent)]
    Cuda(#[from] cuda_kernels::Error),
    /// The CPU side (sg-cpu) rejected its part of the work.
    #[error(transparent)]
    Cpu(#[from] sg_cpu::Error),
    /// Bad grid description or data, as `sg-core` reports it.
    #[error(transparent)]
    Sg(#[from] SgError),
    /// A block holds 2^32 points or more: in-block positions are 32-bit in the kernels.
    #[error("a block of 2^{level_sum} points is too large for the GPU kernels (at most 2^31)")]
    BlockTooLarge {
        /// `Σ (l_t − 1)` of the block.
        level_sum: u32,
    },
    /// Arguments whose shapes do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A tuning run could not start or store its results (bad strategy or budget, cache I/O).
    #[error(transparent)]
    Tune(#[from] hetero_sched::tune::TuneError),
    /// A launch parameter outside what the kernels support.
    #[error("invalid launch parameter: {0}")]
    Config(String),
}

impl Error {
    /// True when the device ran out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Cuda(cuda_kernels::Error::OutOfMemory { .. }))
    }

    /// True when this machine has no usable GPU (driver or device missing).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::Cuda(e) if e.is_no_gpu())
    }
}

impl From<cudarc::driver::DriverError> for Error {
    fn from(e: cudarc::driver::DriverError) -> Self {
        Error::Cuda(cuda_kernels::Error::Driver(e))
    }
}

/// `Result` with sg-cuda's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
