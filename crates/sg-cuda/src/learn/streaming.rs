//! [`StreamingOperator`]: `B α` and `Bᵀ v` of sparse grid regression on the device, the data
//! uploaded once.

use std::sync::Arc;

use cuda_kernels::{DeviceBuffer, Gpu, Kernel, PushKernelArg};
use ndarray::ArrayView2;
use sg_core::SgError;

use super::config::{LearnConfig, LearnKernel};
use super::kernels;
use super::points::GridPoints;
use crate::device::DeviceReal;
use crate::error::{Error, Result};
use sg_core::Basis;

/// Data points resident on a device: an `m x d` set in `[0, 1]^d`, stored dimension-major so a
/// warp's rows are read coalesced. Shared (through an [`Arc`]) by the operators of successive
/// grids of an adaptive fit.
#[derive(Debug)]
pub struct DeviceData<T: DeviceReal> {
    gpu: Gpu,
    m: usize,
    d: usize,
    x: DeviceBuffer<T>,
}

impl<T: DeviceReal> DeviceData<T> {
    /// Checks and uploads the rows of `points`.
    ///
    /// # Errors
    /// [`Error::Shape`] for no rows or no columns; [`Error::Sg`] for a coordinate that is not
    /// finite or lies outside `[0, 1]`; device errors (out of memory).
    pub fn upload(gpu: &Gpu, points: ArrayView2<'_, T>) -> Result<Self> {
        let (m, d) = points.dim();
        if m == 0 || d == 0 {
            return Err(Error::Shape(format!("{m} x {d} data points (at least one row and one column)")));
        }
        let mut soa = sg_core::alloc::try_with_capacity("data points (host copy)", m * d)?;
        soa.extend(points.t().iter().copied());
        for (row, x) in points.rows().into_iter().enumerate() {
            for (dim, &value) in x.iter().enumerate() {
                if !value.is_finite() {
                    return Err(SgError::NonFinite { row, dim, value: value.to_f64() }.into());
                }
                if value < T::zero() || value > T::one() {
                    return Err(SgError::OutsideDomain { row, dim, value: value.to_f64() }.into());
                }
            }
        }
        Ok(DeviceData { gpu: gpu.clone(), m, d, x: gpu.upload(&soa)? })
    }

    /// Number of points `m`.
    pub fn len(&self) -> usize {
        self.m
    }

    /// Always false: device data hold at least one point.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

/// The grid side of the operators on the device: unified levels and indices (dimension-major)
/// and the scaling of Eq. 7.7.
#[derive(Debug)]
struct DeviceUnified<T: DeviceReal> {
    n: usize,
    lev: DeviceBuffer<T>,
    ind: DeviceBuffer<T>,
    scale: DeviceBuffer<T>,
    /// Number of 1-D factors with `l' ≠ 0` over all points (the mult skips the others).
    active_factors: u64,
}

impl<T: DeviceReal> DeviceUnified<T> {
    fn upload(gpu: &Gpu, grid: &GridPoints, basis: Basis) -> Result<Self> {
        let lev = grid.dimension_major::<T>(|l, i| basis.unified(l, i).level_factor)?;
        let ind = grid.dimension_major::<T>(|l, i| basis.unified(l, i).index_shift)?;
        let active_factors = lev.iter().filter(|&&l| l != T::zero()).count() as u64;
        Ok(DeviceUnified {
            n: grid.len(),
            lev: gpu.upload(&lev)?,
            ind: gpu.upload(&ind)?,
            scale: gpu.upload(&grid.scaling::<T>(basis))?,
            active_factors,
        })
    }
}

/// The regression operators `v = B α` and `v' = Bᵀ v` with `B_ij = φ_j(x_i)` (`m` data points
/// by `N` grid points, any point set, linear or modified-linear basis) on a GPU, by the unified
/// streaming algorithm (Pfander 2019, §7.1): every basis function is evaluated at every data
/// point, `O(m·N·d)` work that the device does at a large fraction of its peak. The data stay on
/// the device across calls (one upload for a whole CG solve); each product moves only `α` and
/// the result.
///
/// ```no_run
/// use sg_cuda::learn::{GridPoints, Basis, StreamingOperator};
/// let gpu = cuda_kernels::Gpu::new(0)?;
/// let grid = GridPoints::regular(&sg_core::GridSpec::regular(2, 3)?)?;
/// let x = ndarray::array![[0.3, 0.7], [0.5, 0.5], [0.1, 0.9]];
/// let op = StreamingOperator::<f64>::new(&gpu, &grid, Basis::ModifiedLinear, x.view())?;
/// let v = op.mult(&vec![1.0; grid.len()])?; // the interpolant of all-one surpluses at the rows
/// let w = op.mult_transpose(&v)?;           // Bᵀ B 1
/// # Ok::<(), sg_cuda::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamingOperator<T: DeviceReal> {
    data: Arc<DeviceData<T>>,
    grid: DeviceUnified<T>,
    basis: Basis,
    config: LearnConfig,
    mult_kernel: Kernel,
    mult_t_kernel: Kernel,
}

