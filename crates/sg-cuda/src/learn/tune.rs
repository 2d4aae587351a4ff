//! Tuning the learning kernels on the device with `hetero_sched`'s search: every configuration
//! is compiled (NVRTC with its `#define`s), timed with CUDA events and verified against the
//! embedded kernel's result; the log goes to the tuning cache under the key
//! [`StreamConfig::for_device`] reads, so later operators of that size run the best one.

use std::path::PathBuf;
use std::sync::Arc;

use cuda_kernels::{DeviceBuffer, Gpu};
use hetero_sched::tune::{
    Bench, Budget, CacheKey, Config, CudaEventClock, Kernel, Measured, Measurement, TuningCache, run,
    size_bucket, strategy,
};

use super::config::{LearnConfig, LearnKernel, StreamConfig, fingerprint};
use super::mass::MassOperator;
use super::points::GridPoints;
use super::streaming::{DeviceData, StreamingOperator};
use crate::device::DeviceReal;
use crate::error::{Error, Result};
use sg_core::Basis;
use sg_core::Real;

/// What a tuning run measured.
#[derive(Debug, Clone)]
pub struct TuneOutcome {
    /// The kernel tuned.
    pub kernel: LearnKernel,
    /// The size its dispatch buckets (`m · N`, or `N²` for the mass kernel).
    pub work: u64,
    /// The element type's name.
    pub element_type: &'static str,
    /// The fastest verified configuration and its median time in ms.
    pub best: Option<(StreamConfig, f64)>,
    /// Every measured configuration (Kernel Tuner's cache format when stored).
    pub log: Vec<Measured>,
}

impl TuneOutcome {
    /// The configurations that failed (compile, launch or verification).
    pub fn failures(&self) -> usize {
        self.log.iter().filter(|m| m.outcome.time().is_none()).count()
    }

    /// The median time of `config` if it was measured.
    pub fn time_of(&self, config: &StreamConfig) -> Option<f64> {
        let c = config.to_config();
        self.log.iter().find(|m| m.config == c).and_then(|m| m.outcome.time())
    }

    /// Stores the log in `cache` under this GPU model, kernel, type and size bucket.
    ///
    /// # Errors
    /// [`Error::Tune`] when the cache cannot be written.
    pub fn store(&self, gpu: &Gpu, cache: &TuningCache) -> Result<PathBuf> {
        let key = CacheKey::new(
            self.kernel.cache_name(),
            &fingerprint(gpu),
            self.element_type,
            &size_bucket(self.work),
        );
        Ok(cache.store(&key, StreamConfig::space(self.kernel), &self.log)?)
    }
}

/// How a search is run.
#[derive(Debug, Clone)]
pub struct TuneSettings {
    /// A `hetero_sched` strategy name ([`strategy::by_name`]).
    pub strategy: String,
    /// Configurations to measure.
    pub budget: u64,
    /// Timed runs per configuration (the median counts).
    pub runs: usize,
    /// Seed of the search.
    pub seed: u64,
}

impl Default for TuneSettings {
    fn default() -> Self {
        TuneSettings { strategy: strategy::DEFAULT.into(), budget: 40, runs: 5, seed: 0 }
    }
}

/// Tunes the mult or the transposed operator of `grid` on `data` (the other operator keeps the
/// embedded kernel while one is tuned).
///
/// # Errors
/// [`Error::Config`] for [`LearnKernel::Mass`]; [`Error::Tune`] for a bad strategy or budget;
/// device errors while computing the reference.
pub fn tune_streaming<T: DeviceReal>(
    data: &Arc<DeviceData<T>>,
    grid: &GridPoints,
    basis: Basis,
    kernel: LearnKernel,
    settings: &TuneSettings,
) -> Result<TuneOutcome> {
    if kernel == LearnKernel::Mass {
        return Err(Error::Config("tune_streaming tunes the mult or the transposed operator".into()));
    }
    let op = StreamingOperator::on_data(data.clone(), grid, basis, LearnConfig::GENERIC)?;
    let gpu = data.gpu().clone();
    let (rows, cols) = (op.rows(), op.cols());
    let (input_len, output_len) = if kernel == LearnKernel::Mult { (cols, rows) } else { (rows, cols) };
    let input: Vec<T> = (0..input_len).map(|k| T::from_f64(1.0 + (k % 7) as f64 / 7.0)).collect();
    let reference = match kernel {
        LearnKernel::Mult => op.mult(&input)?,
        _ => op.mult_transpose(&input)?,
    };
    let bench = OperatorBench {
        data: data.clone(),
        grid: grid.clone(),
        basis,
        kernel,
        op: None,
        input: gpu.upload(&input)?,
        output: gpu.zeros(output_len)?,
        reference,
        gpu: gpu.clone(),
    };
    search(&gpu, bench, kernel, (rows as u64).saturating_mul(cols as u64), settings)
}

/// Tunes the mass kernel of `grid`.
///
/// # Errors
/// As [`tune_streaming`].
pub fn tune_mass<T: DeviceReal>(
    gpu: &Gpu,
    grid: &GridPoints,
    settings: &TuneSettings,
) -> Result<TuneOutcome> {
    let generic = MassOperator::<T>::with_config(gpu, grid, StreamConfig::generic(LearnKernel::Mass))?;
    let n = grid.len();
    let input: Vec<T> = (0..n).map(|k| T::from_f64(1.0 + (k % 5) as f64 / 5.0)).collect();
    let reference = generic.apply(&input, T::zero())?;
    let bench = MassBench {
        gpu: gpu.clone(),
        grid: grid.clone(),
        op: None,
        input: gpu.upload(&input)?,
        output: gpu.zeros(n)?,
        reference,
    };
    search(gpu, bench, LearnKernel::Mass, (n as u64).saturating_mul(n as u64), settings)
}

