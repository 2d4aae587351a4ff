//! The evaluation loop for real kernels (AutoTuneTMP's adjust/validate/compile/warm-up/time/
//! verify): apply the configuration, compile where parameters are compile-time (cached per
//! configuration), warm up, time `runs` executions, take the median, verify, record.
//! A configuration that fails to compile, launch or verify is recorded with its reason and
//! skipped (it never wins).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use super::kt::KtEntry;
use super::replay::median;
use super::search::{Objective, Outcome};
use super::space::{Config, Space};

/// A tunable kernel with its input data and reference result.
pub trait Kernel {
    /// The result of one run, checked by [`verify`](Self::verify).
    type Output;

    /// Applies a configuration: sets run-time parameters, fetches or compiles the module for
    /// compile-time ones. An error is a compile (or set-up) failure.
    fn apply(&mut self, config: &Config) -> Result<(), String>;

    /// One execution: the timed region. An error is a launch failure.
    fn run(&mut self) -> Result<Self::Output, String>;

    /// Checks an output against the reference. An error is a verification failure.
    fn verify(&mut self, output: &Self::Output) -> Result<(), String>;
}

/// Times one execution, in milliseconds.
pub trait Clock {
    /// Runs `f` once and returns its duration in milliseconds.
    fn time(&mut self, f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String>;
}

/// The CPU clock: [`Instant`], a monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuClock;

impl Clock for CpuClock {
    fn time(&mut self, f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
        let t0 = Instant::now();
        f()?;
        Ok(t0.elapsed().as_secs_f64() * 1e3)
    }
}

/// A GPU clock: CUDA events around the work on the GPU's stream.
#[derive(Debug)]
pub struct CudaEventClock<'g> {
    gpu: &'g cuda_kernels::Gpu,
    timer: cuda_kernels::GpuTimer,
}

impl<'g> CudaEventClock<'g> {
    /// Events on `gpu`'s stream.
    pub fn new(gpu: &'g cuda_kernels::Gpu) -> Result<Self, cuda_kernels::Error> {
        Ok(CudaEventClock { gpu, timer: cuda_kernels::GpuTimer::new(gpu)? })
    }
}

impl Clock for CudaEventClock<'_> {
    fn time(&mut self, f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
        // The closure's own error is carried out of the CUDA-typed callback separately.
        let mut inner = Ok(());
        let t = self
            .timer
            .time(self.gpu, || {
                inner = f();
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        inner.map(|()| t)
    }
}

/// Compiles a module for a configuration (NVRTC with defines, a C++ JIT, ...).
pub trait Compiler {
    /// The compiled module.
    type Module;
    /// Compiles for `config`.
    fn compile(&self, config: &Config) -> Result<Self::Module, String>;
}

/// Compiled modules per configuration: each configuration is compiled once, failures included.
#[derive(Debug)]
pub struct CompileCache<C: Compiler> {
    compiler: C,
    modules: HashMap<Config, Result<Arc<C::Module>, String>>,
    compile_ms: f64,
}

impl<C: Compiler> CompileCache<C> {
    /// An empty cache over `compiler`.
    pub fn new(compiler: C) -> Self {
        CompileCache { compiler, modules: HashMap::new(), compile_ms: 0.0 }
    }

    /// The module for `config`, compiled on first request.
    pub fn get(&mut self, config: &Config) -> Result<Arc<C::Module>, String> {
        if let Some(m) = self.modules.get(config) {
            return m.clone();
        }
        let t0 = Instant::now();
        let m = self.compiler.compile(config).map(Arc::new);
        self.compile_ms += t0.elapsed().as_secs_f64() * 1e3;
        self.modules.insert(config.clone(), m.clone());
        m
    }

    /// Number of configurations compiled (or attempted).
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether nothing was compiled yet.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// Total compile time so far, in milliseconds.
    pub fn compile_ms(&self) -> f64 {
        self.compile_ms
    }
}

/// CUDA source compiled by NVRTC with the configuration as `#define NAME VALUE` lines (names
/// upper-cased) in front of the source.
#[derive(Debug, Clone)]
pub struct NvrtcSource {
    /// Module name (for messages).
    pub name: String,
    /// CUDA source using the defines.
    pub source: String,
    /// Target compute capability.
    pub compute_capability: (i32, i32),
}

impl NvrtcSource {
    /// The source NVRTC sees for `config`.
    pub fn source_for(&self, config: &Config) -> String {
        format!("{}{}", config.defines(), self.source)
    }
}

impl Compiler for NvrtcSource {
    type Module = cudarc::nvrtc::Ptx;

    fn compile(&self, config: &Config) -> Result<Self::Module, String> {
        cuda_kernels::nvrtc_compile_ptx(&self.name, &self.source_for(config), self.compute_capability)
            .map_err(|e| e.to_string())
    }
}

/// Measurement settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measurement {
    /// Untimed runs before timing (each verified).
    pub warmup: usize,
    /// Timed runs; the median is the configuration's time.
    pub runs: usize,
}

