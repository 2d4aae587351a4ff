//! `hetkit tune kernel NAME`: tunes one of the wired CPU kernels on this machine through the
//! real evaluation loop ([`Bench`]: apply, warm-up, timed runs, median, verification against an
//! independent reference), stores every measured configuration in the user's tuning cache
//! under the key the kernel's dispatch looks up (kernel, this CPU, element type, size bucket),
//! and ends with a table of the default against the tuned configuration, timed alternately.
//!
//! Unlike `tune landscape`, the parameters are the kernels' own (`ScanTuning`, `SortTuning`,
//! `EvalTuning`, `HierTuning`, the learning operators' `StreamTuning` and `SubspaceTuning`),
//! passed through their explicit `*_with`/`*_tuned` entry points (the learning operators' `new`),
//! so what is stored is exactly what later dispatches use.

use std::time::Instant;

use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{
    Bench, Budget, CacheKey, Config, CpuClock, Fingerprint, Kernel, Measurement, TuningCache, median, run,
    strategy,
};
use indicatif::{ProgressBar, ProgressStyle};
use ndarray::Array2;
use prefix_ops::scan::{self, Add, ScanTuning};
use prefix_ops::segmented::{self, SegmentedTuning, Segments};
use prefix_ops::sort::{self, Order, SortTuning};
use prefix_ops::tridiagonal::{Layout, TridiagonalBatch, TridiagonalTuning};
use rand::{Rng, SeedableRng};
use sg_core::{AdaptiveGrid, Basis, Grid, GridSpec};
use sg_cpu::{EvalTuning, EvalVariant, Evaluator, HierTuning, Hierarchizer};
use sg_learn::{CpuAlgorithm, CpuStreaming, CpuSubspace, DataOperator};

use crate::landscape::{Progress, close};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The kernels `tune kernel` knows.
pub(crate) const KERNELS: &str = "scan, sort, segmented, sg_eval, sg_hier, sg_learn_stream, \
     sg_learn_subspace, tridiagonal, tridiagonal_interleaved";

/// Options of `hetkit tune kernel`.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Evaluations of the search.
    pub(crate) budget: u64,
    /// Strategy name (default: the library's default).
    pub(crate) strategy: Option<String>,
    /// Timed runs per configuration (median).
    pub(crate) runs: usize,
    /// Seed of the search.
    pub(crate) seed: u64,
    /// Problem size (kernel-specific meaning; see `--help`).
    pub(crate) size: Option<usize>,
    /// Alternating timed runs of default and tuned in the final comparison.
    pub(crate) compare_runs: usize,
}

/// A kernel whose dispatch consults the tuning cache: what `tune kernel` needs beyond
/// [`Kernel`]. Name, space, default and bucket come from the parameters' [`Tunable`] impl,
/// so the results are stored exactly where dispatch looks them up.
trait Wired: Kernel {
    /// The kernel's parameters.
    type Params: Tunable;
    /// The element type its dispatch looks up.
    fn element_type(&self) -> &'static str;
    /// The shape its dispatch buckets.
    fn shape(&self) -> <Self::Params as Tunable>::Shape;
    /// The problem, for the report.
    fn problem(&self) -> String;
}

/// `hetkit tune kernel`.
pub(crate) fn tune_kernel(name: &str, opts: &Options) -> Result<(), Error> {
    if opts.budget == 0 {
        return Err("the budget must be at least 1".into());
    }
    let strategy_name = opts.strategy.as_deref().unwrap_or(strategy::DEFAULT);
    strategy::by_name(strategy_name)?;
    match name {
        "scan" => tune(ScanKernel::new(opts.size.unwrap_or(1 << 22))?, strategy_name, opts),
        "sort" => tune(SortKernel::new(opts.size.unwrap_or(192))?, strategy_name, opts),
        "segmented" => tune(SegmentedKernel::new(opts.size.unwrap_or(1 << 22))?, strategy_name, opts),
        "sg_eval" => tune(EvalKernel::new(opts.size.unwrap_or(4096))?, strategy_name, opts),
        "sg_hier" => tune(HierKernel::new(opts.size.unwrap_or(8))?, strategy_name, opts),
        "sg_learn_stream" => tune(
            LearnKernel::<CpuStreaming>::new::<CpuSubspace>(opts.size.unwrap_or(1 << 13))?,
            strategy_name,
            opts,
        ),
        "sg_learn_subspace" => tune(
            LearnKernel::<CpuSubspace>::new::<CpuStreaming>(opts.size.unwrap_or(1 << 13))?,
            strategy_name,
            opts,
        ),
        "tridiagonal" => tune(TriKernel::new(opts.size.unwrap_or(64), Layout::Strided)?, strategy_name, opts),
        "tridiagonal_interleaved" => {
            tune(TriKernel::new(opts.size.unwrap_or(64), Layout::Interleaved)?, strategy_name, opts)
        }
        other => Err(format!("unknown kernel `{other}` (known: {KERNELS})").into()),
    }
}

