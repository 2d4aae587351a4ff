//! Batched evaluation on the device (`cuda-kernels/sg/sg_evaluate.cuh`, one module per element
//! type and dimension in `cuda-kernels/sg/eval/`): every thread walks the trie of blocks once for
//! its `pt` points held in registers and accumulates every output component; the trie sits in
//! shared memory when that costs no occupancy ([`crate::plan`]). Also the streamed variant that overlaps the upload of one batch with the computation of
//! the previous one.

use cuda_kernels::{DeviceBuffer, Gpu, Kernel, LaunchConfig, PushKernelArg};
use cudarc::driver::PinnedHostSlice;
use ndarray::{Array1, Array2, ArrayView2};
use sg_core::reference::check_point_coords;

use crate::config::{EvalConfig, MAX_TEMPLATED_DIM};
use crate::device::{DeviceGrid, DeviceReal};
use crate::error::{Error, Result};
use crate::launch;
use crate::occupancy::SmLimits;
use crate::plan::{self, EvalPlan};
use hetero_sched::tune::Fingerprint;
use hetero_sched::tune::dispatch::{self as tuned_dispatch, Tunable};
use sg_core::alloc::{checked_len, try_with_capacity};

/// Copies an `m x d` view into row-major order after checking the shape and the domain.
pub(crate) fn flatten_points<T: DeviceReal>(d: usize, points: ArrayView2<'_, T>) -> Result<Vec<T>> {
    if points.ncols() != d {
        return Err(Error::Shape(format!("points have {} columns, the grid {d} dimensions", points.ncols())));
    }
    let mut flat = try_with_capacity("evaluation points (host copy)", points.len())?;
    flat.extend(points.iter().copied());
    for (row, x) in flat.chunks_exact(d).enumerate() {
        check_point_coords(d, x, row)?;
    }
    Ok(flat)
}

impl<T: DeviceReal> DeviceGrid<T> {
    /// The interpolant (values read as surpluses) at the rows of `points` (`m x d`): an
    /// `m x components` array. Uploads the points, runs the kernel with the launch parameters
    /// tuned for this device and shape ([`eval_config`](Self::eval_config)), downloads the
    /// results.
    ///
    /// # Errors
    /// Wrong column count, non-finite coordinates or points outside `[0, 1]^d`; device errors.
    pub fn evaluate(&self, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
        self.evaluate_with(points, &self.eval_config(points.nrows()))
    }

    /// The launch parameters [`evaluate`](Self::evaluate) uses for `m` points: the
    /// configuration tuned for this device, element type, dimension and number of points in the
    /// tuning cache (read once per process), else [`EvalConfig::default`].
    pub fn eval_config(&self, m: usize) -> EvalConfig {
        let fp = Fingerprint::gpu(&self.gpu);
        EvalConfig::tuned_on::<T>(tuned_dispatch::global(), &fp, (self.spec.dim(), m))
    }

    /// [`evaluate`](Self::evaluate) of a scalar grid as a vector.
    ///
    /// # Errors
    /// As `evaluate`, plus [`Error::Shape`] for a grid of vectors.
    pub fn evaluate_scalar(&self, points: ArrayView2<'_, T>) -> Result<Array1<T>> {
        if self.ncomp != 1 {
            return Err(Error::Shape(format!("scalar evaluation of a grid with {} components", self.ncomp)));
        }
        Ok(self.evaluate(points)?.into_shape_with_order(points.nrows()).expect("m x 1 values"))
    }

    /// [`evaluate`](Self::evaluate) with explicit launch parameters.
    ///
    /// # Errors
    /// As `evaluate`, plus [`Error::Config`].
    pub fn evaluate_with(&self, points: ArrayView2<'_, T>, cfg: &EvalConfig) -> Result<Array2<T>> {
        let _span = tracing::debug_span!("DeviceGrid::evaluate", m = points.nrows()).entered();
        cfg.validate()?;
        let m = points.nrows();
        let flat = flatten_points(self.spec.dim(), points)?;
        if m == 0 {
            return Ok(Array2::zeros((0, self.ncomp)));
        }
        let dev_points = self.gpu.upload(&flat)?;
        let mut out = self.gpu.zeros::<T>(checked_len::<T>("evaluation output", m as u64, self.ncomp)?)?;
        self.evaluate_device(&self.gpu, &dev_points, m, &mut out, cfg)?;
        let host = self.gpu.download(&out)?;
        Ok(Array2::from_shape_vec((m, self.ncomp), host).expect("m x ncomp values"))
    }

