//! Autotuning the wavefront executors (the thesis's chapters 4-6, digest §2-§3): an exhaustive
//! (sampled) search over instances and configurations, features that carry over to unseen
//! kernels, learners trained on the best configurations, and `Config2::auto` /
//! `Config3::auto`, which predict a configuration from a model calibrated on this machine.
//!
//! - [`space`]: the parameters (parallel, CPU tile, GPU band, GPU tile, halo), the
//!   configurations tried per instance (bands and halos sampled sparsely), snapping to legal
//!   values.
//! - [`search`] over [`Instance`]s with an [`Evaluate`]or ([`SweepEvaluator`] times the built-in
//!   applications and checks every result against the sequential reference), logged to a
//!   resumable JSON-lines [`SearchLog`].
//! - [`features_2d`] / [`features_3d`]: `dim`, `tsize` (timed against the synthetic kernel's
//!   iteration) and `dsize` (from the cell size) of any kernel.
//! - [`training_set`] (best five per instance and executor), [`Predictor`] (the chained models),
//!   [`ModelTree`] (M5P-style), [`LinearModel`].
//! - [`calibrate`] stores the training set in hetero-sched's tuning cache; [`choose`] predicts,
//!   or runs a short search when no model is stored.
//! - [`report`]: % of the exhaustive best on held-out instances (from the search log, and
//!   re-measured), speed-ups, sensitivity.
//!
//! ```no_run
//! use wavefront::tune::{CalibrateOptions, Features, calibrate};
//! use wavefront::{Config2, apps::synthetic::synthetic_2d};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Once per machine (minutes): search the synthetic training grid, store the model.
//! let cache = hetero_sched::tune::TuningCache::open_default()?;
//! calibrate(&CalibrateOptions::default(), &cache, &mut |_| {})?;
//! // Then: the predicted executor for a 1000 x 1000 table of cells costing ~20 units.
//! let config = Config2::auto(&Features::new(1000, 20.0, 1));
//! let table = synthetic_2d::<1>(1000, 1000, 20, &config)?;
//! # Ok(()) }
//! ```

mod auto;
mod driver;
mod evaluate;
mod features;
mod learn;
mod model_tree;
pub mod neighbours;
pub mod report;
mod rounds;
pub mod space;

pub use auto::{
    CalibrateOptions, Calibration, Rank, Source, calibrate, calibrate_with, choose, choose_in,
    fingerprint_here, gpus_here, load, model, space_here, training_instances_2d, training_instances_3d,
};
pub use driver::{
    App, Evaluate, Event, Instance, Record, Refine, SearchLog, SearchOptions, SearchSummary,
    instance_candidates, keep_heap_mapped, search,
};
pub use evaluate::SweepEvaluator;
pub use features::{Features, dsize_of, features_2d, features_3d, synthetic_unit_ns};
pub use learn::{BEST_WITHIN, Learner, Predictor, TrainRow, chapter4_fixed_point, training_set};
pub use model_tree::{LinearModel, ModelTree, TreeParams};
pub use space::{Candidate, SpaceOptions};

use crate::boundary::{Boundary2, Boundary3};
use crate::config::{Config2, Config3};
use crate::error::Result;

/// Measures a 2D kernel's features ([`features_2d`]) and returns [`Config2::auto`] for them.
///
/// # Errors
/// Those of [`features_2d`].
pub fn auto_2d<T, K>(rows: usize, cols: usize, boundary: &Boundary2<T>, kernel: K) -> Result<Config2>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
{
    Ok(Config2::auto(&features_2d(rows, cols, boundary, kernel)?))
}

/// Measures a 3D kernel's features ([`features_3d`]) and returns [`Config3::auto`] for them.
///
/// # Errors
/// Those of [`features_3d`].
pub fn auto_3d<T, K>(n: [usize; 3], boundary: &Boundary3<T>, kernel: K) -> Result<Config3>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, usize, &T, &T, &T) -> T + Sync,
{
    Ok(Config3::auto(&features_3d(n, boundary, kernel)?))
}
