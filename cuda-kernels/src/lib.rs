//! hetkit's CUDA layer: every `.cu` source of the workspace, and a thin runtime over
//! [cudarc](https://docs.rs/cudarc) to run them.
//!
//! Kernels are embedded at build time, as PTX when `nvcc` was found and always as source, so a
//! machine with no CUDA toolkit builds the crate and compiles kernels with NVRTC on first use
//! (a cubin for the device's own architecture where NVRTC knows it, else PTX). Each module is
//! compiled once per process and device, and the image is kept in an on-disk cache
//! ([`ModuleCache`]: `HETKIT_CACHE_DIR`, else the user's cache directory;
//! `HETKIT_NO_MODULE_CACHE=1` turns it off), so later processes load it at once.
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
mod compile;
mod disk_cache;
mod error;
mod gpu;
mod kernel;
mod loader;
mod modules;
mod timing;

pub use blas::{axpy, axpy_cpu};
pub use compile::{CudaVersion, driver_version, nvrtc_version};
pub use disk_cache::{CacheKey, ModuleCache};
pub use error::{Error, Result};
pub use gpu::{DeviceProps, Gpu, driver_present};
pub use kernel::{Kernel, KernelAttributes};
pub use loader::{Module, ModuleInfo};
pub use modules::{
    CompilePath, EmbeddedModule, embedded_modules, nvcc_ptx_embedded, nvrtc_compile_cubin, nvrtc_compile_ptx,
    nvrtc_compile_source, nvrtc_present,
};
pub use timing::{GpuTimer, TimingStats};

/// cudarc's typed device buffer: the crate uses it as is rather than wrapping it.
pub use cudarc::driver::{
    CudaFunction, CudaSlice as DeviceBuffer, CudaStream, DeviceRepr, LaunchArgs, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};

/// Element types the kernels are instantiated for; the suffix names the instantiation
/// (`axpy_f32`, `axpy_f64`), the C name is the type in generated CUDA source (NVRTC).
pub trait GpuScalar: DeviceRepr + ValidAsZeroBits + Copy + Default + Send + Sync + 'static {
    /// The suffix of the kernel instantiation for this type.
    const SUFFIX: &'static str;
    /// The CUDA C name of the type, e.g. `"float"`.
    const C_NAME: &'static str;
}

macro_rules! gpu_scalar {
    ($($t:ty => $suffix:literal, $c:literal;)*) => {$(
        impl GpuScalar for $t {
            const SUFFIX: &'static str = $suffix;
            const C_NAME: &'static str = $c;
        }
    )*};
}

gpu_scalar! {
    f32 => "f32", "float";
    f64 => "f64", "double";
    i32 => "i32", "int";
    u32 => "u32", "unsigned int";
    i64 => "i64", "long long";
    u64 => "u64", "unsigned long long";
}
