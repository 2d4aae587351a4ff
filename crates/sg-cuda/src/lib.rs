//! Sparse grid operations on NVIDIA GPUs: device-resident grids, hierarchization, batched
//! evaluation and spvm kernels, and the split of evaluation between CPU and GPU. See the book, part
//! "Sparse grids on GPUs".
//!
//! - [`DeviceGrid`]: values plus the kernels' tables on the device; [`DeviceGrid::hierarchize`],
//!   [`DeviceGrid::evaluate`], [`DeviceGrid::evaluate_stream`].
//! - [`DeviceMatrix`] and [`DeviceMatrix::spvm`]: the sparse vector-matrix product.
//! - [`HeteroEvaluator`] and [`Split`]: evaluation split between sg-cpu and the GPU;
//!   [`HeteroSpvm`]: spvm split the same way.
//! - [`learn`]: the operators of sparse grid regression and density estimation (`B α`, `Bᵀ v`,
//!   the mass-matrix product) by the unified streaming algorithm.
//! - [`tables`] and [`emulate`]: the host-built tables and CPU emulators of the kernels (tests).
//! - [`occupancy`], [`plan`] and [`cost`]: the occupancy model, the launch decisions made from it,
//!   and launches and bytes moved per call against the floor.
//!
//! Every entry point returns an error, never panics, on a machine without a GPU.

pub mod config;
pub mod cost;
mod device;
pub mod emulate;
mod error;
mod evaluate;
mod hierarchize;
mod launch;
pub mod learn;
pub mod occupancy;
pub mod plan;
pub mod split;
mod spvm;
pub mod spvm_split;
pub mod tables;
mod tuning;

pub use config::{EvalConfig, SpvmConfig, SweepConfig};
pub use device::{DeviceGrid, DeviceReal};
pub use error::{Error, Result};
pub use split::{AffineModel, HeteroEvaluator, Split};
pub use spvm::DeviceMatrix;
pub use spvm_split::HeteroSpvm;
pub use tuning::EVAL_KERNEL as TUNING_KERNEL;
