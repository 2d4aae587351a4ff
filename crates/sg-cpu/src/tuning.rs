//! The tuning parameters of evaluation and hierarchization, declared as
//! [`hetero_sched::tune`] spaces.
//!
//! The defaults ([`EvalTuning::DEFAULT`], [`HierTuning::DEFAULT`]) are the constants the code
//! was written with; a configuration tuned on this machine (`hetkit tune kernel sg_eval` or
//! `sg_hier`) replaces them per element type and size bucket (evaluation: number of points;
//! hierarchization: number of values).

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use crate::evaluate::{MAX_TILE, TILE};

/// The evaluation's name in the tuning cache.
pub const EVAL_KERNEL: &str = "sg_cpu::evaluate";

/// The hierarchization's name in the tuning cache.
pub const HIER_KERNEL: &str = "sg_cpu::hierarchize";

/// Parameters of [`Evaluator::evaluate`](crate::Evaluator::evaluate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalTuning {
    /// Points per tile, the lane count of the inner loops (at most [`MAX_TILE`]). Also the
    /// smallest batch the structured variants (Cartesian, shared prefix) are used for.
    pub tile: usize,
    /// `BlocksParallel` is chosen when there are fewer than this many tiles per thread (0 never
    /// chooses it).
    pub blocks_parallel_tiles_per_thread: usize,
    /// `BlocksParallel` cuts the trie into at least this many subtree ranges per thread.
    pub subtrees_per_thread: usize,
}

impl Default for EvalTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl EvalTuning {
    /// The constants the evaluator was written with.
    pub const DEFAULT: EvalTuning =
        EvalTuning { tile: TILE, blocks_parallel_tiles_per_thread: 2, subtrees_per_thread: 8 };

    /// Whether the evaluator can run with these parameters.
    pub fn is_usable(&self) -> bool {
        (1..=MAX_TILE).contains(&self.tile) && self.subtrees_per_thread > 0
    }
}

/// Tuned per element type and bucket of the number of points.
impl Tunable for EvalTuning {
    const KERNEL: &'static str = EVAL_KERNEL;
    type Shape = usize;

    /// `tile` 8 ..= [`MAX_TILE`], `blocks_parallel_tiles_per_thread` in {0, 1, 2, 4, 8, 16},
    /// `subtrees_per_thread` 1 ..= 32 (powers of two).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("tile", 8, MAX_TILE as i64))
                .param(Param::ints("blocks_parallel_tiles_per_thread", &[0, 1, 2, 4, 8, 16]))
                .param(Param::pow2("subtrees_per_thread", 1, 32))
                .build()
                .expect("the evaluation's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("tile".into(), Value::Int(self.tile as i64)),
            (
                "blocks_parallel_tiles_per_thread".into(),
                Value::Int(self.blocks_parallel_tiles_per_thread as i64),
            ),
            ("subtrees_per_thread".into(), Value::Int(self.subtrees_per_thread as i64)),
        ])
    }

    /// `None` when a parameter is missing or negative, the tile is 0 or past [`MAX_TILE`], or
    /// `subtrees_per_thread` is 0.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).and_then(|v| usize::try_from(v).ok());
        let t = EvalTuning {
            tile: get("tile")?,
            blocks_parallel_tiles_per_thread: get("blocks_parallel_tiles_per_thread")?,
            subtrees_per_thread: get("subtrees_per_thread")?,
        };
        t.is_usable().then_some(t)
    }

    fn bucket(points: usize) -> Option<Bucket> {
        Some(Bucket::len(points as u64))
    }
}

/// Parameters of [`Hierarchizer`](crate::Hierarchizer)'s sweeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HierTuning {
    /// Values a rayon task over chains should hold at least (short chains are grouped).
    pub task_values: usize,
    /// A chain with at least 64 poles splits its poles over threads when a level touches at
    /// least this many values.
    pub pole_par_values: usize,
}

impl Default for HierTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl HierTuning {
    /// The constants the hierarchizer was written with.
    pub const DEFAULT: HierTuning = HierTuning { task_values: 4096, pole_par_values: 1 << 15 };
}

/// Tuned per element type and bucket of the number of values.
impl Tunable for HierTuning {
    const KERNEL: &'static str = HIER_KERNEL;
    type Shape = usize;

    /// `task_values` 2^8 ..= 2^16, `pole_par_values` 2^10 ..= 2^20 (powers of two).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("task_values", 1 << 8, 1 << 16))
                .param(Param::pow2("pole_par_values", 1 << 10, 1 << 20))
                .build()
                .expect("the hierarchization's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("task_values".into(), Value::Int(self.task_values as i64)),
            ("pole_par_values".into(), Value::Int(self.pole_par_values as i64)),
        ])
    }

    /// `None` when a parameter is missing or not a positive integer.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        Some(HierTuning { task_values: get("task_values")?, pole_par_values: get("pole_par_values")? })
    }

    fn bucket(values: usize) -> Option<Bucket> {
        Some(Bucket::len(values as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_in_the_space_and_round_trips() {
        assert!(EvalTuning::default_is_in_space());
    }

    #[test]
    fn hierarchization_default_round_trips() {
        assert!(HierTuning::default_is_in_space());
    }

    #[test]
    fn unusable_parameters_are_rejected() {
        for bad in [
            EvalTuning { tile: 0, ..EvalTuning::DEFAULT },
            EvalTuning { tile: MAX_TILE + 1, ..EvalTuning::DEFAULT },
            EvalTuning { subtrees_per_thread: 0, ..EvalTuning::DEFAULT },
        ] {
            assert_eq!(EvalTuning::from_config(&bad.to_config()), None);
        }
    }
}
