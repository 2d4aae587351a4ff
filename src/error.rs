//! [`Error`]: the one error type of the facade.

/// Everything hetkit can report, whichever crate it came from.
///
/// Each inner crate keeps its own error enum (they are small and precise); the facade folds them
/// into this one so that generic user code needs a single bound, and `?` works on every call.
/// Nested causes are flattened on conversion: a missing GPU is [`Error::Cuda`] whether it came
/// from the sparse grid kernels or the prefix operations, so [`Error::is_no_gpu`] is one test.
///
/// ```
/// fn run() -> hetkit::Result<()> {
///     let spec = hetkit::sg::GridSpec::regular(0, 3)?; // d = 0 is an error, not a panic
///     let _ = spec;
///     Ok(())
/// }
/// let err = run().unwrap_err();
/// assert!(matches!(err, hetkit::Error::Grid(_)));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A grid description or grid data the sparse grid crates reject (dimension, level, lengths,
    /// points outside the domain, sizes that cannot be allocated, ...).
    #[error(transparent)]
    Grid(sg_core::SgError),
    /// The multi-core sparse grid kernels rejected their input.
    #[error(transparent)]
    GridCpu(sg_cpu::Error),
    /// The GPU sparse grid kernels rejected their input or launch parameters.
    #[error(transparent)]
    GridGpu(sg_cuda::Error),
    /// Scans, tridiagonal solvers or sorts rejected their input.
    #[error(transparent)]
    Prefix(prefix_ops::Error),
    /// The CUDA layer: no driver or device, out of device memory, a kernel that did not compile.
    #[error(transparent)]
    Cuda(cuda_kernels::Error),
    /// Splitting work between devices failed (no devices, unusable time models, an operation
    /// that failed or panicked on a device).
    #[error(transparent)]
    Split(hetero_sched::split::SplitError),
    /// Autotuning failed (an unusable space or budget, an unknown strategy, an unreadable or
    /// malformed cache file).
    #[error(transparent)]
    Tune(hetero_sched::tune::TuneError),
    /// A streaming pipeline failed: a bad pop, finalize or commit argument, a stage that failed
    /// or panicked (named), or an endpoint of a stopped run.
    #[error(transparent)]
    Stream(hetero_sched::stream::StreamError),
    /// A stencil specification, grid or configuration was rejected (a parse error with its
    /// position, an unbound symbol, a grid too small for the halo, ...).
    #[error(transparent)]
    Stencil(::stencil::StencilError),
    /// The learners rejected their data or parameters (see [`crate::sg_learn`]).
    #[error(transparent)]
    Learn(sg_learn::LearnError),
    /// A wavefront sweep or sequence application rejected its input (empty grid, boundary
    /// lengths, executor parameters, residues, scoring).
    #[error(transparent)]
    Wavefront(wavefront::WavefrontError),
}

impl Error {
    /// True when this machine has no usable GPU (no driver, or no device with that ordinal).
    pub fn is_no_gpu(&self) -> bool {
        matches!(self, Error::Cuda(e) if e.is_no_gpu())
    }

    /// True when a device allocation failed for lack of memory.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::Cuda(cuda_kernels::Error::OutOfMemory { .. }))
    }
}

/// `Result` with hetkit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<sg_core::SgError> for Error {
    fn from(e: sg_core::SgError) -> Self {
        Error::Grid(e)
    }
}

impl From<cuda_kernels::Error> for Error {
    fn from(e: cuda_kernels::Error) -> Self {
        Error::Cuda(e)
    }
}

impl From<hetero_sched::split::SplitError> for Error {
    fn from(e: hetero_sched::split::SplitError) -> Self {
        match e {
            hetero_sched::split::SplitError::Cuda(e) => Error::Cuda(e),
            other => Error::Split(other),
        }
    }
}

impl From<wavefront::WavefrontError> for Error {
    fn from(e: wavefront::WavefrontError) -> Self {
        match e {
            wavefront::WavefrontError::Cuda(e) => Error::Cuda(e),
            other => Error::Wavefront(other),
        }
    }
}

