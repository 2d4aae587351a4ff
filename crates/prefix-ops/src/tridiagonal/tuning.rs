//! The CPU tridiagonal solver's tuning parameters, declared as a [`hetero_sched::tune`] space.
//!
//! What [`Solver::Auto`](super::Solver::Auto) runs once dominance has proven elimination
//! without pivoting safe: which Thomas solver, and its grain. The defaults are the solvers and
//! constants the code was written with (strided: [`Solver::ThomasParallel`](super::Solver) with
//! tasks of 4096 values; interleaved: [`Solver::ThomasLanes`](super::Solver) with column blocks
//! of at most 1024 systems); a configuration tuned on this machine (`hetkit tune kernel
//! tridiagonal`) replaces them per element type, layout, system-size and batch-size bucket.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use super::batch::Layout;

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::tridiagonal";

/// The Thomas solver a dominant batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FastSolver {
    /// One system after another on the calling thread (no task overhead: small batches).
    Sequential,
    /// Systems spread over rayon's threads, two in step ([`Solver::ThomasParallel`](super::Solver)).
    Parallel,
    /// Row sweeps over column blocks of systems ([`Solver::ThomasLanes`](super::Solver); strided
    /// batches through a transposed copy).
    Lanes,
}

impl FastSolver {
    const NAMES: [&'static str; 3] = ["sequential", "parallel", "lanes"];

    fn name(self) -> &'static str {
        match self {
            FastSolver::Sequential => "sequential",
            FastSolver::Parallel => "parallel",
            FastSolver::Lanes => "lanes",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        match s {
            "sequential" => Some(FastSolver::Sequential),
            "parallel" => Some(FastSolver::Parallel),
            "lanes" => Some(FastSolver::Lanes),
            _ => None,
        }
    }
}

/// Parameters of the CPU tridiagonal solve of a diagonally dominant batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TridiagonalTuning {
    /// The algorithm.
    pub solver: FastSolver,
    /// [`FastSolver::Parallel`]: values (systems times `m`) per rayon task, at least one pair
    /// of systems.
    pub task_values: usize,
    /// [`FastSolver::Lanes`]: the widest column block, in systems (blocks are one per thread
    /// but 64 to this many systems).
    pub lane_block_max: usize,
}

impl Default for TridiagonalTuning {
    fn default() -> Self {
        Self::STRIDED
    }
}

impl TridiagonalTuning {
    /// The strided layout's default.
    pub const STRIDED: TridiagonalTuning =
        TridiagonalTuning { solver: FastSolver::Parallel, task_values: 4096, lane_block_max: 1024 };
    /// The interleaved layout's default.
    pub const INTERLEAVED: TridiagonalTuning =
        TridiagonalTuning { solver: FastSolver::Lanes, ..Self::STRIDED };

    /// The default for a layout.
    pub fn default_for(layout: Layout) -> Self {
        match layout {
            Layout::Strided => Self::STRIDED,
            Layout::Interleaved => Self::INTERLEAVED,
        }
    }
}

/// Tuned per element type, layout, system size and batch size (the shape is
/// `(layout, m, systems)`). Batches of one system, where every solver is the sequential one,
/// skip the lookup.
impl Tunable for TridiagonalTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = (Layout, usize, usize);

    /// `solver` in {sequential, parallel, lanes}, `task_values` 2^9 ..= 2^16, `lane_block_max`
    /// 2^6 ..= 2^12 (powers of two).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::names("solver", &FastSolver::NAMES))
                .param(Param::pow2("task_values", 1 << 9, 1 << 16))
                .param(Param::pow2("lane_block_max", 1 << 6, 1 << 12))
                .build()
                .expect("the tridiagonal tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("solver".into(), Value::Str(self.solver.name().into())),
            ("task_values".into(), Value::Int(self.task_values as i64)),
            ("lane_block_max".into(), Value::Int(self.lane_block_max as i64)),
        ])
    }

    /// `None` when a parameter is missing, the solver unknown, or a size not a positive
    /// integer (`lane_block_max` at least 64).
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        let solver = match c.get("solver")? {
            Value::Str(s) => FastSolver::from_name(s)?,
            _ => return None,
        };
        let lane_block_max = get("lane_block_max").filter(|&w| w >= 64)?;
        Some(TridiagonalTuning { solver, task_values: get("task_values")?, lane_block_max })
    }

    fn bucket((layout, m, systems): Self::Shape) -> Option<Bucket> {
        let tag = match layout {
            Layout::Strided => "strided",
            Layout::Interleaved => "interleaved",
        };
        (systems > 1).then(|| Bucket::tagged(tag, m as u64, systems as u64))
    }

    fn fallback((layout, _, _): Self::Shape) -> Self {
        Self::default_for(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetero_sched::tune::Domain;

    #[test]
    fn defaults_are_in_the_space_and_round_trip() {
        for t in [TridiagonalTuning::STRIDED, TridiagonalTuning::INTERLEAVED] {
            let c = t.to_config();
            let space = TridiagonalTuning::space();
            assert!(space.point_of(&c).is_some_and(|p| space.is_valid(&p)));
            assert_eq!(TridiagonalTuning::from_config(&c), Some(t));
        }
    }

    #[test]
    fn unusable_configurations_are_rejected() {
        let mut c = TridiagonalTuning::STRIDED;
        c.lane_block_max = 8;
        assert_eq!(TridiagonalTuning::from_config(&c.to_config()), None);
        let named = Config::new(vec![
            ("solver".into(), Value::Str("cramer".into())),
            ("task_values".into(), Value::Int(4096)),
            ("lane_block_max".into(), Value::Int(1024)),
        ]);
        assert_eq!(TridiagonalTuning::from_config(&named), None);
    }

    #[test]
    fn one_system_is_never_looked_up_and_layouts_have_their_defaults() {
        assert_eq!(TridiagonalTuning::bucket((Layout::Strided, 100, 1)), None);
        let memo = hetero_sched::tune::dispatch::Memo::new(None);
        let t = TridiagonalTuning::tuned_in::<f64>(&memo, (Layout::Interleaved, 64, 1000));
        assert_eq!(t, TridiagonalTuning::INTERLEAVED);
        let t = TridiagonalTuning::tuned_in::<f64>(&memo, (Layout::Strided, 64, 1));
        assert_eq!(t, TridiagonalTuning::STRIDED);
    }
}