impl<T: DeviceReal> StreamingOperator<T> {
    /// Uploads the data and the grid; the kernels run the tuned configuration for this size
    /// from the tuning cache, else the defaults ([`LearnConfig::for_problem`]).
    ///
    /// # Errors
    /// As [`DeviceData::upload`]; [`Error::Shape`] when the grid's dimension is not the data's;
    /// kernel compilation and device errors.
    pub fn new(gpu: &Gpu, grid: &GridPoints, basis: Basis, points: ArrayView2<'_, T>) -> Result<Self> {
        let data = Arc::new(DeviceData::upload(gpu, points)?);
        let config = LearnConfig::for_problem::<T>(gpu, data.len(), grid.len());
        Self::on_data(data, grid, basis, config)
    }

    /// [`new`](Self::new) with explicit parameters.
    ///
    /// # Errors
    /// As `new`, plus [`Error::Config`].
    pub fn with_config(
        gpu: &Gpu,
        grid: &GridPoints,
        basis: Basis,
        points: ArrayView2<'_, T>,
        config: LearnConfig,
    ) -> Result<Self> {
        Self::on_data(Arc::new(DeviceData::upload(gpu, points)?), grid, basis, config)
    }

    /// The operators of `grid` on data already on the device.
    ///
    /// # Errors
    /// [`Error::Shape`] for a dimension mismatch; [`Error::Config`]; device errors.
    pub fn on_data(
        data: Arc<DeviceData<T>>,
        grid: &GridPoints,
        basis: Basis,
        config: LearnConfig,
    ) -> Result<Self> {
        if grid.dim() != data.dim() {
            return Err(Error::Shape(format!(
                "a grid of dimension {} for data of dimension {}",
                grid.dim(),
                data.dim()
            )));
        }
        config.mult.validate(LearnKernel::Mult)?;
        config.transposed.validate(LearnKernel::Transposed)?;
        let gpu = &data.gpu;
        let d = data.d;
        let mult_kernel = kernels::kernel::<T>(gpu, LearnKernel::Mult, d, &config.mult)?;
        let mult_t_kernel = kernels::kernel::<T>(gpu, LearnKernel::Transposed, d, &config.transposed)?;
        let grid = DeviceUnified::upload(gpu, grid, basis)?;
        Ok(StreamingOperator { data, grid, basis, config, mult_kernel, mult_t_kernel })
    }

    /// The same data with another grid (an adaptive fit's next grid): nothing is uploaded
    /// but the grid.
    ///
    /// # Errors
    /// As [`on_data`](Self::on_data).
    pub fn regrid(&self, grid: &GridPoints) -> Result<Self> {
        let config = LearnConfig::for_problem::<T>(self.gpu(), self.data.len(), grid.len());
        Self::on_data(self.data.clone(), grid, self.basis, config)
    }

    /// The data on the device.
    pub fn data(&self) -> &Arc<DeviceData<T>> {
        &self.data
    }

