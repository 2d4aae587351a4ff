//! The processors a split runs on: [`Device`] and its implementations for the CPU
//! ([`CpuDevice`], a rayon pool) and CUDA devices ([`CudaDevice`]), plus [`Throttled`], a device
//! slowed by a factor (tests and benchmarks of unequal devices on one machine).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_kernels::Gpu;
use rayon::ThreadPool;

use super::error::{Result, SplitError};
use crate::tune::cpu_model;

/// Which role a device plays in the schedulers: CPU workers take small grains, GPUs large ones
/// over several streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// A group of CPU cores; each core is a worker that takes small grains.
    Cpu,
    /// An accelerator driven by one host thread that rotates over several streams (lanes).
    Gpu,
}

/// One processor of a split, as the schedulers see it. Implement it to fake devices in tests.
pub trait Device: Send + Sync + fmt::Debug {
    /// The scheduling role.
    fn kind(&self) -> DeviceKind;

    /// A string that identifies the hardware (and its configuration) across runs: the key of
    /// persisted calibrations.
    fn fingerprint(&self) -> String;

    /// Host threads that take work concurrently: a CPU pool's threads; 1 for a GPU.
    fn workers(&self) -> usize;

    /// Streams a GPU worker rotates over so copies overlap compute; 1 for a CPU.
    fn lanes(&self) -> usize {
        1
    }

    /// Runs `f(i)` for every worker `i` in `0..workers()` concurrently, each on the thread that
    /// worker owns, and returns when all are done.
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync));

    /// Runs one grain of work on the calling worker. Real devices just call `f`; fakes stretch
    /// or observe it.
    fn run_grain(&self, f: &mut dyn FnMut()) {
        f()
    }

    /// The CUDA device behind this one, if any (operations' GPU implementations open their
    /// streams on it).
    fn cuda(&self) -> Option<&Gpu> {
        None
    }
}

/// The CPU: rayon's global pool, or a given [`ThreadPool`]. Each pool thread is a worker.
#[derive(Debug, Clone, Default)]
pub struct CpuDevice {
    pool: Option<Arc<ThreadPool>>,
}

impl CpuDevice {
    /// The CPU through rayon's global pool.
    pub fn global() -> Self {
        CpuDevice { pool: None }
    }

    /// The CPU through `pool`.
    pub fn with_pool(pool: Arc<ThreadPool>) -> Self {
        CpuDevice { pool: Some(pool) }
    }

    /// A device of its own pool of `threads` threads.
    ///
    /// # Errors
    /// [`SplitError::Invalid`] for 0 threads or when the pool cannot be built.
    pub fn with_threads(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(SplitError::Invalid("a CPU device of 0 threads".into()));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("hetero-sched-cpu-{i}"))
            .build()
            .map_err(|e| SplitError::Invalid(format!("thread pool: {e}")))?;
        Ok(Self::with_pool(Arc::new(pool)))
    }
}

impl Device for CpuDevice {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }

    fn fingerprint(&self) -> String {
        format!("cpu:{}:{}:{}t", std::env::consts::ARCH, cpu_model(), self.workers())
    }

    fn workers(&self) -> usize {
        match &self.pool {
            Some(p) => p.current_num_threads(),
            None => rayon::current_num_threads(),
        }
    }

    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        match &self.pool {
            Some(p) => {
                p.broadcast(|ctx| f(ctx.index()));
            }
            None => {
                rayon::broadcast(|ctx| f(ctx.index()));
            }
        }
    }
}

/// A CUDA device driven by one host thread over `streams` streams.
#[derive(Debug, Clone)]
pub struct CudaDevice {
    gpu: Gpu,
    streams: usize,
}

impl CudaDevice {
    /// Opens CUDA device `ordinal` with `streams` streams.
    ///
    /// # Errors
    /// [`SplitError::Cuda`] (`NoDriver`, `NoDevice`) on a machine without that GPU, never a
    /// panic; [`SplitError::Invalid`] for 0 streams.
    pub fn new(ordinal: usize, streams: usize) -> Result<Self> {
        if streams == 0 {
            return Err(SplitError::Invalid("a GPU device of 0 streams".into()));
        }
        Ok(CudaDevice { gpu: Gpu::new(ordinal)?, streams })
    }

    /// A device over an open [`Gpu`] handle.
    ///
    /// # Errors
    /// [`SplitError::Invalid`] for 0 streams.
    pub fn from_gpu(gpu: Gpu, streams: usize) -> Result<Self> {
        if streams == 0 {
            return Err(SplitError::Invalid("a GPU device of 0 streams".into()));
        }
        Ok(CudaDevice { gpu, streams })
    }

    /// The handle.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }
}

impl Device for CudaDevice {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Gpu
    }

    fn fingerprint(&self) -> String {
        crate::tune::Fingerprint::gpu(&self.gpu).as_str().to_owned()
    }

    fn workers(&self) -> usize {
        1
    }

    fn lanes(&self) -> usize {
        self.streams
    }

    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }

    fn cuda(&self) -> Option<&Gpu> {
        Some(&self.gpu)
    }
}

/// A device slowed down by a factor: every grain takes `factor` times as long as on the inner
/// device (the extra time is spent spinning, so the core stays busy, as on a slower core).
/// Stands in for a slower processor in tests and benchmarks on one machine.
#[derive(Debug, Clone)]
pub struct Throttled<D> {
    inner: D,
    factor: f64,
}

impl<D: Device> Throttled<D> {
    /// `inner` slowed by `factor` (≥ 1).
    ///
    /// # Errors
    /// [`SplitError::Invalid`] when `factor` is not finite or below 1.
    pub fn new(inner: D, factor: f64) -> Result<Self> {
        if !(factor.is_finite() && factor >= 1.0) {
            return Err(SplitError::Invalid(format!("slow-down factor {factor} (must be >= 1)")));
        }
        Ok(Throttled { inner, factor })
    }
}

impl<D: Device> Device for Throttled<D> {
    fn kind(&self) -> DeviceKind {
        self.inner.kind()
    }

    fn fingerprint(&self) -> String {
        format!("{}:x{}", self.inner.fingerprint(), self.factor)
    }

    fn workers(&self) -> usize {
        self.inner.workers()
    }

    fn lanes(&self) -> usize {
        self.inner.lanes()
    }

    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        self.inner.spawn_workers(f)
    }

    fn run_grain(&self, f: &mut dyn FnMut()) {
        let t0 = Instant::now();
        self.inner.run_grain(f);
        let extra = t0.elapsed().mul_f64(self.factor - 1.0);
        spin_for(extra);
    }

    fn cuda(&self) -> Option<&Gpu> {
        self.inner.cuda()
    }
}

/// Busy-waits: a sleep would free the core and make the slowed device look cheaper to the
/// other devices sharing the machine.
fn spin_for(d: Duration) {
    let t0 = Instant::now();
    while t0.elapsed() < d {
        std::hint::spin_loop();
    }
}
