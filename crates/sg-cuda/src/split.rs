//! Evaluation split between the CPU (sg-cpu) and the GPU (thesis chapter 6, static scheduling).
//!
//! The `m` points are cut in two: the first `m_cpu` rows go to [`sg_cpu::Evaluator`], the rest to
//! the GPU, both running at the same time. `m_cpu` comes from an explicit fraction
//! ([`Split::CpuFraction`]) or from a calibration run ([`Split::Calibrate`]) that fits an affine
//! time model `t(w) = per_point · w + fixed` to each device from runs at `w` and `2w` points
//! (Eq. 6.4) and picks the `w_cpu` where the two model times meet (Eq. 6.5), clamped to
//! `[0, m]`. The interface is small on purpose: [`AffineModel`] and [`static_split`] carry no
//! sparse grid knowledge and can move to `hetero-sched` unchanged.

use std::time::Instant;

use cuda_kernels::Gpu;
use ndarray::{Array2, ArrayView2, s};
use sg_core::Grid;

use crate::config::EvalConfig;
use crate::device::{DeviceGrid, DeviceReal};
use crate::error::{Error, Result};

/// How to divide the points between CPU and GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Split {
    /// This fraction of the points (in `[0, 1]`) goes to the CPU: 1.0 is CPU only, 0.0 GPU only.
    CpuFraction(f64),
    /// Measure both devices on `sample` and `2 · sample` random points and split by the fitted
    /// affine models.
    Calibrate {
        /// Calibration size (points).
        sample: usize,
    },
}

/// `t(w) = per_point · w + fixed` in seconds (thesis Eq. 6.4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AffineModel {
    /// Seconds per point.
    pub per_point: f64,
    /// Fixed seconds per call (launch and transfer latency).
    pub fixed: f64,
}

impl AffineModel {
    /// The model through `(w, t_w)` and `(2w, t_2w)`; slope and intercept clamped at 0.
    pub fn from_two_runs(w: usize, t_w: f64, t_2w: f64) -> Self {
        let w = w.max(1) as f64;
        let per_point = ((t_2w - t_w) / w).max(0.0);
        AffineModel { per_point, fixed: (t_w - per_point * w).max(0.0) }
    }

    /// Predicted seconds for `w` points.
    pub fn time(&self, w: usize) -> f64 {
        self.per_point * w as f64 + self.fixed
    }
}

