//! Tuning through hetero-sched: the GPU space of thesis §4.4.1 pruned by resources before
//! anything is timed, the CPU block sizes, the search (exhaustive by default), and the results
//! persisted per device, stencil, precision and grid size in the tuning cache.

use std::time::Instant;

use hetero_sched::tune::{
    Bench, CacheKey, Clock, Config as TuneConfig, Constraint, CpuClock, Fingerprint, Kernel, Measured,
    Measurement, Objective, Outcome, Param, Space, Strategy, TuningCache, Value, dispatch, size_bucket,
};
use ndarray::Array3;

use crate::config::{Config, Order, Target};
use crate::cpu::CpuBlocks;
use crate::element::Element;
use crate::error::{Result, StencilError};
use crate::gpu::{DevicePlan, GpuParams, STATIC_SHARED_LIMIT};
use crate::plan::Plan;
use crate::stencil::Stencil;
use crate::taps::Taps;

/// The tile sizes along axis 2 of the GPU space (multiples of a half-warp).
pub const SIZE_X: [i64; 4] = [16, 32, 48, 64];
/// The tile sizes along axis 1 of the GPU space.
pub const SIZE_Y: std::ops::RangeInclusive<i64> = 2..=16;

/// The GPU tuning space of a stencil with `halo` and `corners` for `element_bytes`-byte
/// elements: `size_x` in {16, 32, 48, 64}, `size_y` in 2..=16, `dim_x` and `dim_y` from the
/// same sets dividing them, `read_only` on or off; pruned to at most `max_threads` threads and
/// `shared_limit` bytes of shared memory per block. Unpruned (limits of `i64::MAX`) it has 544
/// points; with a 512-thread cap, 516.
pub fn gpu_space(
    halo: [usize; 3],
    corners: bool,
    element_bytes: usize,
    max_threads: i64,
    shared_limit: u64,
) -> Result<Space> {
    let ys: Vec<i64> = SIZE_Y.collect();
    let shared = move |c: &hetero_sched::tune::ConfigView<'_>| {
        let p = GpuParams {
            size_x: c.int("size_x").unwrap_or(0) as u32,
            size_y: c.int("size_y").unwrap_or(0) as u32,
            dim_x: 1,
            dim_y: 1,
            read_only: false,
        };
        p.shared_bytes(halo, corners, element_bytes) as u64
    };
    Ok(Space::builder()
        .param(Param::ints("size_x", &SIZE_X))
        .param(Param::ints("size_y", &ys))
        .param(Param::ints("dim_x", &SIZE_X))
        .param(Param::ints("dim_y", &ys))
        .param(Param::boolean("read_only"))
        .constraint(Constraint::divides("dim_x", "size_x"))
        .constraint(Constraint::divides("dim_y", "size_y"))
        .constraint(Constraint::threads_per_block(&["dim_x", "dim_y"], max_threads))
        .constraint(Constraint::shared_memory_fits(shared, shared_limit))
        .build()?)
}

/// The GPU parameters of a configuration of [`gpu_space`].
pub fn gpu_params_of(c: &TuneConfig) -> Option<GpuParams> {
    Some(GpuParams {
        size_x: u32::try_from(c.int("size_x")?).ok()?,
        size_y: u32::try_from(c.int("size_y")?).ok()?,
        dim_x: u32::try_from(c.int("dim_x")?).ok()?,
        dim_y: u32::try_from(c.int("dim_y")?).ok()?,
        read_only: matches!(c.get("read_only")?, Value::Bool(true)),
    })
}

/// A configuration of [`gpu_space`] for `p`.
pub fn gpu_config_of(p: &GpuParams) -> TuneConfig {
    TuneConfig::new(vec![
        ("size_x".into(), Value::Int(p.size_x.into())),
        ("size_y".into(), Value::Int(p.size_y.into())),
        ("dim_x".into(), Value::Int(p.dim_x.into())),
        ("dim_y".into(), Value::Int(p.dim_y.into())),
        ("read_only".into(), Value::Bool(p.read_only)),
    ])
}

