//! The search driver: budgets, the per-run memo of evaluated points, and the record of a run.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::SeedableRng;

use super::TuneRng;
use super::error::{Result, TuneError};
use super::space::{Domain, Point};
use super::strategy::Strategy;

/// The result of evaluating one configuration.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It ran and verified; the measured time (any unit, lower is better).
    Time(f64),
    /// It failed to compile, launch or verify (the reason), or it has no numeric time.
    Failed(String),
}

impl Outcome {
    /// The time of a successful evaluation.
    pub fn time(&self) -> Option<f64> {
        match self {
            Outcome::Time(t) => Some(*t),
            Outcome::Failed(_) => None,
        }
    }
}

/// What a search minimises: the time of a configuration.
pub trait Objective {
    /// Evaluates a valid point (full size).
    fn evaluate(&mut self, p: &[u32]) -> Outcome;

    /// Evaluates a point on reduced input (thesis ch. 5, input reduction): cheaper, with
    /// (ideally) the same optimum. `None` when the objective has no reduced form.
    fn evaluate_reduced(&mut self, _p: &[u32]) -> Option<Outcome> {
        None
    }

    /// The cost of a reduced evaluation in units of a full one (counted against the budget).
    fn reduced_cost(&self) -> f64 {
        1.0
    }
}

impl<F: FnMut(&[u32]) -> Outcome> Objective for F {
    fn evaluate(&mut self, p: &[u32]) -> Outcome {
        self(p)
    }
}

/// Limits of one search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Maximum number of (full-size) evaluations of distinct configurations.
    pub evaluations: u64,
    /// Wall-clock limit, if any.
    pub time: Option<Duration>,
}

impl Budget {
    /// A budget of `n` evaluations and no time limit.
    pub fn evals(n: u64) -> Self {
        Budget { evaluations: n, time: None }
    }

    /// Adds a time limit.
    pub fn with_time(mut self, t: Duration) -> Self {
        self.time = Some(t);
        self
    }
}

/// Why a search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The evaluation budget is spent.
    Budget,
    /// The time budget is spent.
    Time,
    /// Every valid configuration was evaluated, or the strategy kept proposing known ones.
    Exhausted,
    /// The strategy finished by itself (e.g. brute force or a converged line search).
    Finished,
}

/// Returned by [`Search::eval`] when the search must end; strategies propagate it with `?`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop(pub StopReason);

/// One evaluation of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The point.
    pub point: Point,
    /// Its outcome.
    pub outcome: Outcome,
    /// Whether it was measured on reduced input.
    pub reduced: bool,
}

/// The result of one search.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneResult {
    /// The best full-size point and its time.
    pub best: Option<(Point, f64)>,
    /// Every evaluation, in order (full and reduced).
    pub history: Vec<Record>,
    /// Full-size evaluations spent.
    pub evaluations: u64,
    /// Why it stopped.
    pub stop: StopReason,
}

impl TuneResult {
    /// The best time after each full evaluation (the convergence curve).
    pub fn best_so_far(&self) -> Vec<f64> {
        let mut best = f64::INFINITY;
        self.history
            .iter()
            .filter(|r| !r.reduced)
            .map(|r| {
                if let Some(t) = r.outcome.time() {
                    best = best.min(t);
                }
                best
            })
            .collect()
    }
}

/// Consecutive proposals of already-evaluated points after which a search counts as exhausted.
const MAX_DUPLICATE_STREAK: u64 = 20_000;

/// The state a strategy works against: the domain, the objective behind a memo, the budgets.
pub struct Search<'a> {
    domain: &'a dyn Domain,
    objective: &'a mut dyn Objective,
    rng: TuneRng,
    budget: Budget,
    deadline: Option<Instant>,
    spent: f64,
    evaluations: u64,
    memo: HashMap<Point, Outcome>,
    reduced_memo: HashMap<Point, Outcome>,
    history: Vec<Record>,
    best: Option<(Point, f64)>,
    dup_streak: u64,
}

impl std::fmt::Debug for Search<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Search")
            .field("evaluations", &self.evaluations)
            .field("best", &self.best)
            .finish_non_exhaustive()
    }
}

impl<'a> Search<'a> {
    fn new(domain: &'a dyn Domain, objective: &'a mut dyn Objective, budget: Budget, seed: u64) -> Self {
        Search {
            domain,
            objective,
            rng: TuneRng::seed_from_u64(seed),
            budget,
            deadline: budget.time.map(|t| Instant::now() + t),
            spent: 0.0,
            evaluations: 0,
            memo: HashMap::new(),
            reduced_memo: HashMap::new(),
            history: Vec::new(),
            best: None,
            dup_streak: 0,
        }
    }

