//! Evaluation split between the CPU (sg-cpu) and the GPU (thesis chapter 6), on
//! [`hetero_sched::split`].
//!
//! Evaluation at `m` points is a [`Splittable`] operation over the point rows: the CPU part runs
//! [`sg_cpu::Evaluator`], the GPU part uploads a range of rows through page-locked buffers on its
//! own stream, runs the evaluation kernel and copies the results back. Three ways to cut:
//!
//! - [`Split::CpuFraction`]: a fixed share of the rows goes to the CPU;
//! - [`Split::Calibrate`]: both devices are timed on two sizes, affine models `t = γ·w + δ` are
//!   fitted (Eq. 6.4) and every call splits its `m` rows for equal finish time (Eq. 6.5, with
//!   clamping: small batches stay on the CPU when the GPU's fixed cost dominates);
//! - [`Split::Dynamic`]: the multi-grain queue of Listing 6.1: CPU threads take small grains,
//!   the GPU large ones over two streams, so uploads overlap computation.

use std::ops::Range;
use std::sync::Arc;

use cuda_kernels::Gpu;
use hetero_sched::split::{
    self as hs, BoxError, CpuDevice, CudaDevice, Device, DeviceKind, DynamicPlan, ModelKey, MonotonicClock,
    SplitError, SplitStore, Splittable,
};
use ndarray::{Array2, ArrayView2};
use sg_core::Grid;

use crate::config::EvalConfig;
use crate::device::{DeviceGrid, DeviceReal};
use crate::error::{Error, Result};
use crate::evaluate::flatten_points;

pub use hetero_sched::split::AffineModel;

/// Streams the GPU side rotates over.
const GPU_STREAMS: usize = 2;

/// Timed runs per calibration size (median).
const CALIBRATION_RUNS: usize = 3;

/// How to divide the points between CPU and GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Split {
    /// This fraction of the points (in `[0, 1]`) goes to the CPU: 1.0 is CPU only, 0.0 GPU only.
    CpuFraction(f64),
    /// Measure both devices on `sample` and `2 · sample` points and split every batch by the
    /// fitted affine models.
    Calibrate {
        /// Calibration size (points).
        sample: usize,
    },
    /// The multi-grain dynamic queue: CPU workers take `cpu_grain` points, the GPU `gpu_grain`
    /// (both calibrated at `gpu_grain` and `2 · gpu_grain` points first, for the grain times).
    Dynamic {
        /// Points per CPU task (per thread; the thesis found 512 near peak).
        cpu_grain: usize,
        /// Points per GPU task (a multiple of the points one wave of thread blocks covers).
        gpu_grain: usize,
    },
}

/// Points for the CPU out of `total` so that both model times meet (Eq. 6.5), clamped to
/// `[0, total]` ([`hetero_sched::split::solve_static`] for two devices).
///
/// ```
/// use sg_cuda::split::{AffineModel, static_split};
/// let cpu = AffineModel::new(10e-9, 0.0);
/// let gpu = AffineModel::new(1e-9, 0.0);
/// assert_eq!(static_split(1100, &cpu, &gpu)?, 100);
/// # Ok::<(), sg_cuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::Config`] for models with NaN, infinite or negative coefficients.
pub fn static_split(total: usize, cpu: &AffineModel, gpu: &AffineModel) -> Result<usize> {
    Ok(hs::solve_static(total, &[*cpu, *gpu], None).map_err(from_split)?[0])
}

/// Points for the CPU out of `total` at a CPU `fraction`.
///
/// # Errors
/// [`Error::Config`] when `fraction` is not in `[0, 1]`.
pub fn fraction_split(total: usize, fraction: f64) -> Result<usize> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(Error::Config(format!("CPU fraction {fraction} outside [0, 1]")));
    }
    Ok(((total as f64 * fraction).round() as usize).min(total))
}

