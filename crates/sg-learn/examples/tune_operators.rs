//! The tuner's gain for both CPU learning operators on the grids of the operator table
//! (`docs/src/learn/measured.md`): per grid and basis, a search over
//! `StreamTuning::space()` and `SubspaceTuning::space()` with `hetero_sched`'s default strategy
//! (`B α` then `Bᵀ v` timed, every output checked against the default configuration's), then
//! the default and the tuned configuration timed alternately.
//!
//! `cargo run --release -p sg-learn --example tune_operators -- [BUDGET] [RUNS] [COMPARE_RUNS] [FILTER]`
//! (defaults 10 evaluations per search, 3 timed runs per evaluation, 7 alternating rounds in
//! the comparison; `FILTER` keeps the cases whose label contains it, e.g. `d5_n5`). Nothing is
//! written to the tuning cache (that is `hetkit tune kernel sg_learn_stream`).

use std::time::Instant;

use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{Bench, Budget, Config, CpuClock, Kernel, Measurement, median, run, strategy};
use ndarray::Array2;
use sg_core::{AdaptiveGrid, Basis, GridSpec};
use sg_learn::{CpuAlgorithm, CpuStreaming, CpuSubspace, DataOperator, datasets};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Relative agreement of two configurations' products (the sums run in other orders).
const TOL: f64 = 1e-10;

/// `B α` then `Bᵀ v` by the CPU algorithm `A` on one grid, basis and data set.
struct Products<A: CpuAlgorithm> {
    grid: AdaptiveGrid,
    basis: Basis,
    x: Array2<f64>,
    alpha: Vec<f64>,
    v: Vec<f64>,
    reference: (Vec<f64>, Vec<f64>),
    op: A::Operator,
}

fn both(op: &dyn DataOperator, alpha: &[f64], v: &[f64]) -> Result<(Vec<f64>, Vec<f64>), String> {
    let (mut ba, mut btv) = (vec![0.0; op.data_len()], vec![0.0; op.grid_len()]);
    op.mult(alpha, &mut ba).map_err(|e| e.to_string())?;
    op.mult_transpose(v, &mut btv).map_err(|e| e.to_string())?;
    Ok((ba, btv))
}

fn close(a: &[f64], b: &[f64]) -> Result<(), String> {
    let scale = b.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
    let err = a.iter().zip(b).map(|(x, y)| (x - y).abs() / scale).fold(0.0f64, f64::max);
    if err <= TOL && a.len() == b.len() { Ok(()) } else { Err(format!("relative error {err:.2e}")) }
}

impl<A: CpuAlgorithm> Products<A> {
    fn new(grid: AdaptiveGrid, basis: Basis, x: Array2<f64>) -> Result<Self, Error> {
        let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
        let v: Vec<f64> = (0..x.nrows()).map(|i| (i as f64 * 0.37).cos()).collect();
        let op = A::build(&grid, basis, x.view(), A::Tuning::default())?;
        let reference = both(&op, &alpha, &v)?;
        Ok(Products { grid, basis, x, alpha, v, reference, op })
    }
}

impl<A: CpuAlgorithm> Kernel for Products<A> {
    type Output = (Vec<f64>, Vec<f64>);
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        let t = A::Tuning::from_config(c).ok_or("not a configuration of this operator")?;
        self.op = A::build(&self.grid, self.basis, self.x.view(), t).map_err(|e| e.to_string())?;
        Ok(())
    }
    fn run(&mut self) -> Result<Self::Output, String> {
        both(&self.op, &self.alpha, &self.v)
    }
    fn verify(&mut self, out: &Self::Output) -> Result<(), String> {
        close(&out.0, &self.reference.0)?;
        close(&out.1, &self.reference.1)
    }
}

/// Searches `A`'s space, then times default and tuned alternately: (default ms, tuned ms,
/// tuned configuration).
fn tune<A: CpuAlgorithm>(
    mut kernel: Products<A>,
    budget: u64,
    runs: usize,
    rounds: usize,
) -> Result<(f64, f64, Config), Error> {
    let space = A::Tuning::space();
    let settings = Measurement { warmup: 1, runs };
    let mut bench = Bench::new(space, kernel, CpuClock, settings);
    let mut strat = strategy::by_name(strategy::DEFAULT)?;
    let result = run(strat.as_mut(), space, &mut bench, Budget::evals(budget), 1)?;
    kernel = bench.into_parts().0;
    let (best, _) = result.best.ok_or("no configuration succeeded")?;
    let tuned = space.config(&best);
    let default = A::Tuning::default().to_config();
    let mut times = [Vec::new(), Vec::new()];
    for round in 0..=rounds {
        for (slot, c) in [&default, &tuned].into_iter().enumerate() {
            kernel.apply(c)?;
            let t = Instant::now();
            let out = kernel.run()?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            kernel.verify(&out)?;
            if round > 0 {
                times[slot].push(ms);
            }
        }
    }
    Ok((median(&times[0]), median(&times[1]), tuned))
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let budget: u64 = args.first().map_or(Ok(10), |s| s.parse())?;
    let runs: usize = args.get(1).map_or(Ok(3), |s| s.parse())?;
    let rounds: usize = args.get(2).map_or(Ok(7), |s| s.parse())?;
    let filter = args.get(3).cloned().unwrap_or_default();
    println!(
        "budget {budget} evaluations per search ({}), {runs} timed runs each, {rounds} alternating rounds, {} threads",
        strategy::DEFAULT,
        rayon::current_num_threads()
    );
    println!("| grid | basis | operator | default ms | tuned ms | gain | tuned configuration |");
    println!("|---|---|---|---:|---:|---:|---|");
    for (d, n, m) in [(5, 5, 20_000), (5, 7, 4_000), (10, 5, 4_000)] {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n)?)?;
        let label = format!("d{d}_n{n}_N{}_m{m}", grid.len());
        if !label.contains(&filter) {
            continue;
        }
        let (x, _) = datasets::friedman1(m, 0.0, 1);
        let x = x.slice(ndarray::s![.., 0..d]).to_owned();
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let stream = Products::<CpuStreaming>::new(grid.clone(), basis, x.clone())?;
            let (a, b, c) = tune(stream, budget, runs, rounds)?;
            println!("| {label} | {basis:?} | streaming | {a:.1} | {b:.1} | {:.2}x | `{}` |", a / b, c.key());
            let sub = Products::<CpuSubspace>::new(grid.clone(), basis, x.clone())?;
            let (a, b, c) = tune(sub, budget, runs, rounds)?;
            println!("| {label} | {basis:?} | subspace | {a:.1} | {b:.1} | {:.2}x | `{}` |", a / b, c.key());
        }
    }
    Ok(())
}