fn tune<K: Wired>(kernel: K, strategy_name: &str, opts: &Options) -> Result<(), Error> {
    let space = K::Params::space();
    let bucket = K::Params::bucket(kernel.shape())
        .ok_or("this problem is too small to be tuned: dispatch never looks it up")?;
    let key = CacheKey::new(K::Params::KERNEL, &Fingerprint::cpu(), kernel.element_type(), &bucket.name());
    let problem = kernel.problem();
    let default = K::Params::fallback(kernel.shape()).to_config();
    let budget = opts.budget.min(space.count_valid()).max(1);
    let pb = ProgressBar::new(budget);
    pb.set_style(
        ProgressStyle::with_template("tuning [{bar:30}] {pos}/{len} configs {elapsed} (eta {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let settings = Measurement { warmup: 1, runs: opts.runs.max(1) };
    let mut bench = Bench::new(space, Progress { inner: kernel, pb: pb.clone() }, CpuClock, settings);
    let mut strat = strategy::by_name(strategy_name)?;
    let result = run(strat.as_mut(), space, &mut bench, Budget::evals(budget), opts.seed)?;
    pb.finish_and_clear();
    let (progress, log) = bench.into_parts();
    let mut kernel = progress.inner;
    let failed = log.iter().filter(|m| m.outcome.time().is_none()).count();
    let cache = TuningCache::open_default()?;
    let path = cache.store(&key, space, &log)?;
    let tuned = cache.lookup(&key, space).ok_or("no configuration succeeded")?;
    println!("{} on {problem}", key.kernel);
    println!(
        "  {} evaluations with {strategy_name} ({failed} failed), stopped: {:?}; stored in {}",
        result.evaluations,
        result.stop,
        path.display()
    );
    let (t_default, t_tuned) = compare(&mut kernel, &default, &tuned, opts.compare_runs.max(1))?;
    println!();
    println!("| configuration | median ms | speed-up |");
    println!("|---|---:|---:|");
    println!("| default `{}` | {t_default:.3} | 1.00 |", default.key());
    println!("| tuned `{}` | {t_tuned:.3} | {:.2} |", tuned.key(), t_default / t_tuned);
    Ok(())
}

/// Medians of `runs` timed executions of each configuration, alternating so that drifts in
/// machine load hit both alike; every output is verified.
fn compare<K: Kernel>(kernel: &mut K, a: &Config, b: &Config, runs: usize) -> Result<(f64, f64), Error> {
    let mut times = [Vec::with_capacity(runs), Vec::with_capacity(runs)];
    for i in 0..=runs {
        for (slot, cfg) in [a, b].into_iter().enumerate() {
            kernel.apply(cfg)?;
            let t0 = Instant::now();
            let out = kernel.run()?;
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            kernel.verify(&out)?;
            // The first round warms caches and page tables.
            if i > 0 {
                times[slot].push(ms);
            }
        }
    }
    Ok((median(&times[0]), median(&times[1])))
}

fn rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    rand_chacha::ChaCha8Rng::seed_from_u64(seed)
}

// --- scan ---------------------------------------------------------------------------------

struct ScanKernel {
    input: Vec<u64>,
    reference: Vec<u64>,
    buf: Vec<u64>,
    tuning: ScanTuning,
}

impl ScanKernel {
    fn new(n: usize) -> Result<Self, Error> {
        if n == 0 {
            return Err("the scan needs at least one element".into());
        }
        let mut r = rng(5);
        let input: Vec<u64> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let mut reference = input.clone();
        scan::reference::inclusive(&mut reference, Add);
        Ok(ScanKernel { buf: vec![0; n], input, reference, tuning: ScanTuning::DEFAULT })
    }
}

impl Kernel for ScanKernel {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = ScanTuning::from_config(c).ok_or("not a scan configuration")?;
        Ok(())
    }
    /// Copy, then scan in place (the copy is part of every configuration's time alike).
    fn run(&mut self) -> Result<(), String> {
        self.buf.copy_from_slice(&self.input);
        scan::inclusive_with(&mut self.buf, Add, &self.tuning);
        Ok(())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        (self.buf == self.reference)
            .then_some(())
            .ok_or_else(|| "scan differs from the sequential loop".into())
    }
}

