//! GPU kernels under the tuner: for each, a tiny tuning session (three configurations, timed with
//! CUDA events, each output verified against a CPU reference), stored in a tuning cache, and then
//! what dispatch runs. The scan's parameters are compile-time (NVRTC per configuration), the
//! tridiagonal dispatcher's and the row sort's run-time. Skips without a device
//! (`HETKIT_REQUIRE_GPU=1` turns a skip into a failure); on the emulator:
//! `scripts/cuda-emu.sh -p prefix-ops --test gpu_tuning`.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup, once, by `setup`.

use std::sync::OnceLock;

use cuda_kernels::{DeviceBuffer, Gpu};
use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{
    Bench, Budget, CacheKey, Config, CudaEventClock, Fingerprint, Kernel, Measurement, Param, Space,
    TuningCache, run, strategy,
};
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::scan::emulate::{self, Network, Shape};
use prefix_ops::scan::gpu::{self, GpuScanTuning, Layout};
use prefix_ops::scan::{Add, dispatch::ScanOptions};
use prefix_ops::sort::gpu::GpuSortTuning;
use prefix_ops::sort::{self, Order};
use prefix_ops::tridiagonal::gpu::{GpuBatch, GpuTridiagonalTuning};
use prefix_ops::tridiagonal::{self, Layout as TriLayout, Solver, TridiagonalBatch};
use rand::Rng;

/// Elements scanned: a few tiles of every shape in the space, not a multiple of any tile.
const N: usize = 3 * 4096 + 77;

fn setup() -> &'static TuningCache {
    static CACHE: OnceLock<(tempfile::TempDir, TuningCache)> = OnceLock::new();
    &CACHE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            // SAFETY: runs once, before any lookup and before this binary's tests spawn threads
            // that read the environment (every test calls `setup` first, under the OnceLock).
            unsafe {
                std::env::set_var(hetero_sched::tune::CACHE_DIR_ENV, dir.path());
                std::env::remove_var(hetero_sched::tune::dispatch::NO_CACHE_ENV);
            }
            let cache = TuningCache::at(dir.path());
            (dir, cache)
        })
        .1
}

/// The scan as the tuner sees it: upload, scan with the configuration's kernel; verified bit
/// for bit against [`emulate::lookback`] with the configuration's shape.
struct ScanKernel<'g> {
    gpu: &'g Gpu,
    input: Vec<f32>,
    buf: DeviceBuffer<f32>,
    tuning: GpuScanTuning,
}

impl Kernel for ScanKernel<'_> {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = GpuScanTuning::from_config(c).ok_or("not a GPU scan configuration")?;
        Ok(())
    }
    fn run(&mut self) -> Result<(), String> {
        self.gpu.write(&self.input, &mut self.buf).map_err(|e| e.to_string())?;
        gpu::scan_device_tuned(self.gpu, &mut self.buf, Add, false, &self.tuning).map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        let got = self.gpu.download(&self.buf).map_err(|e| e.to_string())?;
        let mut want = self.input.clone();
        emulate::lookback(&mut want, Add, self.tuning.shape, false);
        let same = got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits());
        same.then_some(())
            .ok_or_else(|| format!("scan under {:?} differs from its emulation", self.tuning.shape))
    }
}

/// Four configurations, none of them the default (256 threads): the session picks one of them.
fn small_space() -> Space {
    Space::builder()
        .param(Param::ints("items_per_thread", &[4, 8]))
        .param(Param::ints("threads", &[128]))
        .param(Param::names("network", &["ks", "sk"]))
        .build()
        .unwrap()
}