/// How [`HeteroEvaluator::evaluate`] cuts a batch.
#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Fraction(f64),
    Models { cpu: AffineModel, gpu: AffineModel, reference: usize },
    Dynamic { cpu: AffineModel, gpu: AffineModel, cpu_grain: usize, gpu_grain: usize },
}

/// Evaluation of one grid on the CPU and, where a GPU is given, on the GPU at the same time.
#[derive(Debug)]
pub struct HeteroEvaluator<T: DeviceReal> {
    cpu: sg_cpu::Evaluator,
    values: Vec<T>,
    d: usize,
    cpu_device: Arc<dyn Device>,
    gpu: Option<(Arc<DeviceGrid<T>>, CudaDevice)>,
    mode: Mode,
    config: EvalConfig,
}

impl<T: DeviceReal> HeteroEvaluator<T> {
    /// Plans `grid` (values are surpluses) for both devices. Without a GPU every point goes to
    /// the CPU whatever `split` says. A calibration runs here.
    ///
    /// ```
    /// use sg_core::{Grid, GridSpec};
    /// use sg_cuda::{HeteroEvaluator, Split};
    /// let grid = Grid::<f64>::from_fn(GridSpec::regular(3, 4)?, |x| x.iter().sum())?;
    /// let ev = HeteroEvaluator::new(&grid, None, Split::CpuFraction(0.5))?;
    /// assert_eq!(ev.cpu_fraction(), 1.0); // no GPU given
    /// let ys = ev.evaluate(ndarray::array![[0.5, 0.5, 0.5]].view())?;
    /// assert_eq!(ys.shape(), &[1, 1]);
    /// # Ok::<(), sg_cuda::Error>(())
    /// ```
    ///
    /// # Errors
    /// Bad split parameters, plan errors of either side, device errors.
    pub fn new(grid: &Grid<T>, gpu: Option<&Gpu>, split: Split) -> Result<Self> {
        let cpu = sg_cpu::Evaluator::new(grid.spec())?;
        let gpu = match gpu {
            Some(g) => Some((
                Arc::new(DeviceGrid::upload(g, grid)?),
                CudaDevice::from_gpu(g.clone(), GPU_STREAMS).map_err(from_split)?,
            )),
            None => None,
        };
        let mut ev = HeteroEvaluator {
            cpu,
            values: grid.values().to_vec(),
            d: grid.spec().dim(),
            cpu_device: Arc::new(CpuDevice::global()),
            gpu,
            mode: Mode::Fraction(1.0),
            config: EvalConfig::default(),
        };
        // The split is checked with or without a GPU, so a bad one never passes silently.
        match split {
            Split::CpuFraction(f) => ev.set_cpu_fraction(f)?,
            // Construction goes through the default store (the tuning cache): a calibration
            // is measured once per machine, grid shape and sample, then read back.
            Split::Calibrate { sample } => {
                ev.calibrate_with_store(sample, hs::default_store())?;
            }
            Split::Dynamic { cpu_grain, gpu_grain } => {
                ev.dynamic_with(cpu_grain, gpu_grain, Some(hs::default_store()))?
            }
        }
        Ok(ev)
    }

    /// The share of points the CPU gets (for a calibrated split: at the calibration's reference
    /// batch of `20 · sample` points; for the dynamic queue: the modelled throughput share).
    pub fn cpu_fraction(&self) -> f64 {
        match self.mode {
            Mode::Fraction(f) => f,
            Mode::Models { cpu, gpu, reference } => {
                static_split(reference, &cpu, &gpu).map_or(1.0, |w| w as f64 / reference as f64)
            }
            Mode::Dynamic { cpu, gpu, .. } => {
                let (rc, rg) =
                    (1.0 / cpu.gamma.max(f64::MIN_POSITIVE), 1.0 / gpu.gamma.max(f64::MIN_POSITIVE));
                rc / (rc + rg)
            }
        }
    }

    /// The fitted models `(cpu, gpu)` of a calibrated or dynamic split.
    pub fn models(&self) -> Option<(AffineModel, AffineModel)> {
        match self.mode {
            Mode::Fraction(_) => None,
            Mode::Models { cpu, gpu, .. } | Mode::Dynamic { cpu, gpu, .. } => Some((cpu, gpu)),
        }
    }