impl Wired for ScanKernel {
    type Params = ScanTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<u64>()
    }
    fn shape(&self) -> usize {
        self.input.len()
    }
    fn problem(&self) -> String {
        format!("inclusive Add scan of {} u64 (copy + scan)", self.input.len())
    }
}

// --- sort ---------------------------------------------------------------------------------

/// Keys sorted per tuning run: rows of `row_len` filling about 2^20 keys.
const SORT_KEYS: usize = 1 << 20;

struct SortKernel {
    row_len: usize,
    input: Vec<f32>,
    reference: Vec<f32>,
    buf: Vec<f32>,
    tuning: SortTuning,
}

impl SortKernel {
    fn new(row_len: usize) -> Result<Self, Error> {
        if row_len < 2 {
            return Err("sort rows need at least 2 keys".into());
        }
        let rows = (SORT_KEYS / row_len).max(1);
        let mut r = rng(7);
        let input: Vec<f32> = (0..rows * row_len).map(|_| r.random_range(-1e6f32..1e6)).collect();
        let mut reference = input.clone();
        reference.chunks_mut(row_len).for_each(|row| row.sort_unstable_by(f32::total_cmp));
        Ok(SortKernel { row_len, buf: input.clone(), input, reference, tuning: SortTuning::DEFAULT })
    }
}

impl Kernel for SortKernel {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = SortTuning::from_config(c).ok_or("not a sort configuration")?;
        Ok(())
    }
    /// Copy, then sort the rows in place.
    fn run(&mut self) -> Result<(), String> {
        self.buf.copy_from_slice(&self.input);
        sort::rows_with(&mut self.buf, self.row_len, Order::Ascending, &self.tuning)
            .map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        let same = self.buf.iter().zip(&self.reference).all(|(a, b)| a.to_bits() == b.to_bits());
        same.then_some(()).ok_or_else(|| "rows differ from std's sort".into())
    }
}

impl Wired for SortKernel {
    type Params = SortTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<f32>()
    }
    fn shape(&self) -> usize {
        self.row_len
    }
    fn problem(&self) -> String {
        format!("{} rows of {} f32 (copy + sort)", self.input.len() / self.row_len, self.row_len)
    }
}

// --- segmented ----------------------------------------------------------------------------

/// The selector's thresholds, timed on what they decide: a segmented u32 `Add` reduction over
/// random segment lengths (1 ..= 2^17, so some segments are split and many are not) and the
/// flattened quicksort of a quarter as many keys (its switch point). Integers, so every
/// configuration's output is checked exactly.
struct SegmentedKernel {
    xs: Vec<u32>,
    segs: Segments,
    sums: Vec<u32>,
    keys: Vec<u32>,
    sorted: Vec<u32>,
    buf: Vec<u32>,
    out: Vec<u32>,
    tuning: SegmentedTuning,
}

impl SegmentedKernel {
    fn new(n: usize) -> Result<Self, Error> {
        if n < 4 {
            return Err("the segmented kernel needs at least 4 elements".into());
        }
        let mut r = rng(13);
        let xs: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let mut lens = Vec::new();
        let mut left = n;
        while left > 0 {
            let l = (1usize << r.random_range(0..18)).min(left);
            lens.push(l);
            left -= l;
        }
        let segs = Segments::from_lengths(&lens)?;
        let sums = segs
            .offsets()
            .windows(2)
            .map(|w| xs[w[0]..w[1]].iter().fold(0u32, |a, &x| a.wrapping_add(x)))
            .collect();
        let keys: Vec<u32> = (0..n / 4).map(|_| r.random()).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        Ok(SegmentedKernel {
            buf: keys.clone(),
            out: Vec::new(),
            xs,
            segs,
            sums,
            keys,
            sorted,
            tuning: SegmentedTuning::DEFAULT,
        })
    }
}

