//! Search strategies behind one trait.
//!
//! Every strategy is deterministic under the run's seed (all randomness comes from
//! [`Search::rng`](super::Search::rng)), spends its whole budget (local searches restart from
//! random points when they converge), and returns through [`Stop`] when
//! [`Search::eval`](super::Search::eval) says the budget is spent.

mod anneal;
mod exhaustive;
mod genetic;
mod hybrid;
mod ils;
mod local;
mod tpe;

pub use anneal::SimulatedAnnealing;
pub use exhaustive::{BruteForce, MonteCarlo, RandomSampling};
pub use genetic::Genetic;
pub use hybrid::Hybrid;
pub use ils::IteratedLocalSearch;
pub use local::{FullNeighbourhood, HillClimbing, LineSearch, Neighbourhood};
pub use tpe::Tpe;

use super::error::{Result, TuneError};
use super::search::{Search, Stop};

/// A search strategy.
pub trait Strategy: std::fmt::Debug {
    /// The strategy's name (as accepted by [`by_name`]).
    fn name(&self) -> &'static str;

    /// Searches until the budget is spent (`Err(Stop)`) or the strategy is done (`Ok`).
    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop>;
}

/// The names of all strategies, as accepted by [`by_name`].
pub const NAMES: &[&str] = &[
    "brute_force",
    "random_sampling",
    "monte_carlo",
    "line_search",
    "neighbourhood",
    "full_neighbourhood",
    "hill_climbing",
    "simulated_annealing",
    "genetic",
    "tpe",
    "ils",
    "hybrid",
];

/// The default strategy's name, chosen by replay on recorded GPU and CPU landscapes (see the
/// book, "Autotuning").
pub const DEFAULT: &str = "hybrid";

/// A strategy with its default settings, by name.
pub fn by_name(name: &str) -> Result<Box<dyn Strategy>> {
    Ok(match name {
        "brute_force" => Box::new(BruteForce),
        "random_sampling" => Box::new(RandomSampling),
        "monte_carlo" => Box::new(MonteCarlo),
        "line_search" => Box::new(LineSearch),
        "neighbourhood" => Box::new(Neighbourhood),
        "full_neighbourhood" => Box::new(FullNeighbourhood),
        "hill_climbing" => Box::new(HillClimbing::default()),
        "simulated_annealing" => Box::new(SimulatedAnnealing::default()),
        "genetic" => Box::new(Genetic::default()),
        "tpe" => Box::new(Tpe::default()),
        "ils" => Box::new(IteratedLocalSearch::default()),
        "hybrid" => Box::new(Hybrid::default()),
        other => return Err(TuneError::UnknownStrategy(other.to_owned())),
    })
}

/// The default strategy.
pub fn default_strategy() -> Box<dyn Strategy> {
    by_name(DEFAULT).expect("DEFAULT names a strategy")
}

/// Time of a point, failures and invalid points as +infinity (for comparisons).
pub(crate) fn cost(t: Option<f64>) -> f64 {
    t.unwrap_or(f64::INFINITY)
}