    /// Sets the CPU share explicitly (ignored without a GPU).
    ///
    /// # Errors
    /// [`Error::Config`] outside `[0, 1]`.
    pub fn set_cpu_fraction(&mut self, fraction: f64) -> Result<()> {
        fraction_split(1, fraction)?;
        if self.gpu.is_some() {
            self.mode = Mode::Fraction(fraction);
        }
        Ok(())
    }

    /// Runs the CPU share on `device` instead of rayon's global pool: a pool of its own, or a
    /// stand-in such as a [`Throttled`](hetero_sched::split::Throttled) CPU in tests. A
    /// calibrated or dynamic split keeps the models it has; recalibrate after a change.
    ///
    /// # Errors
    /// [`Error::Config`] for a device that is not a CPU.
    pub fn set_cpu_device(&mut self, device: Arc<dyn Device>) -> Result<()> {
        if device.kind() != DeviceKind::Cpu {
            return Err(Error::Config(format!("{} is not a CPU device", device.fingerprint())));
        }
        self.cpu_device = device;
        Ok(())
    }

    /// Sets the GPU launch parameters.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn set_config(&mut self, config: EvalConfig) -> Result<()> {
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// Times both devices on `sample` and `2 · sample` quasi-random points (median of 3 runs
    /// each), fits the affine models and splits every later batch by them. Returns the CPU
    /// fraction at a batch of `20 · sample` points.
    ///
    /// # Errors
    /// Device errors; [`Error::Config`] for `sample == 0`.
    pub fn calibrate(&mut self, sample: usize) -> Result<f64> {
        if sample == 0 {
            return Err(Error::Config("calibration sample of 0 points".into()));
        }
        if let Some((cpu, gpu)) = self.fit_models(sample)? {
            self.mode = Mode::Models { cpu, gpu, reference: 20 * sample };
            tracing::debug!(?cpu, ?gpu, fraction = self.cpu_fraction(), "sg-cuda split calibrated");
        }
        Ok(self.cpu_fraction())
    }

    /// Switches to the multi-grain dynamic queue with these grains (calibrating the grain
    /// times at `gpu_grain` and `2 · gpu_grain` points; ignored without a GPU).
    ///
    /// # Errors
    /// [`Error::Config`] for a grain of 0; device errors.
    pub fn set_dynamic(&mut self, cpu_grain: usize, gpu_grain: usize) -> Result<()> {
        self.dynamic_with(cpu_grain, gpu_grain, None)
    }

    /// As [`set_dynamic`](Self::set_dynamic), through `store` when one is given.
    fn dynamic_with(
        &mut self,
        cpu_grain: usize,
        gpu_grain: usize,
        store: Option<&dyn SplitStore>,
    ) -> Result<()> {
        if cpu_grain == 0 || gpu_grain == 0 {
            return Err(Error::Config(format!("grains of {cpu_grain} (CPU) and {gpu_grain} (GPU) points")));
        }
        if let Some((cpu, gpu)) = self.fit_models_with(gpu_grain, store)? {
            self.mode = Mode::Dynamic { cpu, gpu, cpu_grain, gpu_grain };
        }
        Ok(())
    }

    /// [`calibrate`](Self::calibrate) through a calibration store: the models are measured only
    /// when `store` has none for these devices, this element type, this grid (dimension and
    /// point count) and this calibration size, and stored after.
    ///
    /// # Errors
    /// As `calibrate`; [`Error::Config`] when the store cannot be written.
    pub fn calibrate_with_store(&mut self, sample: usize, store: &dyn SplitStore) -> Result<f64> {
        if sample == 0 {
            return Err(Error::Config("calibration sample of 0 points".into()));
        }
        if let Some((cpu, gpu)) = self.fit_models_with(sample, Some(store))? {
            self.mode = Mode::Models { cpu, gpu, reference: 20 * sample };
        }
        Ok(self.cpu_fraction())
    }

