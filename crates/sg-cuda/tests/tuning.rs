//! The GPU evaluation under the tuner: a tiny tuning session (three launch configurations, timed
//! with CUDA events, each output verified against sg-core's sequential evaluation), stored in a
//! tuning cache, and then what `DeviceGrid::evaluate` runs. Skips without a device
//! (`HETKIT_REQUIRE_GPU=1` turns a skip into a failure); on the emulator:
//! `scripts/cuda-emu.sh -p sg-cuda --test tuning`.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup.

use cuda_kernels::{DeviceBuffer, Gpu};
use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{
    Bench, Budget, CacheKey, Config, CudaEventClock, Fingerprint, Kernel, Measurement, Param, Space,
    TuningCache, run, strategy,
};
use hetkit_testkit::{gpu_or_skip, rng};
use ndarray::Array2;
use rand::Rng;
use sg_core::{GridSpec, reference as r};
use sg_cuda::{DeviceGrid, EvalConfig, SweepConfig};

struct EvalKernel<'g> {
    gpu: &'g Gpu,
    grid: DeviceGrid<f64>,
    points: DeviceBuffer<f64>,
    m: usize,
    out: DeviceBuffer<f64>,
    reference: Vec<f64>,
    cfg: EvalConfig,
}

impl Kernel for EvalKernel<'_> {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.cfg = EvalConfig::from_config(c).ok_or("not an evaluation configuration")?;
        Ok(())
    }
    fn run(&mut self) -> Result<(), String> {
        self.grid
            .evaluate_device(self.gpu, &self.points, self.m, &mut self.out, &self.cfg)
            .map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        let got = self.gpu.download(&self.out).map_err(|e| e.to_string())?;
        let worst = got.iter().zip(&self.reference).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
        (worst < 1e-12).then_some(()).ok_or_else(|| format!("{:?}: max error {worst:e}", self.cfg))
    }
}

#[test]
fn a_tiny_evaluation_session_chooses_what_evaluate_then_runs() {
    let dir = std::env::temp_dir().join(format!("sg-cuda-tuning-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    // SAFETY: the only test of this binary sets the variable before any lookup reads it.
    unsafe {
        std::env::set_var(hetero_sched::tune::CACHE_DIR_ENV, &dir);
        std::env::remove_var(hetero_sched::tune::dispatch::NO_CACHE_ENV);
    }
    let Some(gpu) = gpu_or_skip("a_tiny_evaluation_session_chooses_what_evaluate_then_runs") else { return };
    let mut g = rng("sg_cuda_tuning");
    let spec = GridSpec::regular(3, 4).unwrap();
    let (d, m) = (spec.dim(), 101);
    let values: Vec<f64> = (0..spec.len()).map(|_| g.random_range(-1.0..1.0)).collect();
    let points: Vec<f64> = (0..m * d).map(|_| g.random_range(0.0..1.0)).collect();
    let mut reference = vec![0.0; m];
    r::evaluate_batch_into(&spec, &values, 1, &points, &mut reference).unwrap();
    let grid = DeviceGrid::from_values(&gpu, spec.clone(), 1, &values, SweepConfig::default()).unwrap();
    assert_eq!(grid.eval_config(m), EvalConfig::default());
    let kernel = EvalKernel {
        gpu: &gpu,
        points: gpu.upload(&points).unwrap(),
        out: gpu.zeros::<f64>(m).unwrap(),
        grid,
        m,
        reference: reference.clone(),
        cfg: EvalConfig::default(),
    };
    // None of these is the default (128 threads, points per thread by dimension).
    let space = Space::builder()
        .param(Param::ints("block_size", &[64, 256]))
        .param(Param::ints("points_per_thread", &[1, 2]))
        .param(Param::boolean("stage_trie"))
        .build()
        .unwrap();
    let clock = CudaEventClock::new(&gpu).unwrap();
    let mut bench = Bench::new(&space, kernel, clock, Measurement { warmup: 1, runs: 2 });
    let mut strat = strategy::by_name(strategy::DEFAULT).unwrap();
    run(strat.as_mut(), &space, &mut bench, Budget::evals(3), 4).unwrap();
    let (kernel, log) = bench.into_parts();
    assert!(log.len() == 3 && log.iter().all(|x| x.outcome.time().is_some()), "{log:?}");

    let cache = TuningCache::at(&dir);
    let bucket = EvalConfig::bucket((d, m)).unwrap().name();
    let key = CacheKey::new(sg_cuda::TUNING_KERNEL, &Fingerprint::gpu(&gpu), "f64", &bucket);
    cache.store(&key, &space, &log).unwrap();
    let best = EvalConfig::from_config(&cache.lookup(&key, EvalConfig::space()).unwrap()).unwrap();
    hetero_sched::tune::dispatch::global().forget();
    assert_eq!(kernel.grid.eval_config(m), best);
    assert_eq!(kernel.grid.eval_config(8 * m), EvalConfig::default());
    let pts = Array2::from_shape_vec((m, d), points).unwrap();
    let got = kernel.grid.evaluate(pts.view()).unwrap();
    let worst = got.iter().zip(&reference).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
    assert!(worst < 1e-12, "{worst:e}");
    std::fs::remove_dir_all(&dir).ok();
}