#[test]
fn a_tiny_tuning_session_chooses_what_dispatch_then_runs() {
    let cache = setup();
    let Some(gpu) = gpu_or_skip("a_tiny_tuning_session_chooses_what_dispatch_then_runs") else { return };
    let mut r = rng("gpu_tuning");
    let input: Vec<f32> = (0..N).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let buf = gpu.upload(&input).unwrap();
    let kernel = ScanKernel { gpu: &gpu, input: input.clone(), buf, tuning: GpuScanTuning::default() };
    let space = small_space();
    let clock = CudaEventClock::new(&gpu).unwrap();
    let mut bench = Bench::new(&space, kernel, clock, Measurement { warmup: 1, runs: 2 });
    let mut strat = strategy::by_name(strategy::DEFAULT).unwrap();
    let result = run(strat.as_mut(), &space, &mut bench, Budget::evals(3), 1).unwrap();
    assert_eq!(result.evaluations, 3);
    let (_, log) = bench.into_parts();
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|m| m.outcome.time().is_some_and(|t| t > 0.0)), "{log:?}");

    let bucket = GpuScanTuning::bucket((N, 4)).unwrap().name();
    let key = CacheKey::new(gpu::TUNING_KERNEL, &Fingerprint::gpu(&gpu), "f32", &bucket);
    cache.store(&key, &space, &log).unwrap();
    let best = cache.lookup(&key, GpuScanTuning::space()).unwrap();
    let best = GpuScanTuning::from_config(&best).unwrap();
    assert_eq!(best.shape.threads, 128);

    // Dispatch: the tuned configuration for this device, type and bucket; the defaults elsewhere.
    assert_eq!(gpu::scan_tuning::<f32>(&gpu, N), best);
    assert_eq!(gpu::scan_tuning::<f64>(&gpu, N), GpuScanTuning::default_for(8));
    assert_eq!(gpu::scan_tuning::<f32>(&gpu, 4 * N), GpuScanTuning::default_for(4));
    // ... and the default scan runs it: bit for bit the emulation of the tuned shape.
    let mut want = input.clone();
    emulate::lookback(&mut want, Add, best.shape, false);
    let mut buf = gpu.upload(&input).unwrap();
    gpu::scan_device(&gpu, &mut buf, Layout::Array, Add, false, &ScanOptions::default()).unwrap();
    let got = gpu.download(&buf).unwrap();
    assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn unusable_tunings_are_errors() {
    setup();
    let Some(gpu) = gpu_or_skip("unusable_tunings_are_errors") else { return };
    let mut buf = gpu.upload(&[1.0f32; 100]).unwrap();
    let bad = GpuScanTuning { shape: Shape { threads: 100, items: 4, network: Network::KoggeStone } };
    assert!(gpu::scan_device_tuned(&gpu, &mut buf, Add, false, &bad).is_err());
    let huge = GpuScanTuning { shape: Shape { threads: 1024, items: 16, network: Network::KoggeStone } };
    assert!(gpu::scan_device_tuned(&gpu, &mut buf, Add, false, &huge).is_err());
}

/// A batch of strictly dominant systems on the device, as the tuner sees it: solve with the
/// configuration; verified against the CPU's pivoting solver.
struct TriKernel<'g> {
    gpu: &'g Gpu,
    m: usize,
    diagonals: [DeviceBuffer<f64>; 3],
    d: DeviceBuffer<f64>,
    x: DeviceBuffer<f64>,
    reference: Vec<f64>,
    tuning: GpuTridiagonalTuning,
}

const TRI_M: usize = 37;
const TRI_G: usize = 45;

fn dominant_batch(seed: &str) -> [Vec<f64>; 4] {
    let mut r = rng(seed);
    let n = TRI_M * TRI_G;
    let mut draw = |lo: f64, hi: f64| -> Vec<f64> { (0..n).map(|_| r.random_range(lo..hi)).collect() };
    [draw(-1.0, 1.0), draw(2.5, 4.0), draw(-1.0, 1.0), draw(-1.0, 1.0)]
}

impl TriKernel<'_> {
    fn batch(&self) -> GpuBatch<'_, f64> {
        let [a, b, c] = &self.diagonals;
        GpuBatch::new(a, b, c, self.m, TriLayout::Strided).unwrap()
    }
}

