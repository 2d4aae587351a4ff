//! The operators of learning with sparse grids on the GPU (Pfander 2019, Ch. 7–8): the
//! regression products `B α` and `Bᵀ v` by the unified streaming algorithm
//! ([`StreamingOperator`]), the right-hand side of density estimation
//! ([`StreamingOperator::mean_basis`]) and the mass-matrix product `(R + λI) v`
//! ([`MassOperator`]), for any set of grid points ([`GridPoints`]: regular or adaptive) in the
//! linear or modified-linear basis ([`Basis`], sg-core's), in `f32` and `f64`.
//!
//! The thesis's tunable parameters are [`StreamConfig`]'s fields, one set per kernel, with
//! `hetero_sched` tuning spaces ([`StreamConfig::space`]) and defaults; the compile-time ones
//! reach the kernels as NVRTC `#define`s. The book's chapter "Learning on the GPU" has the
//! algorithms and the measurements.

mod config;
mod kernels;
mod mass;
mod points;
mod streaming;
mod tune;

pub use config::{LearnConfig, LearnKernel, MAX_BLOCK, MAX_SPLIT, StreamConfig, fingerprint};
#[cfg(test)]
pub(crate) use kernels::{LEARN_MODULE, entry};
pub use mass::MassOperator;
pub use points::GridPoints;
/// The basis of the operators (sg-core's: linear hats, or the modified linear functions).
pub use sg_core::Basis;
pub use streaming::{DeviceData, StreamingOperator};
pub use tune::{TuneOutcome, TuneSettings, tune_mass, tune_streaming};
