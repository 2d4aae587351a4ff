//! The floating-point types the solvers are written for.

use cuda_kernels::GpuScalar;
use num_traits::Float;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `f32` or `f64`: the element types of tridiagonal systems, on the CPU and on the GPU.
pub trait Real: Float + GpuScalar + Send + Sync + std::fmt::Debug + sealed::Sealed + 'static {
    /// The value `v` rounded to this type.
    fn of(v: f64) -> Self;
    /// The value widened to `f64`.
    fn wide(self) -> f64;
}

impl Real for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    fn of(v: f64) -> Self {
        v
    }
    fn wide(self) -> f64 {
        self
    }
}