/// The CPU tuning space of a stencil. Constant coefficients without a bias (the specialised,
/// temporally blocked kernel): `depth` in {1, 2, 3, 4, 6, 8} sweeps per pass, `j_block` in
/// {16, 32, 64, 128, 256} rows per band and `order` in {exact, fast} (which is faster depends on
/// the machine and the stencil), 60 points. Otherwise (the generic kernel, always in the exact
/// order): `i_block` in {1, 2, 4, 8, 16} planes per task and `j_block` in {4, ..., 256} rows per
/// block, 35 points.
pub fn cpu_space(constant_coefficients: bool) -> Result<Space> {
    let b = Space::builder();
    let b = if constant_coefficients {
        b.param(Param::ints("depth", &[1, 2, 3, 4, 6, 8]))
            .param(Param::ints("j_block", &[16, 32, 64, 128, 256]))
            .param(Param::names("order", &ORDER_NAMES))
    } else {
        b.param(Param::ints("i_block", &[1, 2, 4, 8, 16]))
            .param(Param::ints("j_block", &[4, 8, 16, 32, 64, 128, 256]))
    };
    Ok(b.build()?)
}

/// The values of [`cpu_space`]'s `order`.
const ORDER_NAMES: [&str; 2] = ["exact", "fast"];

fn order_name(o: Order) -> &'static str {
    match o {
        Order::Exact => ORDER_NAMES[0],
        Order::Fast => ORDER_NAMES[1],
    }
}

/// The evaluation order of a configuration of [`cpu_space`], when it names one.
pub fn cpu_order_of(c: &TuneConfig) -> Option<Order> {
    match c.get("order")? {
        Value::Str(v) if v == ORDER_NAMES[0] => Some(Order::Exact),
        Value::Str(v) if v == ORDER_NAMES[1] => Some(Order::Fast),
        _ => None,
    }
}

/// The blocks of a configuration of [`cpu_space`]; parameters the space lacks keep their
/// defaults.
fn cpu_blocks_of(c: &TuneConfig) -> Option<CpuBlocks> {
    let d = CpuBlocks::default();
    let get = |name: &str, default: usize| match c.get(name) {
        None => Some(default),
        Some(_) => usize::try_from(c.int(name)?).ok().filter(|&v| v > 0),
    };
    Some(CpuBlocks {
        i_block: get("i_block", d.i_block)?,
        j_block: get("j_block", d.j_block)?,
        depth: get("depth", d.depth)?,
        chunks_per_thread: get("chunks_per_thread", d.chunks_per_thread)?,
    })
}

/// The configuration of [`cpu_space`] for `b`, and for constant coefficients `order`.
fn cpu_config_of(b: &CpuBlocks, order: Option<Order>) -> TuneConfig {
    let int = |v: usize| Value::Int(v as i64);
    TuneConfig::new(match order {
        Some(o) => vec![
            ("depth".into(), int(b.depth)),
            ("j_block".into(), int(b.j_block)),
            ("order".into(), Value::Str(order_name(o).into())),
        ],
        None => vec![("i_block".into(), int(b.i_block)), ("j_block".into(), int(b.j_block))],
    })
}

/// The tuning-cache kernel name of a stencil on a target: its points and halo, and a hash of
/// its offsets, so stencils of one shape share results.
fn kernel_name<T: Element>(target: &str, s: &Stencil<T>) -> String {
    let h = s.halo();
    let sig = s.offsets().iter().fold(0xcbf2_9ce4_8422_2325u64, |acc, d| {
        d.iter().fold(acc, |a, &x| (a ^ (x as u8 as u64)).wrapping_mul(0x100_0000_01b3))
    });
    format!("stencil::{target}/{}pt-h{}{}{}-{sig:08x}", s.num_points(), h[0], h[1], h[2])
}