    /// Evaluation on device buffers, queued on `gpu`'s stream (the grid's device; any of its
    /// streams): `points` holds at least `m · d` coordinates, row-major, already checked to lie in
    /// `[0, 1]^d`; `out` receives `m · components` values. Nothing is synchronised.
    ///
    /// # Errors
    /// [`Error::Shape`] for buffers that are too short; [`Error::Config`] for bad launch
    /// parameters, a block size the kernel's registers do not allow, or a `gpu` handle on another
    /// context than the grid's; launch failures.
    pub fn evaluate_device(
        &self,
        gpu: &Gpu,
        points: &DeviceBuffer<T>,
        m: usize,
        out: &mut DeviceBuffer<T>,
        cfg: &EvalConfig,
    ) -> Result<()> {
        cfg.validate()?;
        // The grid's buffers belong to its context: a handle on another one cannot use them.
        if gpu.context().cu_ctx() != self.gpu.context().cu_ctx() {
            return Err(Error::Config(format!(
                "evaluation queued on device {} for a grid on device {}",
                gpu.context().ordinal(),
                self.gpu.context().ordinal()
            )));
        }
        let d = self.spec.dim();
        let too_short = |need: Option<usize>, have: usize| need.is_none_or(|n| have < n);
        if too_short(m.checked_mul(d), points.len()) || too_short(m.checked_mul(self.ncomp), out.len()) {
            return Err(Error::Shape(format!(
                "{} coordinates and {} outputs for {m} points of dimension {d} with {} components",
                points.len(),
                out.len(),
                self.ncomp
            )));
        }
        if m == 0 {
            return Ok(());
        }
        let (kernel, plan) = self.eval_kernel_and_plan(gpu, cfg, m)?;
        let launch = LaunchConfig {
            grid_dim: (plan.blocks, 1, 1),
            block_dim: (plan.threads, 1, 1),
            shared_mem_bytes: plan.shared_bytes as u32,
        };
        kernel.check(&launch)?;
        let n_nodes = self.trie.nodes().len() as u64;
        let staged = u32::from(plan.staged);
        let (ncomp, ctile, m64, d32) = (self.ncomp as u32, plan.ctile, m as u64, d as u32);
        let generic = d > MAX_TEMPLATED_DIM;
        // SAFETY: the argument lists match sg_eval_T_dD_pPT(const u64* nodes, u64 n_nodes,
        // u32 staged, const T* values, u32 ncomp, u32 ctile, const T* points, u64 m, T* out) and
        // sg_eval_T_generic(..., u32 staged, u32 d, ...); the trie's leaf offsets plus in-block
        // positions stay inside the value buffer (emulator tests), points and out were checked
        // above, and the dynamic shared memory holds the staged nodes and (ctile - 1) · pt ·
        // blockDim accumulators (EvalPlan::shared_bytes).
        unsafe {
            gpu.launch(&kernel, launch, |a| {
                a.arg(&self.trie_nodes).arg(&n_nodes).arg(&staged);
                if generic {
                    a.arg(&d32);
                }
                a.arg(&self.values).arg(&ncomp).arg(&ctile).arg(points).arg(&m64).arg(&mut *out);
            })?;
        }
        Ok(())
    }

    /// The launch [`evaluate_with`](Self::evaluate_with) makes for `m` points: one launch of
    /// `blocks` blocks whose trie walks accumulate `ctile` components each (all of them unless
    /// the shared accumulators would halve the occupancy), the trie staged when that costs no
    /// resident warps. Uses the kernel's register count as the device reports it.
    ///
    /// # Errors
    /// As [`evaluate_device`](Self::evaluate_device).
    pub fn eval_plan(&self, cfg: &EvalConfig, m: usize) -> Result<EvalPlan> {
        Ok(self.eval_kernel_and_plan(&self.gpu, cfg, m)?.1)
    }

    /// The kernel an evaluation of `m` points launches (looked up once per process, with its
    /// attributes) and its plan.
    fn eval_kernel_and_plan(&self, gpu: &Gpu, cfg: &EvalConfig, m: usize) -> Result<(Kernel, EvalPlan)> {
        cfg.validate()?;
        let d = self.spec.dim();
        let name = launch::eval_kernel::<T>(d, cfg.pt::<T>(d));
        let kernel = gpu.kernel(&launch::eval_module::<T>(d), &name)?;
        launch::check_block(&kernel, cfg.block_size, &name)?;
        let regs = kernel.attributes().registers;
        let limits = SmLimits::for_device(gpu.props());
        let plan = plan::plan_eval(
            cfg,
            size_of::<T>(),
            (d, m, self.ncomp),
            self.trie.bytes(),
            (regs > 0).then_some(regs),
            &limits,
        )?;
        Ok((kernel, plan))
    }

