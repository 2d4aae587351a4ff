//! The selector's parameters for the CPU paths, declared as a [`hetero_sched::tune`] space:
//! per operation, the segment length from which one segment is worked on by several threads
//! (below it, a segment is one thread's job and threads share out whole groups of segments),
//! the elements per task, and the segment count at which the quicksort leaves its
//! whole-array rounds for a per-segment sort. A configuration tuned on this machine (stored in
//! the tuning cache under [`KERNEL`], per element type and size bucket) replaces the defaults.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::segmented";

/// Default elements per task: large enough that scheduling (~1 µs) is noise against the work,
/// small enough that 2^20 elements still make 64 tasks to balance.
pub(crate) const TASK: usize = 1 << 14;

/// Parameters of the segmented CPU paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentedTuning {
    /// Elements per task when segments are short (whole segments per task).
    pub task_elems: usize,
    /// `reduce`: segments at least this long are reduced by several threads.
    pub reduce_split: usize,
    /// `reverse`, `partition`, `split3`, `compact`: segments at least this long are
    /// rearranged by several threads.
    pub reorder_split: usize,
    /// The quicksort's whole-array rounds stop once there are this many segments; a
    /// per-segment sort finishes (HiDP's switch to a segmented sort).
    pub quicksort_switch: usize,
}

impl Default for SegmentedTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SegmentedTuning {
    /// The reasoned defaults: a segment is split once it is worth several tasks (the thread
    /// hand-off then costs under a tenth of the work); the quicksort switches at 64 segments
    /// (HiDP's threshold), enough to keep every core of a workstation busy with whole segments.
    pub const DEFAULT: SegmentedTuning = SegmentedTuning {
        task_elems: TASK,
        reduce_split: 4 * TASK,
        reorder_split: 4 * TASK,
        quicksort_switch: 64,
    };
}

impl Tunable for SegmentedTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = usize;

    /// The space (powers of two): `task_elems` 2^10 ..= 2^18, `reduce_split` and
    /// `reorder_split` 2^12 ..= 2^24, `quicksort_switch` 1 ..= 2^16.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("task_elems", 1 << 10, 1 << 18))
                .param(Param::pow2("reduce_split", 1 << 12, 1 << 24))
                .param(Param::pow2("reorder_split", 1 << 12, 1 << 24))
                .param(Param::pow2("quicksort_switch", 1, 1 << 16))
                .build()
                .expect("the segmented tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        let int = |v: usize| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
        Config::new(vec![
            ("task_elems".into(), int(self.task_elems)),
            ("reduce_split".into(), int(self.reduce_split)),
            ("reorder_split".into(), int(self.reorder_split)),
            ("quicksort_switch".into(), int(self.quicksort_switch)),
        ])
    }

    /// `None` when a parameter is missing or not a positive integer.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        Some(SegmentedTuning {
            task_elems: get("task_elems")?,
            reduce_split: get("reduce_split")?,
            reorder_split: get("reorder_split")?,
            quicksort_switch: get("quicksort_switch")?,
        })
    }

    /// Inputs under 2^10 elements are one task under every configuration of the space.
    fn bucket(n: usize) -> Option<Bucket> {
        (n >= 1 << 10).then(|| Bucket::len(n as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_in_the_space_and_round_trips() {
        assert!(SegmentedTuning::default_is_in_space());
    }

    #[test]
    fn a_zero_parameter_is_rejected() {
        let mut c = SegmentedTuning::DEFAULT;
        c.task_elems = 0;
        assert_eq!(SegmentedTuning::from_config(&c.to_config()), None);
    }
}