impl Kernel for SegmentedKernel {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = SegmentedTuning::from_config(c).ok_or("not a segmented configuration")?;
        Ok(())
    }
    /// The reduction, then copy and quicksort.
    fn run(&mut self) -> Result<(), String> {
        self.out =
            segmented::reduce_with(&self.xs, &self.segs, Add, &self.tuning).map_err(|e| e.to_string())?;
        self.buf.copy_from_slice(&self.keys);
        segmented::apps::quicksort_with(&mut self.buf, &self.tuning).map_err(|e| e.to_string())?;
        Ok(())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        if self.out != self.sums {
            return Err("segment sums differ from the sequential loop".into());
        }
        (self.buf == self.sorted).then_some(()).ok_or_else(|| "quicksort differs from std's sort".into())
    }
}

impl Wired for SegmentedKernel {
    type Params = SegmentedTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<u32>()
    }
    fn shape(&self) -> usize {
        self.xs.len()
    }
    fn problem(&self) -> String {
        format!(
            "segmented u32 Add reduce of {} elements in {} segments + quicksort of {} keys",
            self.xs.len(),
            self.segs.num_segments(),
            self.keys.len()
        )
    }
}

// --- sg-cpu evaluation --------------------------------------------------------------------

struct EvalKernel {
    ev: Evaluator,
    grid: Grid<f64>,
    points: Array2<f64>,
    reference: Vec<f64>,
    tuning: EvalTuning,
}

impl EvalKernel {
    fn new(m: usize) -> Result<Self, Error> {
        let (d, n) = (4, 7);
        let spec = GridSpec::regular(d, n)?;
        let mut grid =
            Grid::from_fn(spec.clone(), |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product())?;
        grid.hierarchize();
        let mut r = rng(11);
        let points = Array2::from_shape_fn((m, d), |_| r.random_range(0.0..1.0));
        let ev = Evaluator::new(&spec)?;
        // The reference: sg-core's sequential evaluation, independent of the tiled code.
        let reference = sg_core::VectorGrid::from_values(spec, 1, grid.values().to_vec())?
            .evaluate_batch(points.view())?
            .iter()
            .copied()
            .collect();
        Ok(EvalKernel { ev, grid, points, reference, tuning: EvalTuning::DEFAULT })
    }
}

impl Kernel for EvalKernel {
    type Output = Vec<f64>;
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = EvalTuning::from_config(c).ok_or("not an evaluation configuration")?;
        Ok(())
    }
    fn run(&mut self) -> Result<Vec<f64>, String> {
        self.ev
            .evaluate_tuned(self.grid.values(), 1, self.points.view(), &self.tuning)
            .map_err(|e| e.to_string())
    }
    fn verify(&mut self, out: &Vec<f64>) -> Result<(), String> {
        close(out, &self.reference, 1e-12)
    }
}

impl Wired for EvalKernel {
    type Params = EvalTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<f64>()
    }
    fn shape(&self) -> usize {
        self.points.nrows()
    }
    fn problem(&self) -> String {
        let variant = self.ev.choose_with(self.points.view(), &EvalTuning::DEFAULT).0;
        let v = if variant == EvalVariant::BlocksParallel { "blocks_parallel" } else { "point_tiles" };
        format!("d4 n7 regular grid, {} random points, f64 (default variant {v})", self.points.nrows())
    }
}

// --- sg-cpu hierarchization ---------------------------------------------------------------

struct HierKernel {
    spec: GridSpec,
    plan: Hierarchizer,
    nodal: Vec<f64>,
    reference: Vec<f64>,
    buf: Vec<f64>,
    tuning: HierTuning,
}

impl HierKernel {
    /// A regular grid of dimension 4 and level `n`.
    fn new(n: usize) -> Result<Self, Error> {
        let spec = GridSpec::regular(4, u32::try_from(n)?)?;
        let len = usize::try_from(spec.len())?;
        let mut r = rng(13);
        let nodal: Vec<f64> = (0..len).map(|_| r.random_range(-1.0..1.0)).collect();
        let mut reference = nodal.clone();
        sg_core::reference::hierarchize(&spec, &mut reference, 1)?;
        let plan = Hierarchizer::new(&spec)?;
        Ok(HierKernel { spec, plan, buf: nodal.clone(), nodal, reference, tuning: HierTuning::DEFAULT })
    }
}

impl Kernel for HierKernel {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = HierTuning::from_config(c).ok_or("not a hierarchization configuration")?;
        Ok(())
    }
    /// Copy, then hierarchize in place.
    fn run(&mut self) -> Result<(), String> {
        self.buf.copy_from_slice(&self.nodal);
        self.plan.hierarchize_tuned(&mut self.buf, 1, &self.tuning).map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        close(&self.buf, &self.reference, 1e-12)
    }
}