fn cache() -> Option<TuningCache> {
    if std::env::var(dispatch::NO_CACHE_ENV).is_ok_and(|v| v == "1" || v == "true") {
        return None;
    }
    TuningCache::open_default().ok()
}

/// Grids below this many points run the defaults without reading the cache.
const LOOKUP_MIN_POINTS: usize = 1 << 18;

/// The CPU blocks and evaluation order of `s` under `config` for grids of `shape` (whose
/// plan is `plan`): what `config` sets, else what the tuning cache holds, else the defaults
/// and the built-in rule of [`Config::order`]. The sequential target's default order is exact.
pub(crate) fn cpu_choice_for<T: Element>(
    s: &Stencil<T>,
    plan: &Plan<T>,
    config: &Config,
) -> (CpuBlocks, Order) {
    let tuned = match (config.blocks, config.order) {
        (Some(_), Some(_)) => None,
        _ => tuned_cpu(s, &plan.shape),
    };
    let blocks = config.blocks.or_else(|| tuned.as_ref().and_then(cpu_blocks_of)).unwrap_or_default();
    let order = config.order.unwrap_or_else(|| match config.target {
        Target::Sequential => Order::Exact,
        _ => tuned.as_ref().and_then(cpu_order_of).unwrap_or_else(|| default_order(plan)),
    });
    (blocks, order)
}

/// The order of the built-in rule: fast where the reassociated form loads fewer values per
/// point than the exact one, exact where it only saves multiplies. The quiet runs on both
/// machines measured (Zen 3 AVX2, a Xeon with AVX-512) found the fast order 1.1-1.9x faster on
/// the 27-point stencil and level or up to 1.5x slower on the 7- and 13-point stars.
fn default_order<T: Element>(plan: &Plan<T>) -> Order {
    if Taps::fast_saves_loads(plan) { Order::Fast } else { Order::Exact }
}

/// The tuned CPU configuration of `s` for grids of `shape`, if the cache holds one.
fn tuned_cpu<T: Element>(s: &Stencil<T>, shape: &[usize]) -> Option<TuneConfig> {
    let n: usize = shape.iter().product();
    if n < LOOKUP_MIN_POINTS {
        return None;
    }
    let cache = cache()?;
    let space = cpu_space(s.has_constant_coefficients()).ok()?;
    let key = CacheKey::new(&kernel_name("cpu", s), &Fingerprint::cpu(), T::NAME, &size_bucket(n as u64));
    cache.lookup(&key, &space)
}

fn gpu_fingerprint(gpu: &cuda_kernels::Gpu) -> Fingerprint {
    let p = gpu.props();
    Fingerprint::new(format!("gpu: {} sm_{}{}", p.name, p.compute_capability.0, p.compute_capability.1))
}

fn device_space<T: Element>(gpu: &cuda_kernels::Gpu, s: &Stencil<T>) -> Result<Space> {
    let p = gpu.props();
    let limit = STATIC_SHARED_LIMIT.min(p.shared_per_block) as u64;
    gpu_space(s.halo(), s.has_corners(), std::mem::size_of::<T>(), p.max_threads_per_block.into(), limit)
}

/// The tuned GPU parameters of `s` for grids of `shape` on `gpu`, else the default (or, when
/// the default does not fit the device, the smallest tile).
pub(crate) fn gpu_params_for<T: Element>(
    gpu: &cuda_kernels::Gpu,
    s: &Stencil<T>,
    shape: [usize; 3],
) -> GpuParams {
    let n: usize = shape.iter().product();
    let fallback = || {
        let d = GpuParams::default();
        let p = gpu.props();
        let fits = d
            .check(
                s.halo(),
                s.has_corners(),
                std::mem::size_of::<T>(),
                p.max_threads_per_block,
                STATIC_SHARED_LIMIT.min(p.shared_per_block),
            )
            .is_ok();
        if fits { d } else { GpuParams { size_x: 16, size_y: 2, dim_x: 16, dim_y: 2, read_only: false } }
    };
    if n < LOOKUP_MIN_POINTS {
        return fallback();
    }
    let (Some(cache), Ok(space)) = (cache(), device_space(gpu, s)) else { return fallback() };
    let key = CacheKey::new(&kernel_name("gpu", s), &gpu_fingerprint(gpu), T::NAME, &size_bucket(n as u64));
    cache.lookup(&key, &space).and_then(|c| gpu_params_of(&c)).unwrap_or_else(fallback)
}