    /// The device.
    pub fn gpu(&self) -> &Gpu {
        &self.data.gpu
    }

    /// Number of data points `m` (rows of `B`).
    pub fn rows(&self) -> usize {
        self.data.m
    }

    /// Number of grid points `N` (columns of `B`).
    pub fn cols(&self) -> usize {
        self.grid.n
    }

    /// The basis.
    pub fn basis(&self) -> Basis {
        self.basis
    }

    /// The kernels' parameters.
    pub fn config(&self) -> &LearnConfig {
        &self.config
    }

    /// Floating-point operations of one [`mult`](Self::mult) by the thesis's count (§7.1.4):
    /// 6 per 1-D factor evaluated (mul, sub, abs, 1 −, max and the product's multiply), so
    /// `6·m·N·d` for the linear basis; the modified-linear mult skips the level-1 factors and
    /// costs `6·m·F` with `F` the number of factors with `l > 1` over the grid.
    pub fn mult_flops(&self) -> f64 {
        6.0 * self.data.m as f64 * self.grid.active_factors as f64
    }

    /// Floating-point operations of one [`mult_transpose`](Self::mult_transpose): `6·m·N·d` for
    /// both bases (the transposed operator cannot skip factors).
    pub fn mult_transpose_flops(&self) -> f64 {
        6.0 * self.data.m as f64 * self.grid.n as f64 * self.data.d as f64
    }

    /// `v = B α` (length `m`).
    ///
    /// # Errors
    /// [`Error::Shape`] when `alpha` does not have `N` entries; device errors.
    pub fn mult(&self, alpha: &[T]) -> Result<Vec<T>> {
        check_len("alpha", alpha.len(), self.grid.n)?;
        let gpu = self.gpu();
        let a = gpu.upload(alpha)?;
        let mut v = gpu.zeros::<T>(self.data.m)?;
        self.mult_device(&a, &mut v)?;
        Ok(gpu.download(&v)?)
    }

    /// `v' = Bᵀ v` (length `N`).
    ///
    /// # Errors
    /// [`Error::Shape`] when `v` does not have `m` entries; device errors.
    pub fn mult_transpose(&self, v: &[T]) -> Result<Vec<T>> {
        check_len("v", v.len(), self.data.m)?;
        let gpu = self.gpu();
        let dv = gpu.upload(v)?;
        let mut out = gpu.zeros::<T>(self.grid.n)?;
        self.mult_transpose_device(&dv, &mut out)?;
        Ok(gpu.download(&out)?)
    }

    /// `Bᵀ B α`, the intermediate `B α` kept on the device: the product a CG iteration of the
    /// regression's normal equations needs.
    ///
    /// # Errors
    /// As [`mult`](Self::mult).
    pub fn normal(&self, alpha: &[T]) -> Result<Vec<T>> {
        check_len("alpha", alpha.len(), self.grid.n)?;
        let gpu = self.gpu();
        let a = gpu.upload(alpha)?;
        let mut v = gpu.zeros::<T>(self.data.m)?;
        self.mult_device(&a, &mut v)?;
        let mut out = gpu.zeros::<T>(self.grid.n)?;
        self.mult_transpose_device(&v, &mut out)?;
        Ok(gpu.download(&out)?)
    }

    /// `b_i = (1/m) Σ_j φ_i(x_j)` (Alg. 9), the right-hand side of density estimation.
    ///
    /// # Errors
    /// Device errors.
    pub fn mean_basis(&self) -> Result<Vec<T>> {
        let m = self.data.m;
        self.mult_transpose(&vec![T::from_f64(1.0 / m as f64); m])
    }