impl Wired for HierKernel {
    type Params = HierTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<f64>()
    }
    fn shape(&self) -> usize {
        self.nodal.len()
    }
    fn problem(&self) -> String {
        format!(
            "regular grid d{} with {} points, f64 (copy + hierarchize)",
            self.spec.dim(),
            self.nodal.len()
        )
    }
}

// --- tridiagonal --------------------------------------------------------------------------

/// Unknowns per tuning run: systems of `m` filling about 2^20 values.
const TRI_VALUES: usize = 1 << 20;

struct TriKernel {
    m: usize,
    layout: Layout,
    diagonals: [Vec<f64>; 3],
    rhs: Vec<f64>,
    reference: Vec<f64>,
    buf: Vec<f64>,
    tuning: TridiagonalTuning,
}

impl TriKernel {
    /// Strictly dominant systems of size `m` (so `Auto` runs the tuned Thomas solver).
    fn new(m: usize, layout: Layout) -> Result<Self, Error> {
        if m == 0 {
            return Err("tridiagonal systems need at least one unknown".into());
        }
        let g = (TRI_VALUES / m).max(2);
        let mut r = rng(17);
        let mut draw =
            |lo: f64, hi: f64| -> Vec<f64> { (0..m * g).map(|_| r.random_range(lo..hi)).collect() };
        let (a, c, b, rhs) = (draw(-1.0, 1.0), draw(-1.0, 1.0), draw(2.5, 4.0), draw(-1.0, 1.0));
        let reference = thomas_reference(&a, &b, &c, &rhs, m, g, layout);
        let tuning = TridiagonalTuning::default_for(layout);
        Ok(TriKernel { m, layout, buf: rhs.clone(), diagonals: [a, b, c], rhs, reference, tuning })
    }
}

/// Sequential Thomas, one system at a time through the layout's index: the oracle.
fn thomas_reference(
    a: &[f64],
    b: &[f64],
    c: &[f64],
    d: &[f64],
    m: usize,
    g: usize,
    layout: Layout,
) -> Vec<f64> {
    let mut x = vec![0.0; d.len()];
    let (mut cp, mut dp) = (vec![0.0; m], vec![0.0; m]);
    for s in 0..g {
        let at = |k: usize| layout.index(m, g, s, k);
        for k in 0..m {
            let i = at(k);
            let (sub, prev_c, prev_d) = if k == 0 { (0.0, 0.0, 0.0) } else { (a[i], cp[k - 1], dp[k - 1]) };
            let pivot = b[i] - sub * prev_c;
            cp[k] = if k + 1 < m { c[i] / pivot } else { 0.0 };
            dp[k] = (d[i] - sub * prev_d) / pivot;
        }
        for k in (0..m).rev() {
            let next = if k + 1 < m { x[at(k + 1)] } else { 0.0 };
            x[at(k)] = dp[k] - cp[k] * next;
        }
    }
    x
}

impl Kernel for TriKernel {
    type Output = ();
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.tuning = TridiagonalTuning::from_config(c).ok_or("not a tridiagonal configuration")?;
        Ok(())
    }
    /// Copy, then solve in place with `Auto` (a dominance pass, then the tuned solver).
    fn run(&mut self) -> Result<(), String> {
        self.buf.copy_from_slice(&self.rhs);
        let [a, b, c] = &self.diagonals;
        let batch = TridiagonalBatch::new(a, b, c, self.m, self.layout).map_err(|e| e.to_string())?;
        batch.solve_tuned(&self.tuning, &mut self.buf).map_err(|e| e.to_string())
    }
    fn verify(&mut self, _: &()) -> Result<(), String> {
        close(&self.buf, &self.reference, 1e-12)
    }
}

impl Wired for TriKernel {
    type Params = TridiagonalTuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<f64>()
    }
    fn shape(&self) -> (Layout, usize, usize) {
        (self.layout, self.m, self.rhs.len() / self.m)
    }
    fn problem(&self) -> String {
        let layout = if self.layout == Layout::Strided { "strided" } else { "interleaved" };
        format!(
            "{} {layout} systems of {} f64, dominant (copy + Auto solve)",
            self.rhs.len() / self.m,
            self.m
        )
    }
}

// --- sg-learn operators -------------------------------------------------------------------