/// What a tuning run found.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneReport {
    /// The tuning-cache kernel name (stencil signature and target).
    pub kernel: String,
    /// Points of the unpruned space.
    pub space_size: u64,
    /// Points left after resource pruning (the ones a search may time).
    pub valid: u64,
    /// Configurations timed.
    pub evaluated: usize,
    /// The fastest configuration, as tuning-space pairs.
    pub best: Option<TuneConfig>,
    /// Its time per sweep in milliseconds.
    pub best_ms: f64,
    /// The default configuration's time per sweep in milliseconds.
    pub default_ms: f64,
    /// Seconds the whole search took (compiles, uploads and timing): the tuning cost.
    pub seconds: f64,
    /// Where the results were stored, when a cache was given.
    pub stored: Option<std::path::PathBuf>,
}

/// Calls `progress(done)` after each evaluation.
struct Progress<'a, O> {
    inner: O,
    done: usize,
    progress: &'a mut dyn FnMut(usize),
}

impl<O: Objective> Objective for Progress<'_, O> {
    fn evaluate(&mut self, p: &[u32]) -> Outcome {
        let o = self.inner.evaluate(p);
        self.done += 1;
        (self.progress)(self.done);
        o
    }
}

/// What one tuning run needs besides the stencil.
#[derive(Debug)]
pub struct TuneOptions<'a> {
    /// The search; `None` is exhaustive (every valid configuration, in index order).
    pub strategy: Option<Box<dyn Strategy>>,
    /// Most configurations timed.
    pub budget: u64,
    /// Timed sweeps per configuration (median), after one verified warm-up sweep.
    pub runs: usize,
    /// Where results go; `None` keeps them in the report only.
    pub cache: Option<&'a TuningCache>,
    /// Seed of randomised strategies.
    pub seed: u64,
}

impl Default for TuneOptions<'_> {
    fn default() -> Self {
        TuneOptions { strategy: None, budget: u64::MAX, runs: 3, cache: None, seed: 1 }
    }
}

fn search<K: Kernel, C: Clock>(
    space: &Space,
    kernel: K,
    clock: C,
    opts: &mut TuneOptions<'_>,
    progress: &mut dyn FnMut(usize),
) -> Result<(Vec<Measured>, f64)> {
    let t0 = Instant::now();
    let bench = Bench::new(space, kernel, clock, Measurement { warmup: 0, runs: opts.runs.max(1) });
    let mut objective = Progress { inner: bench, done: 0, progress };
    let mut exhaustive = hetero_sched::tune::strategy::by_name("brute_force")?;
    let strategy: &mut dyn Strategy = match opts.strategy.as_mut() {
        Some(s) => s.as_mut(),
        None => exhaustive.as_mut(),
    };
    let budget = hetero_sched::tune::Budget::evals(opts.budget.max(1));
    hetero_sched::tune::run(strategy, space, &mut objective, budget, opts.seed)?;
    let (_, log) = objective.inner.into_parts();
    Ok((log, t0.elapsed().as_secs_f64()))
}

