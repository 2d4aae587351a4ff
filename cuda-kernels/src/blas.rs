//! `axpy`: the one BLAS-1 kernel the crate carries, to prove the build and launch paths.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// Element types with an `axpy` instantiation.
pub trait AxpyScalar: crate::GpuScalar + std::ops::Mul<Output = Self> + std::ops::Add<Output = Self> {}
impl AxpyScalar for f32 {}
impl AxpyScalar for f64 {}

/// `y <- a x + y` on the CPU, the oracle for [`axpy`]. Uses `mul_add`-free arithmetic so it
/// rounds like the kernel compiled without fast math... except that nvcc contracts `a*x+y` to an
/// FMA, so compare with a tolerance of one rounding.
pub fn axpy_cpu<T: AxpyScalar>(a: T, x: &[T], y: &mut [T]) -> Result<()> {
    check_len(x.len(), y.len())?;
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = a * xi + *yi;
    }
    Ok(())
}

/// `y <- a x + y` on the GPU.
///
/// ```no_run
/// # fn main() -> Result<(), cuda_kernels::Error> {
/// let gpu = cuda_kernels::Gpu::new(0)?;
/// let x = gpu.upload(&[1.0f32, 2.0, 3.0])?;
/// let mut y = gpu.upload(&[1.0f32; 3])?;
/// cuda_kernels::axpy(&gpu, 2.0, &x, &mut y)?;
/// assert_eq!(gpu.download(&y)?, vec![3.0, 5.0, 7.0]);
/// # Ok(()) }
/// ```
pub fn axpy<T: AxpyScalar>(gpu: &Gpu, a: T, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
    check_len(x.len(), y.len())?;
    let n = x.len() as u64;
    if n == 0 {
        return Ok(());
    }
    let func = gpu.function("blas/axpy", &format!("axpy_{}", T::SUFFIX))?;
    let threads = 256;
    let cfg = LaunchConfig {
        grid_dim: (gpu.grid_for(x.len(), threads), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: axpy_T(u64 n, T a, const T* x, T* y) with x and y of n elements.
    unsafe {
        gpu.launch(&func, cfg, |args| {
            args.arg(&n).arg(&a).arg(x).arg(y);
        })
    }
}

fn check_len(x: usize, y: usize) -> Result<()> {
    if x != y {
        return Err(Error::Invalid(format!("axpy: x has {x} elements, y has {y}")));
    }
    Ok(())
}
