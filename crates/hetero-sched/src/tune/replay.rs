//! Replay (Kernel Tuner's "simulation mode"): a strategy searches a recorded cache file, where
//! evaluating a configuration is a look-up. This is how strategies are compared and how the
//! default strategy was chosen.

use std::collections::HashMap;
use std::ops::ControlFlow;

use rand::Rng;
use serde::Serialize;

use super::TuneRng;
use super::error::{Result, TuneError};
use super::kt::KtFile;
use super::search::{Budget, Objective, Outcome, run};
use super::space::{Domain, Point};
use super::strategy;

/// The configurations of a cache file as a domain: exactly those are valid.
#[derive(Debug, Clone)]
pub struct ReplayDomain {
    radices: Vec<u32>,
    points: Vec<Point>,
    index: HashMap<Point, usize>,
    outcomes: Vec<Outcome>,
}

impl ReplayDomain {
    /// The domain of a file; entries mapping to the same point keep the first.
    pub fn new(file: &KtFile) -> Result<ReplayDomain> {
        let radices: Vec<u32> = file.params.iter().map(|(_, v)| v.len() as u32).collect();
        let mut rows: Vec<(Point, Outcome)> = Vec::with_capacity(file.entries.len());
        for e in &file.entries {
            let p: Point = e
                .values
                .iter()
                .zip(&file.params)
                .map(|(v, (_, vals))| vals.iter().position(|x| x == v).map(|i| i as u32))
                .collect::<Option<_>>()
                .ok_or_else(|| TuneError::InvalidSpace("entry value outside tune_params".into()))?;
            let o = match e.time {
                Some(t) => Outcome::Time(t),
                None => Outcome::Failed(e.fields.get("time").map_or("no time".into(), |t| t.to_string())),
            };
            rows.push((p, o));
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        let index = rows.iter().enumerate().map(|(i, (p, _))| (p.clone(), i)).collect();
        let (points, outcomes) = rows.into_iter().unzip();
        Ok(ReplayDomain { radices, points, index, outcomes })
    }

    /// The recorded outcome of a point.
    pub fn outcome(&self, p: &[u32]) -> Option<&Outcome> {
        self.index.get(p).map(|&i| &self.outcomes[i])
    }

    /// The best recorded time.
    pub fn best_time(&self) -> Option<f64> {
        self.outcomes.iter().filter_map(Outcome::time).min_by(f64::total_cmp)
    }

    /// Number of configurations.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the file had no configurations.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

impl Domain for ReplayDomain {
    fn radices(&self) -> &[u32] {
        &self.radices
    }

    fn is_valid(&self, p: &[u32]) -> bool {
        self.index.contains_key(p)
    }

    fn sample(&self, rng: &mut TuneRng) -> Option<Point> {
        if self.points.is_empty() {
            None
        } else {
            Some(self.points[rng.random_range(0..self.points.len())].clone())
        }
    }

    fn valid_count(&self) -> Option<u64> {
        Some(self.points.len() as u64)
    }

    fn for_each_valid(&self, f: &mut dyn FnMut(&[u32]) -> ControlFlow<()>) {
        for p in &self.points {
            if f(p).is_break() {
                return;
            }
        }
    }
}

/// The look-up objective over a [`ReplayDomain`].
#[derive(Debug)]
pub struct ReplayObjective<'a>(pub &'a ReplayDomain);

impl Objective for ReplayObjective<'_> {
    fn evaluate(&mut self, p: &[u32]) -> Outcome {
        self.0.outcome(p).cloned().unwrap_or_else(|| Outcome::Failed("not in the cache file".into()))
    }
}

/// Replay settings.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    /// Strategy name.
    pub strategy: String,
    /// Evaluations per run.
    pub budget: u64,
    /// Number of seeded runs.
    pub runs: u32,
    /// Seed of the first run (run `i` uses `seed + i`).
    pub seed: u64,
}

/// The metrics of a replay, printed by `hetkit tune replay --json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReplaySummary {
    /// Strategy name.
    pub strategy: String,
    /// Evaluations per run.
    pub budget: u64,
    /// Number of runs.
    pub runs: u32,
    /// Fraction of runs whose best time is at most 1.05 x the file's best.
    pub within5: f64,
    /// Fraction of runs whose best time is at most 1.01 x the file's best.
    pub within1: f64,
    /// Median over runs of best found / file's best (`null` if a run found nothing).
    pub median_ratio: Option<f64>,
    /// Median evaluations until a time at most best / 0.95 was found (runs that never found
    /// one count as infinite); `null` when that median is infinite.
    pub evals_to_95: Option<f64>,
    /// The file's best time.
    pub best: f64,
    /// Number of configurations in the file.
    pub configurations: usize,
}

/// Median of a non-empty slice (mean of the middle two for even lengths; infinities allowed).
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// Runs `cfg.runs` seeded searches against the file; `progress` is called after each run.
pub fn replay(
    domain: &ReplayDomain,
    cfg: &ReplayConfig,
    progress: &mut dyn FnMut(u32),
) -> Result<ReplaySummary> {
    if cfg.budget == 0 {
        return Err(TuneError::InvalidBudget("the budget must be at least 1".into()));
    }
    if cfg.runs == 0 {
        return Err(TuneError::InvalidBudget("at least one run is needed".into()));
    }
    let best = domain.best_time().filter(|b| *b > 0.0).ok_or_else(|| {
        TuneError::InvalidSpace("the file has no successful configuration with a positive time".into())
    })?;
    let (mut ratios, mut to95) = (Vec::new(), Vec::new());
    for i in 0..cfg.runs {
        let mut strat = strategy::by_name(&cfg.strategy)?;
        let mut obj = ReplayObjective(domain);
        let res = run(
            strat.as_mut(),
            domain,
            &mut obj,
            Budget::evals(cfg.budget),
            cfg.seed.wrapping_add(u64::from(i)),
        )?;
        let found = res.best.as_ref().map_or(f64::INFINITY, |(_, t)| *t);
        ratios.push(found / best);
        let curve = res.best_so_far();
        to95.push(curve.iter().position(|&t| t <= best / 0.95).map_or(f64::INFINITY, |k| (k + 1) as f64));
        progress(i + 1);
    }
    let frac = |lim: f64| ratios.iter().filter(|&&r| r <= lim).count() as f64 / ratios.len() as f64;
    let finite = |x: f64| x.is_finite().then_some(x);
    Ok(ReplaySummary {
        strategy: cfg.strategy.clone(),
        budget: cfg.budget,
        runs: cfg.runs,
        within5: frac(1.05 + 1e-12),
        within1: frac(1.01 + 1e-12),
        median_ratio: finite(median(&ratios)),
        evals_to_95: finite(median(&to95)),
        best,
        configurations: domain.len(),
    })
}