    /// `v = B α` on device buffers (`alpha` of `N`, `v` of `m` entries), queued on the data's
    /// stream; nothing is synchronised.
    ///
    /// # Errors
    /// [`Error::Shape`] for buffers of the wrong length; [`Error::Config`] for a launch the
    /// kernel cannot take (block size, shared memory); launch failures.
    pub fn mult_device(&self, alpha: &DeviceBuffer<T>, v: &mut DeviceBuffer<T>) -> Result<()> {
        check_len("alpha (device)", alpha.len(), self.grid.n)?;
        check_len("v (device)", v.len(), self.data.m)?;
        let (gpu, cfg, d) = (self.gpu(), &self.config.mult, self.data.d);
        let shared = cfg.shared_bytes(LearnKernel::Mult, d, size_of::<T>());
        let (launch, per) =
            kernels::geometry(gpu, &self.mult_kernel, cfg, self.data.m, cfg.block, self.grid.n, shared)?;
        if launch.grid_dim.1 > 1 {
            gpu.stream().memset_zeros(v)?;
        }
        let (m, n, d32) = (self.data.m as u64, self.grid.n as u64, d as u32);
        let (prefetch, use_shared) = (cfg.prefetch, u32::from(cfg.use_shared));
        // SAFETY: sg_learn_mult_T(const T* x, u64 m, u64 ldx, u32 d, const T* lev, const T* ind,
        // const T* alpha, const T* scale, u64 n, u64 ldg, u64 per, u32 prefetch, u32 use_shared,
        // T* v): x holds d·m values (ldx = m), lev and ind d·n (ldg = n), alpha and scale n, v m;
        // rows and grid points past the ends are clamped in the kernel, and the dynamic shared
        // memory holds the (2d + 1)·prefetch values it stages.
        unsafe {
            gpu.launch(&self.mult_kernel, launch, |a| {
                a.arg(&self.data.x).arg(&m).arg(&m).arg(&d32);
                a.arg(&self.grid.lev).arg(&self.grid.ind).arg(alpha).arg(&self.grid.scale);
                a.arg(&n).arg(&n).arg(&per).arg(&prefetch).arg(&use_shared).arg(&mut *v);
            })?;
        }
        Ok(())
    }

    /// `v' = Bᵀ v` on device buffers (`v` of `m`, `out` of `N` entries), queued on the data's
    /// stream; nothing is synchronised.
    ///
    /// # Errors
    /// As [`mult_device`](Self::mult_device).
    pub fn mult_transpose_device(&self, v: &DeviceBuffer<T>, out: &mut DeviceBuffer<T>) -> Result<()> {
        check_len("v (device)", v.len(), self.data.m)?;
        check_len("output (device)", out.len(), self.grid.n)?;
        let (gpu, cfg, d) = (self.gpu(), &self.config.transposed, self.data.d);
        let shared = cfg.shared_bytes(LearnKernel::Transposed, d, size_of::<T>());
        let (launch, per) =
            kernels::geometry(gpu, &self.mult_t_kernel, cfg, self.grid.n, cfg.block, self.data.m, shared)?;
        if launch.grid_dim.1 > 1 {
            gpu.stream().memset_zeros(out)?;
        }
        let (m, n, d32) = (self.data.m as u64, self.grid.n as u64, d as u32);
        let (prefetch, use_shared) = (cfg.prefetch, u32::from(cfg.use_shared));
        // SAFETY: sg_learn_mult_t_T(const T* x, u64 m, u64 ldx, u32 d, const T* lev,
        // const T* ind, const T* scale, u64 n, u64 ldg, const T* v, u64 per, u32 prefetch,
        // u32 use_shared, T* out), with the buffer sizes of `mult_device`; the dynamic shared
        // memory holds the (d + 1)·prefetch values it stages.
        unsafe {
            gpu.launch(&self.mult_t_kernel, launch, |a| {
                a.arg(&self.data.x).arg(&m).arg(&m).arg(&d32);
                a.arg(&self.grid.lev).arg(&self.grid.ind).arg(&self.grid.scale);
                a.arg(&n).arg(&n).arg(v).arg(&per).arg(&prefetch).arg(&use_shared).arg(&mut *out);
            })?;
        }
        Ok(())
    }
}

/// [`Error::Shape`] unless `got == want`.
pub(crate) fn check_len(what: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::Shape(format!("{what} has {got} entries, expected {want}")));
    }
    Ok(())
}