fn report(
    kernel: String,
    space: &Space,
    log: &[Measured],
    default: &TuneConfig,
    default_ms: f64,
    seconds: f64,
) -> TuneReport {
    let best = log
        .iter()
        .filter_map(|m| m.outcome.time().map(|t| (t, &m.config)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let default_ms =
        log.iter().find(|m| &m.config == default).and_then(|m| m.outcome.time()).unwrap_or(default_ms);
    TuneReport {
        kernel,
        space_size: space.product() as u64,
        valid: space.count_valid(),
        evaluated: log.len(),
        best: best.map(|b| b.1.clone()),
        best_ms: best.map_or(f64::INFINITY, |b| b.0),
        default_ms,
        seconds,
        stored: None,
    }
}

/// The GPU kernel as hetero-sched's [`Kernel`]: `apply` compiles and uploads, then runs one
/// sweep and checks it bitwise against the CPU (the generated kernels round as the CPU does).
struct GpuKernel<'a, T: Element> {
    gpu: cuda_kernels::Gpu,
    stencil: &'a Stencil<T>,
    plan: crate::plan::Plan<T>,
    field: &'a Array3<T>,
    want: &'a Array3<T>,
    dev: Option<DevicePlan<T>>,
}

impl<T: Element> Kernel for GpuKernel<'_, T> {
    type Output = ();

    fn apply(&mut self, config: &TuneConfig) -> std::result::Result<(), String> {
        let p = gpu_params_of(config).ok_or("not a GPU configuration")?;
        self.dev = None;
        let mut dev = DevicePlan::new(&self.gpu, &self.plan, self.field, p).map_err(|e| e.to_string())?;
        dev.sweep().map_err(|e| e.to_string())?;
        let mut got = self.field.clone();
        dev.download(&mut got).map_err(|e| e.to_string())?;
        if got != *self.want {
            return Err(format!("{p:?} differs from the CPU sweep of {}", kernel_name("gpu", self.stencil)));
        }
        self.dev = Some(dev);
        Ok(())
    }

    fn run(&mut self) -> std::result::Result<(), String> {
        let dev = self.dev.as_mut().ok_or("not applied")?;
        dev.sweep().map_err(|e| e.to_string())
    }

    fn verify(&mut self, _: &()) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// Tunes the generated GPU kernel of `s` on `gpu` for a grid of `shape` (filled with a smooth
/// field), calling `progress(done)` after each configuration; results go to `opts.cache`.
pub fn tune_gpu<T: Element>(
    gpu: &cuda_kernels::Gpu,
    s: &Stencil<T>,
    shape: [usize; 3],
    mut opts: TuneOptions<'_>,
    progress: &mut dyn FnMut(usize),
) -> Result<TuneReport> {
    let field = test_field::<T>(shape);
    // The generated kernels evaluate in the exact order.
    let want = s.apply(field.view(), &Config::cpu().with_order(Order::Exact))?;
    let plan = s.plan(&shape)?;
    let space = device_space(gpu, s)?;
    let kernel = GpuKernel { gpu: gpu.clone(), stencil: s, plan, field: &field, want: &want, dev: None };
    let clock = hetero_sched::tune::CudaEventClock::new(gpu)?;
    let (log, seconds) = search(&space, kernel, clock, &mut opts, progress)?;
    let default = gpu_config_of(&GpuParams::default());
    let name = kernel_name("gpu", s);
    let mut r = report(name.clone(), &space, &log, &default, f64::NAN, seconds);
    if let Some(cache) = opts.cache {
        let key = CacheKey::new(
            &name,
            &gpu_fingerprint(gpu),
            T::NAME,
            &size_bucket(shape.iter().product::<usize>() as u64),
        );
        r.stored = Some(cache.store(&key, &space, &log)?);
    }
    Ok(r)
}

/// Sweeps per timed run of the CPU tuning: enough for every depth of [`cpu_space`].
pub const CPU_TUNING_SWEEPS: usize = 8;

/// [`CPU_TUNING_SWEEPS`] CPU sweeps as hetero-sched's [`Kernel`] (the grid restored from a
/// kept copy before each, no allocation), checked bitwise against the reference in the same
/// evaluation order.
struct CpuKernel<'a, T: Element> {
    stencil: &'a Stencil<T>,
    field: &'a Array3<T>,
    /// The reference in the exact and the fast order.
    want: [Array3<T>; 2],
    work: Array3<T>,
    blocks: CpuBlocks,
    order: Order,
}

