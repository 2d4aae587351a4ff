//! Interleaved rounds: how the search refines its best configurations and how the report
//! re-measures predictions. Every configuration of an instance is timed in the same rounds,
//! round-robin, in batches of back-to-back runs, and keeps its fastest round, so a load spike or
//! a descheduled thread lengthens one round of one configuration instead of deciding a ranking.

use std::collections::BTreeMap;

use crate::error::{Result, WavefrontError};
use crate::tune::driver::{Evaluate, Instance};
use crate::tune::space::Candidate;

/// How [`crate::tune::report::evaluate`] and the search's refinement
/// ([`crate::tune::Refine`]) re-measure: every configuration of an instance in the same
/// rounds, round-robin, each timing a batch of back-to-back runs, until every configuration
/// has run for at least [`Retiming::min_total_ms`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Retiming {
    /// Shortest timing: a configuration faster than this runs several times back to back and
    /// is timed as one batch (per-run time = batch time / runs), so microsecond instances are
    /// not measured at the timer's and the scheduler's noise level.
    pub min_batch_ms: f64,
    /// Time each configuration accumulates over the rounds, at least (bounded by
    /// [`Retiming::max_rounds`]): sub-millisecond instances get many rounds, so one
    /// descheduled round cannot decide their score.
    pub min_total_ms: f64,
    /// Fewest rounds.
    pub min_rounds: usize,
    /// Most rounds.
    pub max_rounds: usize,
}

impl Default for Retiming {
    /// Batches of at least 2 ms, at least 40 ms per configuration, 9 to 200 rounds.
    fn default() -> Self {
        Retiming { min_batch_ms: 2.0, min_total_ms: 40.0, min_rounds: 9, max_rounds: 200 }
    }
}

impl Retiming {
    /// Runs of one batch for an instance whose fastest logged time is `fastest_ms`.
    pub fn batch_runs(&self, fastest_ms: f64) -> usize {
        if fastest_ms.is_finite() && fastest_ms > 0.0 {
            (self.min_batch_ms / fastest_ms).ceil().clamp(1.0, 10_000.0) as usize
        } else {
            1
        }
    }

    /// Rounds for an instance whose fastest logged time is `fastest_ms`, timed in batches of
    /// `batch` runs.
    pub fn rounds(&self, fastest_ms: f64, batch: usize) -> usize {
        let lo = self.min_rounds.max(1);
        let per_round = fastest_ms * batch as f64;
        if !(per_round.is_finite() && per_round > 0.0) {
            return lo;
        }
        ((self.min_total_ms / per_round).ceil() as usize).clamp(lo, self.max_rounds.max(lo))
    }
}

/// One timing per round of every configuration in `cands`, in ms per run.
///
/// Every configuration first runs one untimed batch (first-call effects: the table's first
/// allocation of its size, the pool's threads waking, the reference being built); then each
/// round times one batch of each, starting one configuration further each round, so none always
/// follows the same neighbour (a sequential run lets the pool's threads fall asleep).
pub(crate) fn remeasure(
    inst: &Instance,
    cands: &[Candidate],
    eval: &mut dyn Evaluate,
    batch: usize,
    rounds: usize,
) -> Result<BTreeMap<Candidate, Vec<f64>>> {
    let mut batch_ms = |c: &Candidate| -> Result<f64> {
        let mut total = 0.0;
        for _ in 0..batch {
            let t = eval.run(inst, c)?.map_err(|e| WavefrontError::Tune(format!("{inst} under {c}: {e}")))?;
            total += t.as_secs_f64() * 1e3;
        }
        Ok(total / batch as f64)
    };
    for c in cands {
        batch_ms(c)?;
    }
    let mut times: BTreeMap<Candidate, Vec<f64>> = BTreeMap::new();
    for round in 0..rounds {
        for k in 0..cands.len() {
            let c = &cands[(k + round) % cands.len()];
            times.entry(*c).or_default().push(batch_ms(c)?);
        }
    }
    Ok(times)
}
