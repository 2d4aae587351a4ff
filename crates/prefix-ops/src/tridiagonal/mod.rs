//! Batched tridiagonal solvers on CPU and GPU.
//!
//! A batch holds `G` systems of size `m`,
//! `a_k x_{k-1} + b_k x_k + c_k x_{k+1} = d_k` for `k = 0 .. m-1` (`a_0` and `c_{m-1}` are
//! ignored), stored
//! [strided](Layout::Strided) (systems one after another) or [interleaved](Layout::Interleaved)
//! (element `k` of every system adjacent), in `f32` or `f64`.
//!
//! - [`TridiagonalBatch`]: the problem; [`TridiagonalBatch::solve`] is the safe default
//!   ([`Solver::Auto`]: partial pivoting as LAPACK `gtsv`, or the fast Thomas solvers when the
//!   batch is proven [diagonally dominant](TridiagonalBatch::dominance));
//!   [`TridiagonalBatch::solve_with`] takes any [`Solver`] by name.
//! - [`TridiagonalTuning`]: which Thomas solver `Auto` runs on a dominant batch and its grain,
//!   tuned per layout and shape (`hetkit tune kernel tridiagonal`);
//!   [`TridiagonalBatch::solve_tuned`] runs explicit parameters.
//! - [`solve_2d`] and [`solve_2d_with`]: the same for systems in the rows of `ndarray` arrays.
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
mod dominance;
mod equation;
pub mod gpu;
mod gpu_banks;
mod gpu_cost;
mod gpu_tuning;
mod nd;
mod pivoting;
mod real;
mod rr;
mod solve;
mod thomas;
mod tpr;
mod tuning;
mod wang_mou;

pub use accuracy::AccuracyReport;
pub use batch::{Layout, TridiagonalBatch};
pub use dominance::Dominance;
pub use nd::{solve_2d, solve_2d_with};
pub use real::Real;
pub use rr::RrNetwork;
pub use solve::Solver;
pub use thomas::ThomasFactors;
pub use tuning::{FastSolver, KERNEL as TUNING_KERNEL, TridiagonalTuning};