    /// Evaluates a sequence of point batches, overlapping the upload of batch `k + 1` with the
    /// computation of batch `k`: two streams, each with page-locked host buffers and device
    /// buffers of its own, used alternately. Returns one `m_k x components` array per batch.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate), for any batch.
    pub fn evaluate_stream<'a, I>(&self, batches: I, cfg: &EvalConfig) -> Result<Vec<Array2<T>>>
    where
        I: IntoIterator<Item = ArrayView2<'a, T>>,
    {
        let _span = tracing::debug_span!("DeviceGrid::evaluate_stream").entered();
        cfg.validate()?;
        let d = self.spec.dim();
        let mut slots = [Slot::new(self.gpu.with_new_stream()?), Slot::new(self.gpu.with_new_stream()?)];
        let mut results: Vec<Option<Array2<T>>> = Vec::new();
        for (k, batch) in batches.into_iter().enumerate() {
            let flat = flatten_points(d, batch)?;
            let m = batch.nrows();
            results.push(None);
            let slot = &mut slots[k % 2];
            slot.finish(self.ncomp, &mut results)?;
            if m == 0 {
                results[k] = Some(Array2::zeros((0, self.ncomp)));
                continue;
            }
            slot.reserve(flat.len(), m * self.ncomp)?;
            let gpu = slot.gpu.clone();
            let (pin_in, dev_in, dev_out, pin_out) = slot.buffers();
            pin_in.as_mut_slice()?[..flat.len()].copy_from_slice(&flat);
            gpu.stream().memcpy_htod(pin_in, dev_in)?;
            self.evaluate_device(&gpu, dev_in, m, dev_out, cfg)?;
            gpu.stream().memcpy_dtoh(dev_out, pin_out)?;
            slot.pending = Some((k, m));
        }
        for slot in &mut slots {
            slot.finish(self.ncomp, &mut results)?;
        }
        Ok(results.into_iter().map(|r| r.expect("every batch finished")).collect())
    }
}

/// Pinned input, device input, device output, pinned output of one stream.
pub(crate) type SlotBuffers<T> = (PinnedHostSlice<T>, DeviceBuffer<T>, DeviceBuffer<T>, PinnedHostSlice<T>);

/// Makes `bufs` (page-locked input, device input, device output, page-locked output) hold at
/// least `inputs` coordinates and `outputs` results, reallocating only when they are too small.
pub(crate) fn reserve_staging<T: DeviceReal>(
    gpu: &Gpu,
    bufs: &mut Option<SlotBuffers<T>>,
    inputs: usize,
    outputs: usize,
) -> Result<()> {
    if bufs.as_ref().is_some_and(|b| b.0.len() >= inputs && b.3.len() >= outputs) {
        return Ok(());
    }
    *bufs = None;
    let ctx = gpu.context();
    // SAFETY: page-locked allocations; the input buffer is written before every copy and the
    // output buffer read only after the device wrote it.
    let pin_in = unsafe { ctx.alloc_pinned::<T>(inputs) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, inputs * size_of::<T>()))?;
    // SAFETY: as above; plain page-locked memory, written by the device before it is read.
    let pin_out = unsafe { ctx.alloc_pinned_with_flags::<T>(outputs, 0) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, outputs * size_of::<T>()))?;
    let dev_in = gpu.zeros::<T>(inputs)?;
    let dev_out = gpu.zeros::<T>(outputs)?;
    *bufs = Some((pin_in, dev_in, dev_out, pin_out));
    Ok(())
}

/// One stream of [`DeviceGrid::evaluate_stream`] with its buffers and the batch in flight.
struct Slot<T: DeviceReal> {
    gpu: Gpu,
    bufs: Option<SlotBuffers<T>>,
    pending: Option<(usize, usize)>,
}

impl<T: DeviceReal> Slot<T> {
    fn new(gpu: Gpu) -> Self {
        Slot { gpu, bufs: None, pending: None }
    }

    /// Makes the buffers hold at least `inputs` coordinates and `outputs` results.
    fn reserve(&mut self, inputs: usize, outputs: usize) -> Result<()> {
        reserve_staging(&self.gpu, &mut self.bufs, inputs, outputs)
    }

    fn buffers(
        &mut self,
    ) -> (&mut PinnedHostSlice<T>, &mut DeviceBuffer<T>, &mut DeviceBuffer<T>, &mut PinnedHostSlice<T>) {
        let b = self.bufs.as_mut().expect("reserved");
        (&mut b.0, &mut b.1, &mut b.2, &mut b.3)
    }

    /// Waits for the batch in flight and stores its results.
    fn finish(&mut self, ncomp: usize, results: &mut [Option<Array2<T>>]) -> Result<()> {
        if let Some((k, m)) = self.pending.take() {
            self.gpu.synchronize()?;
            let out = self.bufs.as_ref().expect("buffers of a pending batch").3.as_slice()?;
            results[k] =
                Some(Array2::from_shape_vec((m, ncomp), out[..m * ncomp].to_vec()).expect("m x ncomp"));
        }
        Ok(())
    }
}