/// Points for the CPU out of `total` so that both model times meet (Eq. 6.5):
/// `w_cpu = (δ_gpu − δ_cpu + γ_gpu · w) / (γ_cpu + γ_gpu)`, clamped to `[0, total]`; a device
/// with no cost at all gets everything.
///
/// ```
/// use sg_cuda::split::{AffineModel, static_split};
/// let cpu = AffineModel { per_point: 10e-9, fixed: 0.0 };
/// let gpu = AffineModel { per_point: 1e-9, fixed: 0.0 };
/// assert_eq!(static_split(1100, &cpu, &gpu), 100);
/// ```
pub fn static_split(total: usize, cpu: &AffineModel, gpu: &AffineModel) -> usize {
    let slopes = cpu.per_point + gpu.per_point;
    if slopes.is_nan() || slopes <= 0.0 || !slopes.is_finite() {
        return 0;
    }
    let w = (gpu.fixed - cpu.fixed + gpu.per_point * total as f64) / slopes;
    if w.is_nan() { 0 } else { w.round().clamp(0.0, total as f64) as usize }
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

/// Evaluation of one grid on the CPU and, where a GPU is given, on the GPU at the same time.
#[derive(Debug)]
pub struct HeteroEvaluator<T: DeviceReal> {
    cpu: sg_cpu::Evaluator,
    values: Vec<T>,
    d: usize,
    device: Option<DeviceGrid<T>>,
    cpu_fraction: f64,
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
    /// Bad split fraction, plan errors of either side, device errors.
    pub fn new(grid: &Grid<T>, gpu: Option<&Gpu>, split: Split) -> Result<Self> {
        let cpu = sg_cpu::Evaluator::new(grid.spec())?;
        let device = gpu.map(|g| DeviceGrid::upload(g, grid)).transpose()?;
        let mut ev = HeteroEvaluator {
            cpu,
            values: grid.values().to_vec(),
            d: grid.spec().dim(),
            device,
            cpu_fraction: 1.0,
            config: EvalConfig::default(),
        };
        // The split is checked with or without a GPU, so a bad one never passes silently.
        match split {
            Split::CpuFraction(f) => ev.set_cpu_fraction(f)?,
            Split::Calibrate { sample } => {
                ev.calibrate(sample)?;
            }
        }
        Ok(ev)
    }

    /// The share of points the CPU gets.
    pub fn cpu_fraction(&self) -> f64 {
        self.cpu_fraction
    }

    /// Sets the CPU share explicitly (ignored without a GPU).
    ///
    /// # Errors
    /// [`Error::Config`] outside `[0, 1]`.
    pub fn set_cpu_fraction(&mut self, fraction: f64) -> Result<()> {
        fraction_split(1, fraction)?;
        if self.device.is_some() {
            self.cpu_fraction = fraction;
        }
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

    /// Times both devices on `sample` and `2 · sample` quasi-random points, fits the affine models
    /// and sets the CPU fraction for a batch of `2 · sample · 10` points. Returns the fraction.
    ///
    /// # Errors
    /// Device errors; [`Error::Config`] for `sample == 0`.
    pub fn calibrate(&mut self, sample: usize) -> Result<f64> {
        if sample == 0 {
            return Err(Error::Config("calibration sample of 0 points".into()));
        }
        let Some(dev) = &self.device else { return Ok(self.cpu_fraction) };
        let points = calibration_points::<T>(2 * sample, self.d);
        let (one, two) = (points.slice(s![..sample, ..]), points.view());
        let time = |f: &dyn Fn(ArrayView2<'_, T>) -> Result<()>, p: ArrayView2<'_, T>| -> Result<f64> {
            f(p)?; // warm-up (kernel load, caches)
            let t0 = Instant::now();
            f(p)?;
            Ok(t0.elapsed().as_secs_f64())
        };
        let run_cpu = |p: ArrayView2<'_, T>| -> Result<()> {
            self.cpu.evaluate(&self.values, 1, p)?;
            Ok(())
        };
        let run_gpu = |p: ArrayView2<'_, T>| -> Result<()> {
            dev.evaluate_with(p, &self.config)?;
            Ok(())
        };
        let cpu = AffineModel::from_two_runs(sample, time(&run_cpu, one)?, time(&run_cpu, two)?);
        let gpu = AffineModel::from_two_runs(sample, time(&run_gpu, one)?, time(&run_gpu, two)?);
        let total = 20 * sample;
        self.cpu_fraction = static_split(total, &cpu, &gpu) as f64 / total as f64;
        tracing::debug!(?cpu, ?gpu, fraction = self.cpu_fraction, "sg-cuda split calibrated");
        Ok(self.cpu_fraction)
    }

    /// The interpolant at the rows of `points` (`m x d`): the first `round(m · fraction)` rows on
    /// the CPU, the rest on the GPU, concurrently. Returns `m x 1`.
    ///
    /// # Errors
    /// Bad points; errors of either device.
    pub fn evaluate(&self, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
        let m = points.nrows();
        if points.ncols() != self.d {
            return Err(Error::Shape(format!(
                "points have {} columns, the grid {} dimensions",
                points.ncols(),
                self.d
            )));
        }
        let m_cpu = fraction_split(m, self.cpu_fraction)?;
        let (cpu_part, gpu_part) = (points.slice(s![..m_cpu, ..]), points.slice(s![m_cpu.., ..]));
        let run_cpu = || -> Result<Vec<T>> { Ok(self.cpu.evaluate(&self.values, 1, cpu_part)?) };
        let (cpu_out, gpu_out) = match &self.device {
            Some(dev) if m_cpu < m => std::thread::scope(|sc| {
                let gpu_job = sc.spawn(|| dev.evaluate_with(gpu_part, &self.config));
                let cpu_out = if m_cpu > 0 { run_cpu() } else { Ok(Vec::new()) };
                let gpu_out =
                    gpu_job.join().unwrap_or_else(|_| Err(Error::Config("GPU thread panicked".into())));
                (cpu_out, gpu_out.map(Some))
            }),
            _ => (run_cpu(), Ok(None)),
        };
        let mut out = cpu_out?;
        if let Some(g) = gpu_out? {
            out.extend(g.iter().copied());
        }
        Ok(Array2::from_shape_vec((m, 1), out).expect("m values"))
    }
}

/// Deterministic points spread over the domain (a Kronecker sequence), for calibration.
fn calibration_points<T: DeviceReal>(m: usize, d: usize) -> Array2<T> {
    Array2::from_shape_fn((m, d), |(j, t)| {
        let alpha = ((t + 2) as f64).sqrt().fract();
        T::from_f64(((j + 1) as f64 * alpha).fract())
    })
}