impl Default for Measurement {
    fn default() -> Self {
        Measurement { warmup: 1, runs: 5 }
    }
}

/// One measured configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// The configuration.
    pub config: Config,
    /// Timed runs in milliseconds (empty on failure).
    pub times: Vec<f64>,
    /// `Time(median)` or `Failed(reason)`.
    pub outcome: Outcome,
    /// Kernel Tuner's failure class, for failed configurations.
    pub failure: Option<&'static str>,
}

impl Measured {
    /// The record as a Kernel Tuner cache entry.
    pub fn to_entry(&self) -> KtEntry {
        let failure = match (&self.outcome, self.failure) {
            (Outcome::Failed(reason), Some(kind)) => Some((kind, reason.as_str())),
            (Outcome::Failed(reason), None) => Some(("RuntimeFailedConfig", reason.as_str())),
            _ => None,
        };
        KtEntry::measured(&self.config, &self.times, failure)
    }
}

/// A kernel on a space as an [`Objective`]: every evaluation runs the loop and is logged.
#[derive(Debug)]
pub struct Bench<'s, K, C> {
    space: &'s Space,
    kernel: K,
    clock: C,
    settings: Measurement,
    log: Vec<Measured>,
}

impl<'s, K: Kernel, C: Clock> Bench<'s, K, C> {
    /// Measures `kernel` on `space` with `clock`.
    pub fn new(space: &'s Space, kernel: K, clock: C, settings: Measurement) -> Self {
        Bench { space, kernel, clock, settings, log: Vec::new() }
    }

    /// Every configuration measured so far, in order.
    pub fn log(&self) -> &[Measured] {
        &self.log
    }

    /// The kernel back, and the log.
    pub fn into_parts(self) -> (K, Vec<Measured>) {
        (self.kernel, self.log)
    }

    /// Runs the loop for one configuration.
    pub fn measure(&mut self, config: &Config) -> Measured {
        let fail = |kind: &'static str, why: String| Measured {
            config: config.clone(),
            times: Vec::new(),
            outcome: Outcome::Failed(why),
            failure: Some(kind),
        };
        if let Err(e) = self.kernel.apply(config) {
            return fail("CompilationFailedConfig", format!("compile: {e}"));
        }
        for _ in 0..self.settings.warmup {
            match self.kernel.run() {
                Ok(out) => {
                    if let Err(e) = self.kernel.verify(&out) {
                        return fail("RuntimeFailedConfig", format!("verify: {e}"));
                    }
                }
                Err(e) => return fail("RuntimeFailedConfig", format!("launch: {e}")),
            }
        }
        let mut times = Vec::with_capacity(self.settings.runs);
        for _ in 0..self.settings.runs.max(1) {
            let mut out = None;
            let kernel = &mut self.kernel;
            let t = self.clock.time(&mut || {
                out = Some(kernel.run()?);
                Ok(())
            });
            match (t, out) {
                (Ok(t), Some(out)) => {
                    if let Err(e) = self.kernel.verify(&out) {
                        return fail("RuntimeFailedConfig", format!("verify: {e}"));
                    }
                    times.push(t);
                }
                (Err(e), _) => return fail("RuntimeFailedConfig", format!("launch: {e}")),
                (Ok(_), None) => {
                    return fail("RuntimeFailedConfig", "launch: the clock did not run the kernel".into());
                }
            }
        }
        let t = median(&times);
        Measured { config: config.clone(), times, outcome: Outcome::Time(t), failure: None }
    }
}

impl<K: Kernel, C: Clock> Objective for Bench<'_, K, C> {
    fn evaluate(&mut self, p: &[u32]) -> Outcome {
        let config = self.space.config(p);
        let m = self.measure(&config);
        let o = m.outcome.clone();
        self.log.push(m);
        o
    }
}