    /// CPU and GPU models from runs at `sample` and `2 · sample` points; `None` without a GPU.
    fn fit_models(&self, sample: usize) -> Result<Option<(AffineModel, AffineModel)>> {
        self.fit_models_with(sample, None)
    }

    /// As `fit_models`, through `store` when one is given.
    fn fit_models_with(
        &self,
        sample: usize,
        store: Option<&dyn SplitStore>,
    ) -> Result<Option<(AffineModel, AffineModel)>> {
        let Some((_, gpu_device)) = &self.gpu else { return Ok(None) };
        let points = calibration_points::<T>(2 * sample, self.d);
        let op = self.op(points);
        let clock = MonotonicClock::new();
        let sizes = [sample, 2 * sample];
        let shape = format!("d{}-points{}-sample{sample}", self.d, self.values.len());
        let fit = |dev: &dyn Device| -> Result<AffineModel> {
            match store {
                Some(store) => {
                    let key = ModelKey::new(dev.fingerprint(), "sg-cuda/evaluate", T::SUFFIX)
                        .with_shape(shape.as_str());
                    hs::calibrate_cached(store, &key, &op, dev, &sizes, CALIBRATION_RUNS, &clock)
                }
                None => hs::calibrate(&op, dev, &sizes, CALIBRATION_RUNS, &clock),
            }
            .map_err(from_split)
        };
        Ok(Some((fit(self.cpu_device.as_ref())?, fit(gpu_device)?)))
    }

    /// The evaluation of `points` (row-major, already checked) as a splittable operation.
    fn op(&self, points: Vec<T>) -> EvalOp<'_, T> {
        EvalOp { ev: self, points, grid: self.gpu.as_ref().map(|g| g.0.clone()) }
    }

    /// The interpolant at the rows of `points` (`m x d`), split between CPU and GPU as the
    /// [`Split`] says, both running at the same time. Returns `m x 1`.
    ///
    /// # Errors
    /// Bad points; errors of either device.
    pub fn evaluate(&self, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
        let m = points.nrows();
        let flat = flatten_points(self.d, points)?;
        let op = self.op(flat);
        let pieces = match &self.gpu {
            None => hs::run_static(&op, &[self.cpu_device.as_ref()], &[m]),
            Some((_, gpu)) => {
                let devices: [&dyn Device; 2] = [self.cpu_device.as_ref(), gpu];
                match self.mode {
                    Mode::Fraction(f) => {
                        let w = fraction_split(m, f)?;
                        hs::run_static(&op, &devices, &[w, m - w])
                    }
                    Mode::Models { cpu, gpu, .. } => {
                        let w = static_split(m, &cpu, &gpu)?;
                        hs::run_static(&op, &devices, &[w, m - w])
                    }
                    Mode::Dynamic { cpu, gpu, cpu_grain, gpu_grain } => {
                        let workers = self.cpu_device.workers();
                        let plan = DynamicPlan::from_models(&[
                            (DeviceKind::Cpu, workers, cpu_grain, cpu),
                            (DeviceKind::Gpu, 1, gpu_grain, gpu),
                        ])
                        .map_err(from_split)?;
                        hs::run_dynamic(&op, &devices, &plan)
                    }
                }
            }
        }
        .map_err(from_split)?;
        let out = hs::concat(pieces);
        Ok(Array2::from_shape_vec((m, 1), out).expect("m values"))
    }
}

/// Evaluation of checked, row-major points: one work item per point.
struct EvalOp<'a, T: DeviceReal> {
    ev: &'a HeteroEvaluator<T>,
    points: Vec<T>,
    grid: Option<Arc<DeviceGrid<T>>>,
}

/// Page-locked input, device input, device output, page-locked output of one lane.
type LaneBuffers<T> = crate::evaluate::SlotBuffers<T>;

