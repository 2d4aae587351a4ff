//! Batched tridiagonal solvers on CPU and GPU.
//!
//! A batch holds `G` systems of size `m`,
//! `a_k x_{k-1} + b_k x_k + c_k x_{k+1} = d_k` for `k = 0 .. m`, stored
//! [strided](Layout::Strided) (systems one after another) or [interleaved](Layout::Interleaved)
//! (element `k` of every system adjacent), in `f32` or `f64`.
//!
//! - [`TridiagonalBatch`]: the problem; [`TridiagonalBatch::solve`] picks a fast CPU solver,
//!   [`TridiagonalBatch::solve_with`] takes a [`Solver`].
//! - [`ThomasFactors`]: one system, many right-hand sides.
//! - [`TridiagonalBatch::residual`] and [`TridiagonalBatch::accuracy`]: how good a solution is.
//! - [`gpu`]: the same algorithms as CUDA kernels, and a dispatcher.
//!
//! Algorithms (book chapter "Tridiagonal solvers" for pictures and stability notes): Thomas,
//! partial-pivoting LU (`gtsv`), cyclic reduction (CR), parallel cyclic reduction (PCR), the
//! CR-PCR hybrid, Redundant Reduction (RR, opt-in, unstable beyond `m ≈ 16`), Wang & Mou (WM) and
//! Tree-Partitioning Reduction (TPR).

mod accuracy;
mod batch;
mod cyclic;
mod equation;
pub mod gpu;
mod pivoting;
mod real;
mod rr;
mod solve;
mod thomas;
mod tpr;
mod wang_mou;

pub use accuracy::AccuracyReport;
pub use batch::{Layout, TridiagonalBatch};
pub use real::Real;
pub use rr::RrNetwork;
pub use solve::Solver;
pub use thomas::ThomasFactors;