impl Kernel for TriKernel<'_> {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = GpuTridiagonalTuning::from_config(c).ok_or("not a GPU tridiagonal configuration")?;
        Ok(())
    }
    fn run(&mut self) -> Result<(), String> {
        let [a, b, c] = &self.diagonals;
        let batch = GpuBatch::new(a, b, c, self.m, TriLayout::Strided).map_err(|e| e.to_string())?;
        batch.solve_into_tuned(self.gpu, &self.tuning, &self.d, &mut self.x).map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        let got = self.gpu.download(&self.x).map_err(|e| e.to_string())?;
        let worst = got.iter().zip(&self.reference).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
        (worst < 1e-10).then_some(()).ok_or_else(|| format!("{:?}: max error {worst:e}", self.tuning))
    }
}

#[test]
fn a_tiny_tridiagonal_session_chooses_what_auto_then_runs() {
    let cache = setup();
    let Some(gpu) = gpu_or_skip("a_tiny_tridiagonal_session_chooses_what_auto_then_runs") else { return };
    let [a, b, c, d] = dominant_batch("gpu_tuning_tri");
    let mut reference = d.clone();
    TridiagonalBatch::strided(&a, &b, &c, TRI_M)
        .unwrap()
        .solve_with(Solver::PivotingLu, &mut reference)
        .unwrap();
    let up = |v: &[f64]| gpu.upload(v).unwrap();
    let kernel = TriKernel {
        gpu: &gpu,
        m: TRI_M,
        diagonals: [up(&a), up(&b), up(&c)],
        d: up(&d),
        x: gpu.zeros::<f64>(d.len()).unwrap(),
        reference: reference.clone(),
        tuning: GpuTridiagonalTuning::default(),
    };
    // Thomas and TPR at two block sizes: none of them the default (CR-PCR for m <= 1024).
    let space = Space::builder()
        .param(Param::names("algorithm", &["thomas", "tpr"]))
        .param(Param::ints("pcr_size", &[64]))
        .param(Param::ints("tpr_slice", &[512]))
        .param(Param::ints("threads", &[64, 256]))
        .build()
        .unwrap();
    let clock = CudaEventClock::new(&gpu).unwrap();
    let mut bench = Bench::new(&space, kernel, clock, Measurement { warmup: 1, runs: 2 });
    let mut strat = strategy::by_name(strategy::DEFAULT).unwrap();
    run(strat.as_mut(), &space, &mut bench, Budget::evals(3), 2).unwrap();
    let (kernel, log) = bench.into_parts();
    assert_eq!(log.len(), 3);
    assert!(log.iter().all(|m| m.outcome.time().is_some()), "{log:?}");

    let batch = kernel.batch();
    assert_eq!(batch.tuning(&gpu), GpuTridiagonalTuning::default_for(TRI_M, TRI_G, TriLayout::Strided, 8));
    let shape = (TriLayout::Strided, TRI_M, TRI_G, 8, gpu.props().sm_count);
    let bucket = GpuTridiagonalTuning::bucket(shape).unwrap().name();
    let key = CacheKey::new(tridiagonal::gpu::TUNING_KERNEL, &Fingerprint::gpu(&gpu), "f64", &bucket);
    cache.store(&key, &space, &log).unwrap();
    let best = GpuTridiagonalTuning::from_config(&cache.lookup(&key, GpuTridiagonalTuning::space()).unwrap())
        .unwrap();
    // The process-wide memo read this bucket above (the default); a fresh batch of another
    // bucket shows the stored entry is keyed by shape, and this one is read after a forget.
    hetero_sched::tune::dispatch::global().forget();
    assert_eq!(batch.tuning(&gpu), best);
    // Auto on the declared-dominant batch runs the stored configuration: the same bits as an
    // explicit run of it.
    let batch = batch.assume_diagonally_dominant();
    let mut x_auto = gpu.zeros::<f64>(d.len()).unwrap();
    batch.solve_into(&gpu, Solver::Auto, &kernel.d, &mut x_auto).unwrap();
    let mut x_best = gpu.zeros::<f64>(d.len()).unwrap();
    batch.solve_into_tuned(&gpu, &best, &kernel.d, &mut x_best).unwrap();
    let (auto, tuned) = (gpu.download(&x_auto).unwrap(), gpu.download(&x_best).unwrap());
    assert!(auto.iter().zip(&tuned).all(|(p, q)| p.to_bits() == q.to_bits()));
    assert!(auto.iter().zip(&reference).all(|(p, q)| (p - q).abs() < 1e-10));
}