impl From<hetero_sched::tune::TuneError> for Error {
    fn from(e: hetero_sched::tune::TuneError) -> Self {
        Error::Tune(e)
    }
}

impl From<hetero_sched::stream::StreamError> for Error {
    fn from(e: hetero_sched::stream::StreamError) -> Self {
        match e {
            hetero_sched::stream::StreamError::Cuda(e) => Error::Cuda(e),
            other => Error::Stream(other),
        }
    }
}

impl From<sg_cpu::Error> for Error {
    fn from(e: sg_cpu::Error) -> Self {
        match e {
            sg_cpu::Error::Sg(e) => Error::Grid(e),
            other => Error::GridCpu(other),
        }
    }
}

impl From<sg_cuda::Error> for Error {
    fn from(e: sg_cuda::Error) -> Self {
        match e {
            sg_cuda::Error::Cuda(e) => Error::Cuda(e),
            sg_cuda::Error::Cpu(e) => e.into(),
            sg_cuda::Error::Sg(e) => Error::Grid(e),
            sg_cuda::Error::Tune(e) => Error::Tune(e),
            other => Error::GridGpu(other),
        }
    }
}

impl From<prefix_ops::Error> for Error {
    fn from(e: prefix_ops::Error) -> Self {
        match e {
            prefix_ops::Error::Gpu(e) => Error::Cuda(e),
            other => Error::Prefix(other),
        }
    }
}

impl From<::stencil::StencilError> for Error {
    fn from(e: ::stencil::StencilError) -> Self {
        match e {
            ::stencil::StencilError::Cuda(e) => Error::Cuda(e),
            ::stencil::StencilError::Tune(e) => Error::Tune(e),
            other => Error::Stencil(other),
        }
    }
}

impl From<sg_learn::LearnError> for Error {
    fn from(e: sg_learn::LearnError) -> Self {
        match e {
            sg_learn::LearnError::Grid(e) => Error::Grid(e),
            sg_learn::LearnError::Cpu(e) => e.into(),
            // The GPU backend's errors are sg-cuda's: flattened like every other GPU error.
            sg_learn::LearnError::Backend { backend, source } => match source.downcast::<sg_cuda::Error>() {
                Ok(e) => (*e).into(),
                Err(source) => Error::Learn(sg_learn::LearnError::Backend { backend, source }),
            },
            other => Error::Learn(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_error_bounds<E: std::error::Error + Send + Sync + 'static>() {}

    #[test]
    fn is_a_std_error_that_boxes() {
        assert_error_bounds::<Error>();
        let boxed: Box<dyn std::error::Error + Send + Sync> = Error::from(sg_core::SgError::ZeroLevel).into();
        assert_eq!(boxed.to_string(), "level n must be at least 1");
    }

    #[test]
    fn nested_causes_are_flattened() {
        let no_gpu = sg_cuda::Error::Cuda(cuda_kernels::Error::NoDriver);
        assert!(Error::from(no_gpu).is_no_gpu());
        let via_cpu = sg_cuda::Error::Cpu(sg_cpu::Error::Sg(sg_core::SgError::ZeroDimension));
        assert!(matches!(Error::from(via_cpu), Error::Grid(sg_core::SgError::ZeroDimension)));
        let prefix = prefix_ops::Error::Gpu(cuda_kernels::Error::OutOfMemory { bytes: 8 });
        assert!(Error::from(prefix).is_out_of_memory());
        assert!(!Error::from(sg_core::SgError::ZeroLevel).is_no_gpu());
        let split = hetero_sched::split::SplitError::Cuda(cuda_kernels::Error::NoDriver);
        assert!(Error::from(split).is_no_gpu());
        assert!(matches!(Error::from(hetero_sched::split::SplitError::NoDevices), Error::Split(_)));
        let gpu_learner = sg_learn::LearnError::Backend {
            backend: "gpu-streaming",
            source: Box::new(sg_cuda::Error::Cuda(cuda_kernels::Error::NoDriver)),
        };
        assert!(Error::from(gpu_learner).is_no_gpu());
        let other = sg_learn::LearnError::Backend { backend: "x", source: "boom".into() };
        assert!(matches!(Error::from(other), Error::Learn(_)));
    }
}
