//! The GPU backend: `sg-cuda`'s unified streaming operators and mass-matrix product behind
//! [`Backend`], so every learner runs its CG iterations on a device when asked
//! (`.gpu(&gpu)` on [`Regressor`](crate::Regressor), [`DensityEstimator`](crate::DensityEstimator)
//! and [`Clustering`](crate::Clustering), or `.backend(Arc::new(GpuStreaming::new(&gpu)))`).
//!
//! The data are uploaded once per operator (once per fit, and per refinement step), so the CG
//! iterations move only the length-`N` and length-`m` vectors. The solver itself stays in `f64`
//! on the host; [`GpuStreaming::single_precision`] runs the products in `f32` (the thesis's
//! setting on consumer GPUs), which limits the reachable CG tolerance to about `1e-6`.

use cuda_kernels::Gpu;
use ndarray::ArrayView2;
use sg_core::{AdaptiveGrid, Basis};
use sg_cuda::DeviceReal;
use sg_cuda::learn::{GridPoints, MassOperator as DeviceMass, StreamingOperator};

use crate::error::{LearnError, Result};
use crate::operator::{Backend, DataOperator, MassOperator};

/// The backend's name in errors and logs.
const NAME: &str = "gpu-streaming";

/// The unified streaming algorithm on a GPU (`sg_cuda::learn`), with the kernel parameters the
/// tuning cache holds for the device (else the defaults).
#[derive(Debug, Clone)]
pub struct GpuStreaming {
    gpu: Gpu,
    single: bool,
}

impl GpuStreaming {
    /// The operators on `gpu`, in `f64`.
    pub fn new(gpu: &Gpu) -> Self {
        GpuStreaming { gpu: gpu.clone(), single: false }
    }

    /// The operators on device `ordinal`.
    ///
    /// # Errors
    /// [`LearnError::Backend`] holding `sg_cuda`'s "no GPU" error on a machine without a driver
    /// or without that device.
    pub fn open(ordinal: usize) -> Result<Self> {
        Gpu::new(ordinal).map(|gpu| Self::new(&gpu)).map_err(|e| backend_error(sg_cuda::Error::from(e)))
    }

    /// The products in `f32` (data, grid and vectors converted on the way to the device).
    pub fn single_precision(mut self) -> Self {
        self.single = true;
        self
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

fn backend_error(e: sg_cuda::Error) -> LearnError {
    LearnError::Backend { backend: NAME, source: Box::new(e) }
}

/// `B`, `Bᵀ` on the device in `T`.
struct DeviceData<T: DeviceReal>(StreamingOperator<T>);

impl<T: DeviceReal> DeviceData<T> {
    fn new(gpu: &Gpu, grid: &AdaptiveGrid, basis: Basis, x: ArrayView2<'_, f64>) -> Result<Self> {
        let points = GridPoints::try_from(grid).map_err(backend_error)?;
        let xt = x.mapv(T::from_f64);
        Ok(DeviceData(StreamingOperator::new(gpu, &points, basis, xt.view()).map_err(backend_error)?))
    }
}

/// `out = f(input)` through `T`.
fn through<T: DeviceReal>(
    input: &[f64],
    out: &mut [f64],
    f: impl FnOnce(&[T]) -> sg_cuda::Result<Vec<T>>,
) -> Result<()> {
    let converted: Vec<T> = input.iter().map(|&v| T::from_f64(v)).collect();
    let got = f(&converted).map_err(backend_error)?;
    if got.len() != out.len() {
        return Err(LearnError::LengthMismatch {
            what: "GPU operator output",
            expected: out.len(),
            got: got.len(),
        });
    }
    out.iter_mut().zip(got).for_each(|(o, g)| *o = g.to_f64());
    Ok(())
}

impl<T: DeviceReal> DataOperator for DeviceData<T> {
    fn grid_len(&self) -> usize {
        self.0.cols()
    }
    fn data_len(&self) -> usize {
        self.0.rows()
    }
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        through::<T>(alpha, out, |a| self.0.mult(a))
    }
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        through::<T>(v, out, |a| self.0.mult_transpose(a))
    }
}

/// `R` on the device in `T`.
struct DeviceMassOp<T: DeviceReal>(DeviceMass<T>);

impl<T: DeviceReal> MassOperator for DeviceMassOp<T> {
    fn grid_len(&self) -> usize {
        self.0.len()
    }
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        through::<T>(v, out, |a| self.0.apply(a, T::zero()))
    }
}

impl Backend for GpuStreaming {
    fn name(&self) -> &'static str {
        NAME
    }

    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>> {
        Ok(if self.single {
            Box::new(DeviceData::<f32>::new(&self.gpu, grid, basis, x)?)
        } else {
            Box::new(DeviceData::<f64>::new(&self.gpu, grid, basis, x)?)
        })
    }

    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>> {
        let points = GridPoints::try_from(grid).map_err(backend_error)?;
        Ok(if self.single {
            Box::new(DeviceMassOp(DeviceMass::<f32>::new(&self.gpu, &points).map_err(backend_error)?))
        } else {
            Box::new(DeviceMassOp(DeviceMass::<f64>::new(&self.gpu, &points).map_err(backend_error)?))
        })
    }
}