/// One stream of the GPU side: its buffers and the number of points in flight.
struct EvalLane<T: DeviceReal> {
    gpu: Gpu,
    grid: Arc<DeviceGrid<T>>,
    bufs: Option<LaneBuffers<T>>,
    pending: Option<usize>,
}

impl<T: DeviceReal> Splittable for EvalOp<'_, T> {
    type Output = Vec<T>;
    type Lane = EvalLane<T>;

    fn items(&self) -> usize {
        self.points.len() / self.ev.d.max(1)
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<T>, BoxError> {
        let d = self.ev.d;
        let rows = ArrayView2::from_shape((r.len(), d), &self.points[r.start * d..r.end * d])?;
        Ok(self.ev.cpu.evaluate(&self.ev.values, 1, rows)?)
    }

    fn cpu_splits_itself(&self) -> bool {
        true
    }

    fn has_gpu(&self) -> bool {
        self.grid.is_some()
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<EvalLane<T>, BoxError> {
        let grid = self.grid.clone().ok_or("no device grid")?;
        if device.cuda().is_none() {
            return Err(format!("{} is not a CUDA device", device.fingerprint()).into());
        }
        // The grid's buffers belong to its context: streams come from the grid's handle.
        Ok(EvalLane { gpu: grid.gpu().with_new_stream()?, grid, bufs: None, pending: None })
    }

    fn submit(&self, lane: &mut EvalLane<T>, r: Range<usize>) -> Result<(), BoxError> {
        let d = self.ev.d;
        let m = r.len();
        let src = &self.points[r.start * d..r.end * d];
        lane.reserve(src.len().max(1), m.max(1))?;
        let (pin_in, dev_in, dev_out, pin_out) = lane.bufs.as_mut().expect("reserved");
        pin_in.as_mut_slice()?[..src.len()].copy_from_slice(src);
        let stream = lane.gpu.stream().clone();
        stream.memcpy_htod(&*pin_in, &mut *dev_in)?;
        lane.grid.evaluate_device(&lane.gpu, dev_in, m, dev_out, &self.ev.config)?;
        stream.memcpy_dtoh(&*dev_out, &mut *pin_out)?;
        lane.pending = Some(m);
        Ok(())
    }

    fn complete(&self, lane: &mut EvalLane<T>) -> Result<Vec<T>, BoxError> {
        let m = lane.pending.take().ok_or("complete without a submitted range")?;
        lane.gpu.synchronize()?;
        let out = lane.bufs.as_ref().ok_or("no buffers")?.3.as_slice()?;
        Ok(out[..m].to_vec())
    }
}

impl<T: DeviceReal> EvalLane<T> {
    /// Makes the buffers hold at least `inputs` coordinates and `outputs` results.
    fn reserve(&mut self, inputs: usize, outputs: usize) -> Result<()> {
        crate::evaluate::reserve_staging(&self.gpu, &mut self.bufs, inputs, outputs)
    }
}

/// Maps the scheduler's errors back to sg-cuda's: a device's own error comes back as it was.
pub(crate) fn from_split(e: SplitError) -> Error {
    match e {
        SplitError::Cuda(e) => Error::Cuda(e),
        SplitError::Task { source, fingerprint } => match source.downcast::<Error>() {
            Ok(e) => *e,
            Err(other) => match other.downcast::<cuda_kernels::Error>() {
                Ok(e) => Error::Cuda(*e),
                Err(other) => match other.downcast::<sg_cpu::Error>() {
                    Ok(e) => Error::Cpu(*e),
                    Err(other) => Error::Config(format!("split evaluation on {fingerprint}: {other}")),
                },
            },
        },
        other => Error::Config(format!("split evaluation: {other}")),
    }
}

/// Deterministic points spread over the domain (a Kronecker sequence), for calibration.
fn calibration_points<T: DeviceReal>(m: usize, d: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(m * d);
    for j in 0..m {
        for t in 0..d {
            let alpha = ((t + 2) as f64).sqrt().fract();
            out.push(T::from_f64(((j + 1) as f64 * alpha).fract()));
        }
    }
    out
}
