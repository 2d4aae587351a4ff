//! The CPU sort's tuning parameters, declared as a [`hetero_sched::tune`] space.
//!
//! The defaults ([`SortTuning::DEFAULT`]) are the measured constants [`NETWORK_MAX_LEN`],
//! [`RADIX_ROW_MIN`], [`RADIX_PAR_MIN`] and [`WIDE_NET_MIN`]; a configuration tuned on this machine
//! (`hetkit tune kernel sort`) replaces them per key type and row-length bucket.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use super::cpu::{NETWORK_MAX_LEN, RADIX_PAR_MIN, RADIX_ROW_MIN, WIDE_NET_MIN};

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::sort";

/// Parameters of the CPU sort's dispatcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortTuning {
    /// Rows up to this length go through the bitonic network (at most [`NETWORK_MAX_LEN`], the
    /// network's register budget).
    pub network_max_len: usize,
    /// Rows at least this long use the one-thread radix sort, shorter ones `sort_unstable`.
    pub radix_row_min: usize,
    /// Arrays (and rows too few to occupy every thread) at least this long use the parallel
    /// radix sort.
    pub radix_par_min: usize,
    /// On AVX-512 CPUs, parts of the vectorised quicksort (and rows) of 32-bit keys at least this
    /// long, up to 256, go to the AVX-512 networks, shorter ones to the AVX2 networks; past 256
    /// the AVX-512 networks are never used.
    pub wide_net_min: usize,
}

impl Default for SortTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SortTuning {
    /// Today's constants.
    pub const DEFAULT: SortTuning = SortTuning {
        network_max_len: NETWORK_MAX_LEN,
        radix_row_min: RADIX_ROW_MIN,
        radix_par_min: RADIX_PAR_MIN,
        wide_net_min: WIDE_NET_MIN,
    };

    /// The network's row limit as the CPU paths apply it: never past [`NETWORK_MAX_LEN`], the
    /// network's buffer, whatever a caller passed.
    pub(crate) fn network_len(&self) -> usize {
        self.network_max_len.min(NETWORK_MAX_LEN)
    }
}

/// Tuned per key type and row-length bucket; rows of at most 4 keys sort the same way under
/// every configuration of the space and skip the lookup.
impl Tunable for SortTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = usize;

    /// `network_max_len` in {4, 8, 16, 32}, `radix_row_min` 2^5 ..= 2^12, `radix_par_min`
    /// 2^12 ..= 2^22 (powers of two), `wide_net_min` in {2, 65, 129, 193, 257} (2: always, 257: never).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::ints("network_max_len", &[4, 8, 16, NETWORK_MAX_LEN as i64]))
                .param(Param::pow2("radix_row_min", 1 << 5, 1 << 12))
                .param(Param::pow2("radix_par_min", 1 << 12, 1 << 22))
                .param(Param::ints("wide_net_min", &[WIDE_NET_MIN as i64, 65, 129, 193, 257]))
                .build()
                .expect("the sort's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("network_max_len".into(), Value::Int(self.network_max_len as i64)),
            ("radix_row_min".into(), Value::Int(self.radix_row_min as i64)),
            ("radix_par_min".into(), Value::Int(self.radix_par_min as i64)),
            ("wide_net_min".into(), Value::Int(self.wide_net_min as i64)),
        ])
    }

    /// `None` when a parameter is missing, not a positive integer, or `network_max_len`
    /// exceeds [`NETWORK_MAX_LEN`] (the network's buffer).
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        let t = SortTuning {
            network_max_len: get("network_max_len")?,
            radix_row_min: get("radix_row_min")?,
            radix_par_min: get("radix_par_min")?,
            wide_net_min: get("wide_net_min")?,
        };
        (t.network_max_len <= NETWORK_MAX_LEN).then_some(t)
    }

    fn bucket(row_len: usize) -> Option<Bucket> {
        (row_len > 4).then(|| Bucket::len(row_len as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_in_the_space_and_round_trips() {
        assert!(SortTuning::default_is_in_space());
    }

    #[test]
    fn a_network_longer_than_its_buffer_is_rejected() {
        let mut c = SortTuning::DEFAULT;
        c.network_max_len = 64;
        assert_eq!(SortTuning::from_config(&c.to_config()), None);
    }
}
