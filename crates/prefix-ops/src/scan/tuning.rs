//! The CPU scan's tuning parameters, declared as a [`hetero_sched::tune`] space.
//!
//! `par_threshold`: inputs shorter than this run on one thread. `tile_bytes`: the chained
//! scan's tile. The defaults ([`ScanTuning::DEFAULT`]) are the reasoned constants
//! [`PAR_THRESHOLD`] and [`TILE_BYTES`]; a configuration tuned on this machine
//! (`hetkit tune kernel scan`) replaces them per element type and size bucket.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use super::parallel::{PAR_THRESHOLD, TILE_BYTES};

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::scan";

/// Smallest `par_threshold` in the space: shorter inputs are single-threaded whatever is tuned,
/// so they skip the lookup.
const MIN_THRESHOLD: usize = 1 << 12;

/// Parameters of the CPU scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanTuning {
    /// Inputs shorter than this many elements are scanned on one thread.
    pub par_threshold: usize,
    /// Bytes per tile of the multi-threaded chained scan.
    pub tile_bytes: usize,
}

impl Default for ScanTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl ScanTuning {
    /// Today's constants.
    pub const DEFAULT: ScanTuning = ScanTuning { par_threshold: PAR_THRESHOLD, tile_bytes: TILE_BYTES };
}

/// Tuned per element type and input-length bucket; inputs shorter than the smallest
/// `par_threshold` of the space run on one thread under every configuration and skip the lookup.
impl Tunable for ScanTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = usize;

    /// `par_threshold` 2^12 ..= 2^24, `tile_bytes` 16 KiB ..= 4 MiB (powers of two).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("par_threshold", MIN_THRESHOLD as i64, 1 << 24))
                .param(Param::pow2("tile_bytes", 16 << 10, 4 << 20))
                .build()
                .expect("the scan's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("par_threshold".into(), Value::Int(self.par_threshold as i64)),
            ("tile_bytes".into(), Value::Int(self.tile_bytes as i64)),
        ])
    }

    /// `None` when a parameter is missing or not a positive integer.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        Some(ScanTuning { par_threshold: get("par_threshold")?, tile_bytes: get("tile_bytes")? })
    }

    fn bucket(n: usize) -> Option<Bucket> {
        (n >= MIN_THRESHOLD).then(|| Bucket::len(n as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_in_the_space_and_round_trips() {
        assert!(ScanTuning::default_is_in_space());
    }

    #[test]
    fn short_inputs_never_look_up() {
        assert_eq!(ScanTuning::tuned::<f32>(MIN_THRESHOLD - 1), ScanTuning::DEFAULT);
    }
}
