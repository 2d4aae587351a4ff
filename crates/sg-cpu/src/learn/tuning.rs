//! The tuning parameters of the learning operators, declared as [`hetero_sched::tune`] spaces
//! (thesis Tables 7.2 and 7.4, reduced to what applies to a CPU).
//!
//! Both implement [`Tunable`], keyed by the problem shape `(N, m)` (grid points, data points)
//! as a [`Bucket::batch`]: a configuration tuned on this machine (`hetkit tune kernel
//! sg_learn_stream` or `sg_learn_subspace`) replaces the defaults at dispatch
//! ([`Tunable::tuned`]), which is where `sg-learn`'s CPU backends take their parameters from
//! unless given explicit ones.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Param, Space, Value};

use crate::error::{Error, Result};

/// The streaming operators' name in the tuning cache.
pub const STREAM_KERNEL: &str = "sg_cpu::learn::streaming";
/// The subspace operators' name in the tuning cache.
pub const SUBSPACE_KERNEL: &str = "sg_cpu::learn::subspace";

/// The bucket of both operators' problems: `N` grid points (the size) against `m` data
/// points (the batch), since the work per product is `N·m·d` and the best blocking follows
/// both extents.
fn operator_bucket((grid_points, data_points): (usize, usize)) -> Bucket {
    Bucket::batch(grid_points as u64, data_points as u64)
}

/// Parameters of [`StreamingOperator`](super::StreamingOperator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamTuning {
    /// Data points per SIMD block (the thesis's data-block): 8, 16 or 32.
    pub lanes: usize,
    /// Data points per rayon task of `B α` (rounded up to a multiple of `lanes`).
    pub data_chunk: usize,
    /// Grid points per rayon task of `Bᵀ v`.
    pub grid_chunk: usize,
}

impl Default for StreamTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl StreamTuning {
    /// The constants the operators were written with.
    pub const DEFAULT: StreamTuning = StreamTuning { lanes: 16, data_chunk: 256, grid_chunk: 16 };

    /// Checks that the operators can run with these parameters.
    ///
    /// # Errors
    /// `lanes` not 8, 16 or 32, or a chunk of 0.
    pub fn check(&self) -> Result<()> {
        if ![8, 16, 32].contains(&self.lanes) || self.data_chunk == 0 || self.grid_chunk == 0 {
            return Err(Error::Shape(format!("unusable streaming tuning {self:?}")));
        }
        Ok(())
    }
}

/// Tuned per element type and bucket of `(N, m)`.
impl Tunable for StreamTuning {
    const KERNEL: &'static str = STREAM_KERNEL;
    type Shape = (usize, usize);

    /// `lanes` in {8, 16, 32}, `data_chunk` 64 ..= 4096, `grid_chunk` 1 ..= 256 (powers of two).
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::ints("lanes", &[8, 16, 32]))
                .param(Param::pow2("data_chunk", 64, 4096))
                .param(Param::pow2("grid_chunk", 1, 256))
                .build()
                .expect("the streaming tuning space is well-formed")
        })
    }

    /// As a configuration of [`space`](Self::space).
    fn to_config(&self) -> Config {
        Config::new(vec![
            ("lanes".into(), Value::Int(self.lanes as i64)),
            ("data_chunk".into(), Value::Int(self.data_chunk as i64)),
            ("grid_chunk".into(), Value::Int(self.grid_chunk as i64)),
        ])
    }

    /// From a configuration; `None` when a parameter is missing or unusable.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).and_then(|v| usize::try_from(v).ok());
        let t = StreamTuning {
            lanes: get("lanes")?,
            data_chunk: get("data_chunk")?,
            grid_chunk: get("grid_chunk")?,
        };
        t.check().is_ok().then_some(t)
    }

    fn bucket(shape: (usize, usize)) -> Option<Bucket> {
        Some(operator_bucket(shape))
    }
}

/// Parameters of [`SubspaceOperator`](super::SubspaceOperator) (thesis Table 7.4; the
/// vectorisation switches and list-ratio do not apply to this implementation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubspaceTuning {
    /// Data points that walk the subspaces together (and per rayon task).
    pub chunk_size: usize,
    /// Jump over child subspaces when the candidate point is missing (consistent grids only).
    pub skipping: bool,
    /// Keep prefix products and flat indices of unchanged leading dimensions.
    pub reuse_intermediates: bool,
}

impl Default for SubspaceTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SubspaceTuning {
    /// The constants the operators were written with.
    pub const DEFAULT: SubspaceTuning =
        SubspaceTuning { chunk_size: 128, skipping: true, reuse_intermediates: true };
    /// The thesis's "parallel, vectorised, not optimised" baseline (Table 7.7).
    pub const PVN: SubspaceTuning =
        SubspaceTuning { chunk_size: 16, skipping: false, reuse_intermediates: false };

    /// Checks that the operators can run with these parameters.
    ///
    /// # Errors
    /// A chunk size of 0.
    pub fn check(&self) -> Result<()> {
        if self.chunk_size == 0 {
            return Err(Error::Shape("subspace chunk size 0".into()));
        }
        Ok(())
    }
}

/// Tuned per element type and bucket of `(N, m)`.
impl Tunable for SubspaceTuning {
    const KERNEL: &'static str = SUBSPACE_KERNEL;
    type Shape = (usize, usize);

    /// `chunk_size` 16 ..= 512 (powers of two), `skipping` and `reuse_intermediates` booleans.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::pow2("chunk_size", 16, 512))
                .param(Param::boolean("skipping"))
                .param(Param::boolean("reuse_intermediates"))
                .build()
                .expect("the subspace tuning space is well-formed")
        })
    }

    /// As a configuration of [`space`](Self::space).
    fn to_config(&self) -> Config {
        Config::new(vec![
            ("chunk_size".into(), Value::Int(self.chunk_size as i64)),
            ("skipping".into(), Value::Bool(self.skipping)),
            ("reuse_intermediates".into(), Value::Bool(self.reuse_intermediates)),
        ])
    }

    /// From a configuration; `None` when a parameter is missing or unusable.
    fn from_config(c: &Config) -> Option<Self> {
        let t = SubspaceTuning {
            chunk_size: c.int("chunk_size").and_then(|v| usize::try_from(v).ok())?,
            skipping: c.get("skipping")?.as_bool()?,
            reuse_intermediates: c.get("reuse_intermediates")?.as_bool()?,
        };
        t.check().is_ok().then_some(t)
    }

    fn bucket(shape: (usize, usize)) -> Option<Bucket> {
        Some(operator_bucket(shape))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetero_sched::tune::Domain;

    #[test]
    fn defaults_are_in_their_spaces_and_round_trip() {
        for (c, space) in [
            (StreamTuning::DEFAULT.to_config(), StreamTuning::space()),
            (SubspaceTuning::DEFAULT.to_config(), SubspaceTuning::space()),
            (SubspaceTuning::PVN.to_config(), SubspaceTuning::space()),
        ] {
            assert!(space.point_of(&c).is_some_and(|p| space.is_valid(&p)));
        }
        assert_eq!(
            StreamTuning::from_config(&StreamTuning::DEFAULT.to_config()),
            Some(StreamTuning::DEFAULT)
        );
        assert_eq!(SubspaceTuning::from_config(&SubspaceTuning::PVN.to_config()), Some(SubspaceTuning::PVN));
        let bad = StreamTuning { lanes: 7, ..StreamTuning::DEFAULT };
        assert_eq!(StreamTuning::from_config(&bad.to_config()), None);
    }
}
