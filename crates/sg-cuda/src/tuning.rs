//! The GPU evaluation's launch parameters ([`EvalConfig`]: block size, points per thread,
//! staging of the trie in shared memory) declared as a [`hetero_sched::tune`] space next to the
//! launch code. [`DeviceGrid::evaluate`](crate::DeviceGrid::evaluate) looks them up per device,
//! element type, dimension and number of points; the default is [`EvalConfig::default`].

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use crate::config::EvalConfig;

/// The evaluation's name in the tuning cache.
pub const EVAL_KERNEL: &str = "sg_cuda::evaluate";

/// Tuned per device, element type and bucket of (dimension, points): the shape is `(d, m)`
/// and the bucket names the dimension `m<=2^a` and the points `batch<=2^b`.
impl Tunable for EvalConfig {
    const KERNEL: &'static str = EVAL_KERNEL;
    type Shape = (usize, usize);

    /// `block_size` in {64, 128, 256, 512}, `points_per_thread` in {0 (by occupancy for the type
    /// and dimension), 1, 2, 4}, `stage_trie` a boolean.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::ints("block_size", &[64, 128, 256, 512]))
                .param(Param::ints("points_per_thread", &[0, 1, 2, 4]))
                .param(Param::boolean("stage_trie"))
                .build()
                .expect("the GPU evaluation's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("block_size".into(), Value::Int(i64::from(self.block_size))),
            ("points_per_thread".into(), Value::Int(i64::from(self.points_per_thread.unwrap_or(0)))),
            ("stage_trie".into(), Value::Bool(self.stage_trie)),
        ])
    }

    /// `None` for parameters [`EvalConfig::validate`] rejects.
    fn from_config(c: &Config) -> Option<Self> {
        let block_size = u32::try_from(c.int("block_size")?).ok()?;
        let points_per_thread = match c.int("points_per_thread")? {
            0 => None,
            p => Some(u32::try_from(p).ok()?),
        };
        let stage_trie = match c.get("stage_trie")? {
            Value::Bool(b) => *b,
            _ => return None,
        };
        let cfg = EvalConfig { block_size, points_per_thread, stage_trie };
        cfg.validate().is_ok().then_some(cfg)
    }

    fn bucket((d, m): (usize, usize)) -> Option<Bucket> {
        (m > 0).then(|| Bucket::batch(d as u64, m as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_in_the_space_and_round_trips() {
        assert!(EvalConfig::default_is_in_space());
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        let bad = EvalConfig { block_size: 100, ..EvalConfig::default() };
        assert_eq!(EvalConfig::from_config(&bad.to_config()), None);
        let bad = EvalConfig { points_per_thread: Some(3), ..EvalConfig::default() };
        assert_eq!(EvalConfig::from_config(&bad.to_config()), None);
    }
}
