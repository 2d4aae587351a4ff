//! The selector's parameters for the CPU paths, declared as a [`hetero_sched::tune`] space:
//! per operation, the segment length from which one segment is worked on by several threads
//! (below it, a segment is one thread's job and threads share out whole groups of segments),
//! the elements per task, and the segment count at which the quicksort leaves its
//! whole-array rounds for a per-segment sort. A configuration tuned on this machine (stored in
//! the tuning cache under [`KERNEL`], per element type and size bucket) replaces the defaults.
//!
//! The GPU paths' selector is [`GpuThresholds`], declared beside it under [`GPU_KERNEL`]: per
//! operation ([`GpuOp`]), device (the GPU's fingerprint), element type and shape bucket, the
//! average segment lengths at which each granularity takes over, and the quicksort's switch to
//! block-level work.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::segmented";

/// The GPU selector's name in the tuning cache.
pub const GPU_KERNEL: &str = "prefix_ops::segmented_gpu";

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

/// The GPU operations the selector is tuned for separately (the bucket's tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuOp {
    /// `reduce`.
    Reduce,
    /// The scans.
    Scan,
    /// `reverse`.
    Reverse,
    /// `partition`, `split3` and `compact`.
    Split,
    /// The device quicksort (its rounds' split, and its switch point).
    Quicksort,
}

impl GpuOp {
    fn tag(self) -> &'static str {
        match self {
            GpuOp::Reduce => "reduce",
            GpuOp::Scan => "scan",
            GpuOp::Reverse => "reverse",
            GpuOp::Split => "split",
            GpuOp::Quicksort => "quicksort",
        }
    }
}

/// The GPU selector's parameters: average segment lengths at which the selector moves to the
/// next coarser granularity, the multi-block condition, and the device quicksort's switch
/// point. Tuned per device, operation, element type and shape ([`Tunable`] under
/// [`GPU_KERNEL`], looked up by the GPU's fingerprint); the multi-block condition counts
/// segments per SM, so one default serves devices of any size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuThresholds {
    /// From this average length: 4 lanes.
    pub lanes4: usize,
    /// 8 lanes.
    pub lanes8: usize,
    /// A warp.
    pub warp: usize,
    /// A block.
    pub block: usize,
    /// Several blocks, from this average length ...
    pub multi_block: usize,
    /// ... when there are also fewer segments than this many per SM.
    pub multi_block_max_segments_per_sm: usize,
    /// The device quicksort's kernel-level rounds stop once there are this many segments; one
    /// block per segment finishes (CuNesl switches at 256).
    pub quicksort_switch: usize,
}

impl GpuThresholds {
    /// Provisional defaults after HiDP's Fig. 6.1 (thread for tiny segments, warp from 128):
    /// 4 lanes from 8, 8 lanes from 32, a warp from 128, a block from 4096, several blocks for
    /// segments of at least 2^16 when there are fewer than 2 per SM; the quicksort switches at
    /// CuNesl's 256 segments. Unmeasured on a GPU until the GPU verification issue tunes them.
    pub const DEFAULT: GpuThresholds = GpuThresholds {
        lanes4: 8,
        lanes8: 32,
        warp: 128,
        block: 4096,
        multi_block: 1 << 16,
        multi_block_max_segments_per_sm: 2,
        quicksort_switch: 256,
    };
}

impl Default for GpuThresholds {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Shape: the operation, the elements and the number of segments.
impl Tunable for GpuThresholds {
    const KERNEL: &'static str = GPU_KERNEL;
    type Shape = (GpuOp, usize, usize);

    /// Powers of two: `lanes4` 1 ..= 2^10, `lanes8` 1 ..= 2^12, `warp` 1 ..= 2^14, `block`
    /// 2^5 ..= 2^20, `multi_block` 2^10 ..= 2^26, `multi_block_max_segments_per_sm` 1 ..= 2^6,
    /// `quicksort_switch` 1 ..= 2^20. Configurations whose length thresholds decrease are
    /// rejected by [`from_config`](Tunable::from_config).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("lanes4", 1, 1 << 10))
                .param(Param::pow2("lanes8", 1, 1 << 12))
                .param(Param::pow2("warp", 1, 1 << 14))
                .param(Param::pow2("block", 1 << 5, 1 << 20))
                .param(Param::pow2("multi_block", 1 << 10, 1 << 26))
                .param(Param::pow2("multi_block_max_segments_per_sm", 1, 1 << 6))
                .param(Param::pow2("quicksort_switch", 1, 1 << 20))
                .build()
                .expect("the segmented GPU tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        let int = |v: usize| Value::Int(i64::try_from(v).unwrap_or(i64::MAX));
        Config::new(vec![
            ("lanes4".into(), int(self.lanes4)),
            ("lanes8".into(), int(self.lanes8)),
            ("warp".into(), int(self.warp)),
            ("block".into(), int(self.block)),
            ("multi_block".into(), int(self.multi_block)),
            ("multi_block_max_segments_per_sm".into(), int(self.multi_block_max_segments_per_sm)),
            ("quicksort_switch".into(), int(self.quicksort_switch)),
        ])
    }

    /// `None` when a parameter is missing or not positive, or the length thresholds decrease.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        let t = GpuThresholds {
            lanes4: get("lanes4")?,
            lanes8: get("lanes8")?,
            warp: get("warp")?,
            block: get("block")?,
            multi_block: get("multi_block")?,
            multi_block_max_segments_per_sm: get("multi_block_max_segments_per_sm")?,
            quicksort_switch: get("quicksort_switch")?,
        };
        let ordered = [t.lanes4, t.lanes8, t.warp, t.block, t.multi_block].windows(2).all(|w| w[0] <= w[1]);
        ordered.then_some(t)
    }

    /// Tagged by operation, over (average segment length, segments); inputs under 2^12
    /// elements take the defaults (one wave of the GPU whatever the granularity).
    fn bucket((op, n, nseg): (GpuOp, usize, usize)) -> Option<Bucket> {
        (n >= 1 << 12).then(|| Bucket::tagged(op.tag(), (n / nseg.max(1)) as u64, nseg as u64))
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

    #[test]
    fn gpu_default_is_in_the_space_and_disorder_is_rejected() {
        assert!(GpuThresholds::default_is_in_space());
        let mut c = GpuThresholds::DEFAULT;
        c.warp = c.block * 2;
        assert_eq!(GpuThresholds::from_config(&c.to_config()), None);
        assert_eq!(GpuThresholds::bucket((GpuOp::Scan, 100, 1)), None);
        assert_ne!(
            GpuThresholds::bucket((GpuOp::Scan, 1 << 20, 64)),
            GpuThresholds::bucket((GpuOp::Split, 1 << 20, 64))
        );
    }
}