/// Level of the Friedman1-shaped grid: `d = 10`, level 4, 2001 functions (the thesis uses
/// level 7; this keeps a tuning run short while `N·m` stays far above the task sizes).
const LEARN_LEVEL: u32 = 4;

/// `B α` then `Bᵀ v` on Friedman1 data (`d = 10`, `m` points, modified linear basis, a
/// level-4 regular grid) by the CPU algorithm `A`: the two products of a CG iteration of the
/// regression. The operator is built per configuration (its layout depends on the parameters),
/// as a fit builds it once for all its iterations, so building is not timed. The output of the
/// default configuration is the reference every configuration is checked against, and it is
/// itself checked at set-up against another algorithm's (independent index arithmetic).
struct LearnKernel<A: CpuAlgorithm> {
    grid: AdaptiveGrid,
    x: Array2<f64>,
    alpha: Vec<f64>,
    v: Vec<f64>,
    reference: (Vec<f64>, Vec<f64>),
    op: A::Operator,
}

/// Both products with `op`.
fn both_products(op: &dyn DataOperator, alpha: &[f64], v: &[f64]) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut ba = vec![0.0; op.data_len()];
    let mut btv = vec![0.0; op.grid_len()];
    op.mult(alpha, &mut ba).map_err(|e| e.to_string())?;
    op.mult_transpose(v, &mut btv).map_err(|e| e.to_string())?;
    Ok((ba, btv))
}

/// Relative agreement of two configurations' products: the sums run in other orders.
const LEARN_TOL: f64 = 1e-10;

/// `A`'s operator with `tuning`.
fn learn_operator<A: CpuAlgorithm>(
    grid: &AdaptiveGrid,
    x: &Array2<f64>,
    tuning: A::Tuning,
) -> Result<A::Operator, String> {
    A::build(grid, Basis::ModifiedLinear, x.view(), tuning).map_err(|e| e.to_string())
}

impl<A: CpuAlgorithm> LearnKernel<A> {
    /// The problem with `m` data points; `B` checks the defaults' output.
    fn new<B: CpuAlgorithm>(m: usize) -> Result<Self, Error> {
        if m == 0 {
            return Err("the learning operators need at least one data point".into());
        }
        let (x, y) = sg_learn::datasets::friedman1(m, 1.0, 19);
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(10, LEARN_LEVEL)?)?;
        let alpha: Vec<f64> = (0..grid.len()).map(|j| ((j * 37 % 101) as f64 - 50.0) / 50.0).collect();
        let v = y.to_vec();
        let op = learn_operator::<A>(&grid, &x, A::Tuning::default())?;
        let reference = both_products(&op, &alpha, &v)?;
        let other = both_products(&learn_operator::<B>(&grid, &x, B::Tuning::default())?, &alpha, &v)?;
        close(&reference.0, &other.0, LEARN_TOL)
            .and_then(|()| close(&reference.1, &other.1, LEARN_TOL))
            .map_err(|e| format!("the default {} differs from the default {}: {e}", A::NAME, B::NAME))?;
        Ok(LearnKernel { grid, x, alpha, v, reference, op })
    }
}

impl<A: CpuAlgorithm> Kernel for LearnKernel<A> {
    type Output = (Vec<f64>, Vec<f64>);
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        let tuning = A::Tuning::from_config(c).ok_or("not a configuration of this operator")?;
        self.op = learn_operator::<A>(&self.grid, &self.x, tuning)?;
        Ok(())
    }
    fn run(&mut self) -> Result<(Vec<f64>, Vec<f64>), String> {
        both_products(&self.op, &self.alpha, &self.v)
    }
    fn verify(&mut self, out: &(Vec<f64>, Vec<f64>)) -> Result<(), String> {
        close(&out.0, &self.reference.0, LEARN_TOL)?;
        close(&out.1, &self.reference.1, LEARN_TOL)
    }
}

impl<A: CpuAlgorithm> Wired for LearnKernel<A> {
    type Params = A::Tuning;
    fn element_type(&self) -> &'static str {
        std::any::type_name::<f64>()
    }
    fn shape(&self) -> (usize, usize) {
        (self.grid.len(), self.x.nrows())
    }
    fn problem(&self) -> String {
        format!(
            "{}: B alpha + B^T v, Friedman1 d10 m={}, level-{LEARN_LEVEL} regular grid ({} points), \
             modified linear, f64",
            A::NAME,
            self.x.nrows(),
            self.grid.len()
        )
    }
}