/// Rows of keys on the device, as the tuner sees it: upload, sort the rows with the
/// configuration; verified against std's sort of each row.
struct SortKernel<'g> {
    gpu: &'g Gpu,
    input: Vec<u32>,
    buf: DeviceBuffer<u32>,
    reference: Vec<u32>,
    tuning: GpuSortTuning,
}

const SORT_ROW: usize = 300;
const SORT_ROWS: usize = 53;

impl Kernel for SortKernel<'_> {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = GpuSortTuning::from_config(c).ok_or("not a GPU sort configuration")?;
        Ok(())
    }
    fn run(&mut self) -> Result<(), String> {
        self.gpu.write(&self.input, &mut self.buf).map_err(|e| e.to_string())?;
        sort::gpu::rows_tuned(self.gpu, &mut self.buf, SORT_ROW, Order::Ascending, &self.tuning)
            .map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        let got = self.gpu.download(&self.buf).map_err(|e| e.to_string())?;
        (got == self.reference).then_some(()).ok_or_else(|| format!("rows differ under {:?}", self.tuning))
    }
}

#[test]
fn a_tiny_sort_session_chooses_what_rows_then_runs() {
    let cache = setup();
    let Some(gpu) = gpu_or_skip("a_tiny_sort_session_chooses_what_rows_then_runs") else { return };
    let mut r = rng("gpu_tuning_sort");
    let input: Vec<u32> = (0..SORT_ROW * SORT_ROWS).map(|_| r.random_range(0..1000)).collect();
    let mut reference = input.clone();
    reference.chunks_mut(SORT_ROW).for_each(|row| row.sort_unstable());
    let buf = gpu.upload(&input).unwrap();
    let kernel = SortKernel {
        gpu: &gpu,
        input: input.clone(),
        buf,
        reference: reference.clone(),
        tuning: GpuSortTuning::DEFAULT,
    };
    // Blocks of 64, 128 or 512 threads: none of them the default.
    let space = Space::builder().param(Param::ints("block_threads", &[64, 128, 512])).build().unwrap();
    let clock = CudaEventClock::new(&gpu).unwrap();
    let mut bench = Bench::new(&space, kernel, clock, Measurement { warmup: 1, runs: 2 });
    let mut strat = strategy::by_name(strategy::DEFAULT).unwrap();
    run(strat.as_mut(), &space, &mut bench, Budget::evals(3), 3).unwrap();
    let (_, log) = bench.into_parts();
    assert!(log.len() == 3 && log.iter().all(|m| m.outcome.time().is_some()), "{log:?}");

    let bucket = GpuSortTuning::bucket((SORT_ROW, SORT_ROWS)).unwrap().name();
    let key = CacheKey::new(sort::gpu::TUNING_KERNEL, &Fingerprint::gpu(&gpu), "u32", &bucket);
    cache.store(&key, &space, &log).unwrap();
    let best = GpuSortTuning::from_config(&cache.lookup(&key, GpuSortTuning::space()).unwrap()).unwrap();
    assert_ne!(best, GpuSortTuning::DEFAULT);
    hetero_sched::tune::dispatch::global().forget();
    assert_eq!(sort::gpu::row_tuning::<u32>(&gpu, SORT_ROW, SORT_ROWS), best);
    assert_eq!(sort::gpu::row_tuning::<f32>(&gpu, SORT_ROW, SORT_ROWS), GpuSortTuning::DEFAULT);
    let mut keys = gpu.upload(&input).unwrap();
    sort::gpu::rows(&gpu, &mut keys, SORT_ROW, Order::Ascending).unwrap();
    assert_eq!(gpu.download(&keys).unwrap(), reference);
}
