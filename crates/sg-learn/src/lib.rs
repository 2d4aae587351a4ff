//! Data mining on sparse grids (Pfander 2019, Ch. 7–8): least-squares regression, density
//! estimation and density-based clustering, on regular and spatially adaptive grids.
//!
//! The learners are written against the operator interface of [`operator`] ([`Backend`],
//! [`DataOperator`], [`MassOperator`]); the CPU implementations are the unified streaming and
//! the subspace algorithms of `sg-cpu`.

pub mod error;
pub mod operator;

pub use error::{LearnError, Result};
pub use operator::{Backend, CpuStreaming, CpuSubspace, DataOperator, MassOperator};
pub use sg_core::{AdaptiveGrid, Basis, GridSpec};
