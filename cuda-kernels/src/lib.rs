//! hetkit's CUDA layer: every `.cu` source of the workspace, and a thin runtime over
//! [cudarc](https://docs.rs/cudarc) to run them.
//!
//! Kernels are embedded at build time, as PTX when `nvcc` was found and always as source, so a
//! machine with no CUDA toolkit builds the crate and compiles kernels with NVRTC on first use
//! (once per process and device, for the device's own compute capability).
//!
//! Nothing here panics on a machine without a GPU: [`Gpu::new`] returns [`Error::NoDriver`] when
//! `libcuda` cannot be loaded and [`Error::NoDevice`] when no device answers.
//!
//! ```
//! use cuda_kernels::{Gpu, Error};
//! match Gpu::new(0) {
//!     Ok(gpu) => println!("{}", gpu.props()),
//!     Err(Error::NoDriver | Error::NoDevice { .. }) => println!("no GPU here"),
//!     Err(e) => panic!("{e}"),
//! }
//! ```

mod blas;
mod error;
mod gpu;
mod modules;
mod timing;

pub use blas::{axpy, axpy_cpu};
pub use error::{Error, Result};
pub use gpu::{DeviceProps, Gpu, driver_present};
pub use modules::{CompilePath, EmbeddedModule, embedded_modules, nvcc_ptx_embedded};
pub use timing::{GpuTimer, TimingStats};

/// cudarc's typed device buffer: the crate uses it as is rather than wrapping it.
pub use cudarc::driver::{
    CudaFunction, CudaSlice as DeviceBuffer, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};

/// Element types the kernels are instantiated for; the suffix names the instantiation
/// (`axpy_f32`, `axpy_f64`).
pub trait GpuScalar: DeviceRepr + ValidAsZeroBits + Copy + Default + Send + Sync + 'static {
    /// The suffix of the kernel instantiation for this type.
    const SUFFIX: &'static str;
}

impl GpuScalar for f32 {
    const SUFFIX: &'static str = "f32";
}
impl GpuScalar for f64 {
    const SUFFIX: &'static str = "f64";
}
impl GpuScalar for i32 {
    const SUFFIX: &'static str = "i32";
}
impl GpuScalar for u32 {
    const SUFFIX: &'static str = "u32";
}
impl GpuScalar for i64 {
    const SUFFIX: &'static str = "i64";
}
impl GpuScalar for u64 {
    const SUFFIX: &'static str = "u64";
}
