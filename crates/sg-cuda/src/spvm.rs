//! spvm on the device (`cuda-kernels/sg/sg_spvm.cu`): `y = Σ_i x[i] · a[ix[i], ..]` with the
//! matrix resident on the GPU and rows padded to 128 bytes so every warp's reads are aligned. The
//! grid covers the columns and chunks of the selected rows; per-chunk partial sums are added in
//! chunk order by a second kernel, so results do not depend on scheduling.

use cuda_kernels::{DeviceBuffer, Gpu, Kernel, LaunchConfig, PushKernelArg};

use crate::config::SpvmConfig;
use crate::device::DeviceReal;
use crate::error::{Error, Result};
use crate::launch;
use crate::occupancy::SmLimits;
use crate::plan::{self, SpvmPlan};
use sg_core::SgError;
use sg_core::alloc::{checked_len, try_vec};

/// Row alignment in bytes.
const ROW_ALIGN: usize = 128;

/// A dense row-major matrix on the device with padded rows (the `a` of thesis Listing 3.8).
#[derive(Debug)]
pub struct DeviceMatrix<T: DeviceReal> {
    gpu: Gpu,
    rows: usize,
    cols: usize,
    lda: usize,
    data: DeviceBuffer<T>,
}

impl<T: DeviceReal> DeviceMatrix<T> {
    /// Uploads a row-major `rows x cols` matrix.
    ///
    /// # Errors
    /// [`SgError::Zero`] when `cols == 0`, [`SgError::NotMultiple`] when `a.len()` is not a
    /// multiple of `cols`, [`SgError::Allocation`] when the padded host copy does not fit;
    /// device errors.
    pub fn upload(gpu: &Gpu, a: &[T], cols: usize) -> Result<Self> {
        if cols == 0 {
            return Err(SgError::Zero { what: "matrix columns (p)" }.into());
        }
        if !a.len().is_multiple_of(cols) {
            return Err(SgError::NotMultiple { what: "row-major matrix", len: a.len(), row: cols }.into());
        }
        let rows = a.len() / cols;
        let what = "padded matrix (host copy)";
        let too_big = || SgError::Allocation { what, bytes: u128::MAX };
        let lda = cols.checked_next_multiple_of(ROW_ALIGN / size_of::<T>()).ok_or_else(too_big)?;
        let mut padded = try_vec(what, checked_len::<T>(what, rows.max(1) as u64, lda)?, T::zero())?;
        for (r, row) in a.chunks(cols).enumerate() {
            padded[r * lda..][..cols].copy_from_slice(row);
        }
        Ok(DeviceMatrix { gpu: gpu.clone(), rows, cols, lda, data: gpu.upload(&padded)? })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns (`p`, the length of `y`).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// `y = Σ_i x[i] · a.row(ix[i])`: uploads `x` and `ix`, downloads `y`.
    ///
    /// ```no_run
    /// let gpu = cuda_kernels::Gpu::new(0)?;
    /// let a = sg_cuda::DeviceMatrix::upload(&gpu, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], 2)?;
    /// assert_eq!(a.spvm(&[2.0, 1.0], &[0, 2])?, vec![7.0, 10.0]);
    /// # Ok::<(), sg_cuda::Error>(())
    /// ```
    ///
    /// # Errors
    /// Length mismatch or a row index past the matrix; device errors.
    pub fn spvm(&self, x: &[T], ix: &[usize]) -> Result<Vec<T>> {
        self.spvm_with(x, ix, &SpvmConfig::default())
    }

    /// [`spvm`](Self::spvm) with explicit launch parameters.
    ///
    /// # Errors
    /// As `spvm`, plus [`Error::Config`].
    pub fn spvm_with(&self, x: &[T], ix: &[usize], cfg: &SpvmConfig) -> Result<Vec<T>> {
        if x.len() != ix.len() {
            return Err(SgError::LengthMismatch {
                what: "spvm row indices (one per entry of x)",
                expected: x.len(),
                got: ix.len(),
            }
            .into());
        }
        if let Some(&r) = ix.iter().find(|&&r| r >= self.rows) {
            return Err(SgError::IndexOutOfRange {
                what: "spvm matrix row",
                idx: r as u64,
                len: self.rows as u64,
            }
            .into());
        }
        if x.is_empty() {
            return Ok(try_vec("spvm result", self.cols, T::zero())?);
        }
        let rows: Vec<u64> = ix.iter().map(|&r| r as u64).collect();
        let dx = self.gpu.upload(x)?;
        let dix = self.gpu.upload(&rows)?;
        let mut y = self.gpu.zeros::<T>(self.cols)?;
        self.spvm_device(&dx, &dix, &mut y, cfg)?;
        Ok(self.gpu.download(&y)?)
    }

    /// spvm on device buffers, queued on the matrix's stream. Row indices are checked on the
    /// device without a round trip: one at or past `rows()` reads nothing and makes every output
    /// NaN.
    ///
    /// # Errors
    /// [`Error::Shape`] for mismatched lengths; [`Error::Config`]; launch failures.
    pub fn spvm_device(
        &self,
        x: &DeviceBuffer<T>,
        ix: &DeviceBuffer<u64>,
        y: &mut DeviceBuffer<T>,
        cfg: &SpvmConfig,
    ) -> Result<()> {
        self.spvm_device_on(&self.gpu, x, ix, y, cfg)
    }

    /// The launches [`spvm_with`](Self::spvm_with) makes for `nsel` selected rows: a grid over
    /// the columns and over chunks of the selected rows, filling every SM (see
    /// [`crate::plan::plan_spvm`]).
    ///
    /// # Errors
    /// Kernel load failures; a grid past CUDA's limits.
    pub fn plan(&self, cfg: &SpvmConfig, nsel: usize) -> Result<SpvmPlan> {
        Ok(self.kernel_and_plan(&self.gpu, cfg, nsel)?.1)
    }

    /// The product kernel (looked up once per process, with its attributes) and the plan.
    fn kernel_and_plan(&self, gpu: &Gpu, cfg: &SpvmConfig, nsel: usize) -> Result<(Kernel, SpvmPlan)> {
        cfg.validate()?;
        let name = launch::spvm_kernel::<T>(cfg.outputs_per_thread);
        let kernel = gpu.kernel(launch::SPVM_MODULE, &name)?;
        launch::check_block(&kernel, cfg.block_size, &name)?;
        let regs = kernel.attributes().registers.max(1);
        let limits = SmLimits::for_device(gpu.props());
        let plan = plan::plan_spvm(cfg, size_of::<T>(), self.cols, nsel, regs, &limits)?;
        Ok((kernel, plan))
    }

    /// The handle the matrix was uploaded with (streams for it come from here).
    pub(crate) fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// [`spvm_device`](Self::spvm_device) queued on `gpu`'s stream (a handle of the matrix's
    /// context, e.g. [`Gpu::with_new_stream`] of [`gpu`](Self::gpu)), so several products can
    /// run on separate streams.
    pub(crate) fn spvm_device_on(
        &self,
        gpu: &Gpu,
        x: &DeviceBuffer<T>,
        ix: &DeviceBuffer<u64>,
        y: &mut DeviceBuffer<T>,
        cfg: &SpvmConfig,
    ) -> Result<()> {
        cfg.validate()?;
        // nsel stays below 2^31 so the kernel's u32 chunk counter `i0 += blockDim.x` cannot wrap.
        if x.len() != ix.len() || y.len() < self.cols || x.len() > i32::MAX as usize {
            return Err(Error::Shape(format!(
                "spvm with {} coefficients, {} indices, {} outputs for {} columns",
                x.len(),
                ix.len(),
                y.len(),
                self.cols
            )));
        }
        let (kernel, plan) = self.kernel_and_plan(gpu, cfg, x.len())?;
        let launch = LaunchConfig {
            grid_dim: (plan.col_blocks, plan.chunks, 1),
            block_dim: (cfg.block_size, 1, 1),
            shared_mem_bytes: cfg.shared_bytes::<T>(),
        };
        kernel.check(&launch)?;
        let (p, lda, nrows, nsel) = (self.cols as u64, self.lda as u64, self.rows as u64, x.len() as u32);
        let rpc = plan.rows_per_chunk;
        let mut partial = if plan.chunks > 1 {
            let len = checked_len::<T>("spvm partial sums", u64::from(plan.chunks), self.cols)?;
            // SAFETY: uninitialised device memory; every one of its chunks · p values is written by
            // the product kernel (each block (x, y) writes its columns of row y) before the
            // reduction, queued after it on the same stream, reads it.
            let buf = unsafe { gpu.stream().alloc::<T>(len) }
                .map_err(|e| cuda_kernels::Error::from_alloc(e, len * size_of::<T>()))?;
            Some(buf)
        } else {
            None
        };
        // SAFETY: sg_spvm_T_pPT(u64 p, u64 lda, u64 nrows, u32 nsel, u32 rows_per_chunk, const T* x,
        // const u64* ix, const T* a, T* out): x and ix hold nsel entries, a holds nrows · lda values
        // with p <= lda and the kernel reads only rows below nrows; out holds chunks · p values
        // (the partial buffer) or, with one chunk, at least p (y); the shared memory size matches
        // the kernel's layout.
        unsafe {
            gpu.launch(&kernel, launch, |a| {
                a.arg(&p).arg(&lda).arg(&nrows).arg(&nsel).arg(&rpc).arg(x).arg(ix).arg(&self.data);
                match partial.as_mut() {
                    Some(buf) => a.arg(buf),
                    None => a.arg(&mut *y),
                };
            })?;
        }
        if let Some(partial) = &partial {
            let reduce = gpu.kernel(launch::SPVM_MODULE, &launch::spvm_reduce_kernel::<T>())?;
            let threads = 256u32;
            let blocks = self.cols.div_ceil(threads as usize).min(plan::REDUCE_MAX_BLOCKS) as u32;
            let cfg =
                LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            let chunks = plan.chunks;
            // SAFETY: sg_spvm_reduce_T(u64 p, u32 chunks, const T* partial, T* y): partial holds
            // chunks · p values, y at least p; the loop is grid-stride, so any grid covers p.
            unsafe {
                gpu.launch(&reduce, cfg, |a| {
                    a.arg(&p).arg(&chunks).arg(partial).arg(&mut *y);
                })?;
            }
        }
        Ok(())
    }
}