impl<T: Element> Kernel for CpuKernel<'_, T> {
    type Output = ();

    fn apply(&mut self, config: &TuneConfig) -> std::result::Result<(), String> {
        self.blocks = cpu_blocks_of(config).ok_or("not a CPU configuration")?;
        self.order = cpu_order_of(config).unwrap_or(Order::Exact);
        Ok(())
    }

    fn run(&mut self) -> std::result::Result<(), String> {
        self.work.assign(self.field);
        let config = Config::cpu().with_cpu_blocks(self.blocks).with_order(self.order);
        self.stencil.iterate(&mut self.work, CPU_TUNING_SWEEPS, &config).map_err(|e| e.to_string())
    }

    fn verify(&mut self, _: &()) -> std::result::Result<(), String> {
        if self.work == self.want[usize::from(self.order == Order::Fast)] {
            Ok(())
        } else {
            Err(format!("{:?} in the {:?} order differs from the reference", self.blocks, self.order))
        }
    }
}

/// Tunes the CPU blocks (and, for constant coefficients, the evaluation order) of `s` for a
/// grid of `shape` over [`cpu_space`], timing [`CPU_TUNING_SWEEPS`] sweeps per configuration;
/// results go to `opts.cache`, where `Config::cpu()` finds them.
pub fn tune_cpu<T: Element>(
    s: &Stencil<T>,
    shape: [usize; 3],
    mut opts: TuneOptions<'_>,
    progress: &mut dyn FnMut(usize),
) -> Result<TuneReport> {
    let field = test_field::<T>(shape);
    let reference = |order: Order| -> Result<Array3<T>> {
        let mut want = field.clone();
        s.iterate(&mut want, CPU_TUNING_SWEEPS, &Config::sequential().with_order(order))?;
        Ok(want)
    };
    let constant = s.has_constant_coefficients();
    let want = [reference(Order::Exact)?, if constant { reference(Order::Fast)? } else { field.clone() }];
    let space = cpu_space(constant)?;
    let work = field.clone();
    let blocks = CpuBlocks::default();
    let kernel = CpuKernel { stencil: s, field: &field, want, work, blocks, order: Order::Exact };
    let (log, seconds) = search(&space, kernel, CpuClock, &mut opts, progress)?;
    let name = kernel_name("cpu", s);
    let order = if constant { Some(default_order(&s.plan(&shape)?)) } else { None };
    let default = cpu_config_of(&blocks, order);
    let mut r = report(name.clone(), &space, &log, &default, f64::NAN, seconds);
    if let Some(cache) = opts.cache {
        let key = CacheKey::new(
            &name,
            &Fingerprint::cpu(),
            T::NAME,
            &size_bucket(shape.iter().product::<usize>() as u64),
        );
        r.stored = Some(cache.store(&key, &space, &log)?);
    }
    Ok(r)
}

/// A smooth, non-dyadic field for timing and verification.
fn test_field<T: Element>(shape: [usize; 3]) -> Array3<T> {
    Array3::from_shape_fn(shape, |(i, j, k)| T::from_f64(((i * 7 + j * 3 + k) % 17) as f64 * 0.37 - 2.5))
}

/// An error naming a configuration of [`gpu_space`] that is not valid there.
pub fn check_gpu_config(space: &Space, c: &TuneConfig) -> Result<()> {
    match space.point_of(c) {
        Some(p) if hetero_sched::tune::Domain::is_valid(space, &p) => Ok(()),
        _ => Err(StencilError::Config(format!("{} is not a valid point of the GPU space", c.key()))),
    }
}
