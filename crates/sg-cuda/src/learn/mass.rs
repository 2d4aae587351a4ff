//! [`MassOperator`]: the product with the mass matrix of density estimation on the device.

use cuda_kernels::{DeviceBuffer, Gpu, Kernel, PushKernelArg};

use super::config::{LearnKernel, StreamConfig};
use super::kernels;
use super::points::GridPoints;
use super::streaming::check_len;
use crate::device::DeviceReal;
use crate::error::Result;

/// `(R + λI) v` with the L2 mass matrix `R_ij = (φ_i, φ_j)_{L2} = Π_t ∫_0^1 φ_{i,t} φ_{j,t}` of
/// the linear hat basis (Eq. 8.5–8.7), never assembled: Alg. 10 of the thesis, a thread per row
/// and the grid streamed through shared memory, `O(N²·d)` per product. The 1-D integral is
/// `(2/3)·2^−l` on the diagonal and `h_j·φ_i(x_j) + h_i·φ_j(x_i)` elsewhere (at most one term
/// is non-zero).
///
/// ```no_run
/// use sg_cuda::learn::{GridPoints, MassOperator};
/// let gpu = cuda_kernels::Gpu::new(0)?;
/// let grid = GridPoints::new(1, vec![1, 2, 2], vec![1, 1, 3])?;
/// let r = MassOperator::<f64>::new(&gpu, &grid)?;
/// let col0 = r.apply(&[1.0, 0.0, 0.0], 0.0)?; // [1/3, 1/8, 1/8]
/// # Ok::<(), sg_cuda::Error>(())
/// ```
#[derive(Debug)]
pub struct MassOperator<T: DeviceReal> {
    gpu: Gpu,
    d: usize,
    n: usize,
    lev: DeviceBuffer<T>,
    ind: DeviceBuffer<T>,
    crd: DeviceBuffer<T>,
    wid: DeviceBuffer<T>,
    config: StreamConfig,
    kernel: Kernel,
}

impl<T: DeviceReal> MassOperator<T> {
    /// Uploads the grid: per point and dimension `2^l`, `i`, the coordinate `i·2^−l` and the
    /// width `2^−l`. The tuned configuration for `N²` is used, else the default.
    ///
    /// # Errors
    /// Kernel compilation and device errors.
    pub fn new(gpu: &Gpu, grid: &GridPoints) -> Result<Self> {
        let n = grid.len() as u64;
        Self::with_config(
            gpu,
            grid,
            StreamConfig::for_device::<T>(gpu, LearnKernel::Mass, n.saturating_mul(n)),
        )
    }

    /// [`new`](Self::new) with explicit parameters.
    ///
    /// # Errors
    /// As `new`, plus [`Error::Config`](crate::Error::Config).
    pub fn with_config(gpu: &Gpu, grid: &GridPoints, config: StreamConfig) -> Result<Self> {
        config.validate(LearnKernel::Mass)?;
        let d = grid.dim();
        let kernel = kernels::kernel::<T>(gpu, LearnKernel::Mass, d, &config)?;
        let pow2 = |l: u32| (1u64 << l) as f64;
        let upload = |f: &dyn Fn(u32, u32) -> f64| -> Result<DeviceBuffer<T>> {
            Ok(gpu.upload(&grid.dimension_major::<T>(f)?)?)
        };
        Ok(MassOperator {
            gpu: gpu.clone(),
            d,
            n: grid.len(),
            lev: upload(&|l, _| pow2(l))?,
            ind: upload(&|_, i| f64::from(i))?,
            crd: upload(&|l, i| f64::from(i) / pow2(l))?,
            wid: upload(&|l, _| 1.0 / pow2(l))?,
            config,
            kernel,
        })
    }

    /// Number of grid points `N`.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a grid holds at least one point.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The kernel's parameters.
    pub fn config(&self) -> &StreamConfig {
        &self.config
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Floating-point operations of one product by the thesis's count (Table 8.1): `14·N²·d`.
    pub fn flops(&self) -> f64 {
        14.0 * (self.n as f64).powi(2) * self.d as f64
    }

    /// `(R + λI) v`.
    ///
    /// # Errors
    /// [`Error::Shape`](crate::Error::Shape) when `v` does not have `N` entries; device errors.
    pub fn apply(&self, v: &[T], lambda: T) -> Result<Vec<T>> {
        check_len("v", v.len(), self.n)?;
        let dv = self.gpu.upload(v)?;
        let mut out = self.gpu.zeros::<T>(self.n)?;
        self.apply_device(&dv, lambda, &mut out)?;
        Ok(self.gpu.download(&out)?)
    }

    /// `(R + λI) v` on device buffers of `N` entries, queued on the grid's stream.
    ///
    /// # Errors
    /// As [`apply`](Self::apply), plus [`Error::Config`](crate::Error::Config) for a launch the
    /// kernel cannot take.
    pub fn apply_device(&self, v: &DeviceBuffer<T>, lambda: T, out: &mut DeviceBuffer<T>) -> Result<()> {
        check_len("v (device)", v.len(), self.n)?;
        check_len("output (device)", out.len(), self.n)?;
        let cfg = &self.config;
        let shared = cfg.shared_bytes(LearnKernel::Mass, self.d, size_of::<T>());
        let (launch, per) = kernels::geometry(&self.gpu, &self.kernel, cfg, self.n, 1, self.n, shared)?;
        if launch.grid_dim.1 > 1 {
            self.gpu.stream().memset_zeros(out)?;
        }
        let (n, d32) = (self.n as u64, self.d as u32);
        let (prefetch, use_shared) = (cfg.prefetch, u32::from(cfg.use_shared));
        // SAFETY: sg_learn_mass_T(const T* lev, const T* ind, const T* crd, const T* wid, u64 n,
        // u64 ldg, u32 d, const T* v, T lambda, u64 per, u32 prefetch, u32 use_shared, T* out):
        // the four tables hold d·n values (ldg = n), v and out n; rows past the end are clamped
        // in the kernel, and the dynamic shared memory holds the (4d + 1)·prefetch values it
        // stages.
        unsafe {
            self.gpu.launch(&self.kernel, launch, |a| {
                a.arg(&self.lev).arg(&self.ind).arg(&self.crd).arg(&self.wid).arg(&n).arg(&n).arg(&d32);
                a.arg(v).arg(&lambda).arg(&per).arg(&prefetch).arg(&use_shared).arg(&mut *out);
            })?;
        }
        Ok(())
    }
}