    /// The domain.
    pub fn domain(&self) -> &'a dyn Domain {
        self.domain
    }

    /// The run's seeded random generator.
    pub fn rng(&mut self) -> &mut TuneRng {
        &mut self.rng
    }

    /// A uniformly drawn valid point.
    pub fn sample(&mut self) -> Result<Point, Stop> {
        self.domain.sample(&mut self.rng).ok_or(Stop(StopReason::Exhausted))
    }

    /// The best point so far.
    pub fn best(&self) -> Option<&(Point, f64)> {
        self.best.as_ref()
    }

    /// Full evaluations spent so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Budget left in units of full evaluations.
    pub fn remaining(&self) -> f64 {
        self.budget.evaluations as f64 - self.spent
    }

    /// Whether `p` has been evaluated (full size) already.
    pub fn seen(&self, p: &[u32]) -> bool {
        self.memo.contains_key(p)
    }

    /// The time of `p` at full size: `Ok(None)` for invalid points (free) and failed ones.
    /// Known points are answered from the memo for free; a new one costs one evaluation.
    pub fn eval(&mut self, p: &[u32]) -> Result<Option<f64>, Stop> {
        if let Some(o) = self.memo.get(p) {
            self.dup_streak += 1;
            if self.dup_streak > MAX_DUPLICATE_STREAK {
                return Err(Stop(StopReason::Exhausted));
            }
            return Ok(o.time());
        }
        if !self.domain.is_valid(p) {
            return Ok(None);
        }
        self.charge(1.0)?;
        self.dup_streak = 0;
        let outcome = self.objective.evaluate(p);
        self.evaluations += 1;
        let t = outcome.time();
        if let Some(t) = t
            && self.best.as_ref().is_none_or(|(_, b)| t < *b)
        {
            self.best = Some((p.to_vec(), t));
        }
        self.memo.insert(p.to_vec(), outcome.clone());
        self.history.push(Record { point: p.to_vec(), outcome, reduced: false });
        Ok(t)
    }

    /// The time of `p` on reduced input if the objective has one (else a full evaluation).
    pub fn eval_reduced(&mut self, p: &[u32]) -> Result<Option<f64>, Stop> {
        if let Some(o) = self.reduced_memo.get(p) {
            return Ok(o.time());
        }
        if !self.domain.is_valid(p) {
            return Ok(None);
        }
        let cost = self.objective.reduced_cost();
        self.charge(cost)?;
        match self.objective.evaluate_reduced(p) {
            Some(outcome) => {
                let t = outcome.time();
                self.reduced_memo.insert(p.to_vec(), outcome.clone());
                self.history.push(Record { point: p.to_vec(), outcome, reduced: true });
                Ok(t)
            }
            None => {
                self.spent -= cost;
                self.eval(p)
            }
        }
    }

    /// Whether the objective offers reduced evaluations.
    pub fn has_reduction(&mut self) -> bool {
        self.objective.reduced_cost() < 1.0
    }

    fn charge(&mut self, cost: f64) -> Result<(), Stop> {
        if self.spent + cost > self.budget.evaluations as f64 + 1e-9 {
            return Err(Stop(StopReason::Budget));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Stop(StopReason::Time));
        }
        if self.domain.valid_count().is_some_and(|n| self.evaluations >= n) {
            return Err(Stop(StopReason::Exhausted));
        }
        self.spent += cost;
        Ok(())
    }
}

/// Runs `strategy` on `domain` and `objective` within `budget`, seeded by `seed`.
/// The same seed gives the same sequence of evaluations (for a deterministic objective).
pub fn run(
    strategy: &mut dyn Strategy,
    domain: &dyn Domain,
    objective: &mut dyn Objective,
    budget: Budget,
    seed: u64,
) -> Result<TuneResult> {
    if budget.evaluations == 0 {
        return Err(TuneError::InvalidBudget("the evaluation budget must be at least 1".into()));
    }
    let mut search = Search::new(domain, objective, budget, seed);
    let stop = match strategy.search(&mut search) {
        Ok(()) => StopReason::Finished,
        Err(Stop(r)) => r,
    };
    Ok(TuneResult { best: search.best, history: search.history, evaluations: search.evaluations, stop })
}