fn search<T: DeviceReal, K: Kernel<Output = ()> + Verified<T>>(
    gpu: &Gpu,
    bench_kernel: K,
    kernel: LearnKernel,
    work: u64,
    settings: &TuneSettings,
) -> Result<TuneOutcome> {
    let space = StreamConfig::space(kernel);
    let clock = CudaEventClock::new(gpu)?;
    let measurement = Measurement { warmup: 1, runs: settings.runs.max(1) };
    let mut bench = Bench::new(space, bench_kernel, clock, measurement);
    let mut strat = strategy::by_name(&settings.strategy)?;
    let budget = settings.budget.min(space.count_valid());
    run(strat.as_mut(), space, &mut bench, Budget::evals(budget), settings.seed)?;
    let (_, log) = bench.into_parts();
    let best = log
        .iter()
        .filter_map(|m| Some((StreamConfig::from_config(kernel, &m.config)?, m.outcome.time()?)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    Ok(TuneOutcome { kernel, work, element_type: std::any::type_name::<T>(), best, log })
}

/// Output checks shared by the two bench kernels.
trait Verified<T: DeviceReal> {
    fn gpu(&self) -> &Gpu;
    fn output(&self) -> &DeviceBuffer<T>;
    fn reference(&self) -> &[T];

    /// The output against the embedded kernel's, relative to the largest reference entry
    /// (sums of positive products: no cancellation).
    fn check(&self) -> Result<(), String> {
        let got = self.gpu().download(self.output()).map_err(|e| e.to_string())?;
        let tol = if size_of::<T>() == 4 { 1e-4 } else { 1e-10 };
        let scale =
            self.reference().iter().fold(0.0f64, |a, r| a.max(Real::to_f64(*r).abs())) + f64::MIN_POSITIVE;
        for (k, (g, r)) in got.iter().zip(self.reference()).enumerate() {
            let err = (Real::to_f64(*g) - Real::to_f64(*r)).abs() / scale;
            if err.is_nan() || err > tol {
                return Err(format!("entry {k}: {g:?} against {r:?}"));
            }
        }
        Ok(())
    }
}

struct OperatorBench<T: DeviceReal> {
    gpu: Gpu,
    data: Arc<DeviceData<T>>,
    grid: GridPoints,
    basis: Basis,
    kernel: LearnKernel,
    op: Option<StreamingOperator<T>>,
    input: DeviceBuffer<T>,
    output: DeviceBuffer<T>,
    reference: Vec<T>,
}

impl<T: DeviceReal> Verified<T> for OperatorBench<T> {
    fn gpu(&self) -> &Gpu {
        &self.gpu
    }
    fn output(&self) -> &DeviceBuffer<T> {
        &self.output
    }
    fn reference(&self) -> &[T] {
        &self.reference
    }
}

impl<T: DeviceReal> Kernel for OperatorBench<T> {
    type Output = ();

    fn apply(&mut self, config: &Config) -> Result<(), String> {
        let cfg =
            StreamConfig::from_config(self.kernel, config).ok_or("not a configuration of this kernel")?;
        let mut both = LearnConfig::GENERIC;
        if self.kernel == LearnKernel::Mult {
            both.mult = cfg;
        } else {
            both.transposed = cfg;
        }
        self.op = None;
        let op = StreamingOperator::on_data(self.data.clone(), &self.grid, self.basis, both)
            .map_err(|e| e.to_string())?;
        self.op = Some(op);
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let op = self.op.as_ref().ok_or("no configuration applied")?;
        let done = if self.kernel == LearnKernel::Mult {
            op.mult_device(&self.input, &mut self.output)
        } else {
            op.mult_transpose_device(&self.input, &mut self.output)
        };
        done.map_err(|e| e.to_string())
    }

    fn verify(&mut self, _: &()) -> Result<(), String> {
        self.check()
    }
}

struct MassBench<T: DeviceReal> {
    gpu: Gpu,
    grid: GridPoints,
    op: Option<MassOperator<T>>,
    input: DeviceBuffer<T>,
    output: DeviceBuffer<T>,
    reference: Vec<T>,
}

impl<T: DeviceReal> Verified<T> for MassBench<T> {
    fn gpu(&self) -> &Gpu {
        &self.gpu
    }
    fn output(&self) -> &DeviceBuffer<T> {
        &self.output
    }
    fn reference(&self) -> &[T] {
        &self.reference
    }
}

impl<T: DeviceReal> Kernel for MassBench<T> {
    type Output = ();

    fn apply(&mut self, config: &Config) -> Result<(), String> {
        let cfg = StreamConfig::from_config(LearnKernel::Mass, config).ok_or("not a mass configuration")?;
        self.op = None;
        self.op = Some(MassOperator::with_config(&self.gpu, &self.grid, cfg).map_err(|e| e.to_string())?);
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let op = self.op.as_ref().ok_or("no configuration applied")?;
        op.apply_device(&self.input, T::zero(), &mut self.output).map_err(|e| e.to_string())
    }

    fn verify(&mut self, _: &()) -> Result<(), String> {
        self.check()
    }
}
