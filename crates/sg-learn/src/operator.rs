//! The operator interface the learners are written against, and its CPU implementations.
//!
//! Regression needs `B α` and `Bᵀ v` for the `m × N` matrix `B_ij = φ_j(x_i)` of one data set
//! and one grid; density estimation needs the mass-matrix product `R v` with
//! `R_ij = (φ_i, φ_j)_{L2}` (linear hats). A [`Backend`] builds both once per fit (so that a
//! device can keep data and grid resident across the CG iterations) as boxed
//! [`DataOperator`] and [`MassOperator`] objects.
//!
//! The CPU backends are [`CpuStreaming`] (the unified streaming algorithm: every basis function
//! against every point, vectorised over points) and [`CpuSubspace`] (the subspace algorithm:
//! one candidate function per subspace and point, found by index arithmetic).

use std::fmt::Debug;

use ndarray::ArrayView2;
use sg_core::{AdaptiveGrid, Basis};
use sg_cpu::learn::{MassMatrix, StreamTuning, StreamingOperator, SubspaceOperator, SubspaceTuning};

use crate::error::Result;

/// `B` and `Bᵀ` of one data set (`m` rows) on one grid (`N` functions).
pub trait DataOperator: Send + Sync {
    /// `N`, the number of grid points (columns of `B`).
    fn grid_len(&self) -> usize;
    /// `m`, the number of data points (rows of `B`).
    fn data_len(&self) -> usize;
    /// `out = B α` (`alpha.len() == N`, `out.len() == m`); the learner checks lengths.
    ///
    /// # Errors
    /// Whatever the backend reports (a device failure, say).
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()>;
    /// `out = Bᵀ v` (`v.len() == m`, `out.len() == N`).
    ///
    /// # Errors
    /// As [`mult`](Self::mult).
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()>;
}

/// The L2 mass matrix `R` of a grid of linear hats.
pub trait MassOperator: Send + Sync {
    /// `N`.
    fn grid_len(&self) -> usize;
    /// `out = R v` (both of length `N`).
    ///
    /// # Errors
    /// Whatever the backend reports.
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()>;
}

/// A maker of operators: the CPU algorithms here, a GPU elsewhere.
pub trait Backend: Send + Sync + Debug {
    /// A short name for logs and errors.
    fn name(&self) -> &'static str;
    /// The operators `B`, `Bᵀ` for `x` (rows in `[0, 1]^d`, already checked) on `grid`.
    ///
    /// # Errors
    /// When the backend cannot hold the problem (memory, a missing device).
    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>>;
    /// The mass matrix of `grid` (linear hats).
    ///
    /// # Errors
    /// As [`data_operator`](Self::data_operator).
    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>>;
}

/// The unified streaming algorithm on the CPU (rayon, vectorised over data points).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuStreaming {
    /// Its tuning parameters.
    pub tuning: StreamTuning,
}

/// The subspace algorithm on the CPU (rayon over chunks of data points).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSubspace {
    /// Its tuning parameters.
    pub tuning: SubspaceTuning,
}

impl DataOperator for StreamingOperator {
    fn grid_len(&self) -> usize {
        StreamingOperator::grid_len(self)
    }
    fn data_len(&self) -> usize {
        StreamingOperator::data_len(self)
    }
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(StreamingOperator::mult(self, alpha, out)?)
    }
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(StreamingOperator::mult_transpose(self, v, out)?)
    }
}

impl DataOperator for SubspaceOperator {
    fn grid_len(&self) -> usize {
        SubspaceOperator::grid_len(self)
    }
    fn data_len(&self) -> usize {
        SubspaceOperator::data_len(self)
    }
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(SubspaceOperator::mult(self, alpha, out)?)
    }
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(SubspaceOperator::mult_transpose(self, v, out)?)
    }
}

impl MassOperator for MassMatrix {
    fn grid_len(&self) -> usize {
        MassMatrix::grid_len(self)
    }
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(MassMatrix::mult(self, v, out)?)
    }
}

impl Backend for CpuStreaming {
    fn name(&self) -> &'static str {
        "cpu-streaming"
    }
    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>> {
        Ok(Box::new(StreamingOperator::new(grid, basis, x, self.tuning)?))
    }
    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>> {
        Ok(Box::new(MassMatrix::new(grid)?))
    }
}

impl Backend for CpuSubspace {
    fn name(&self) -> &'static str {
        "cpu-subspace"
    }
    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>> {
        Ok(Box::new(SubspaceOperator::new(grid, basis, x, self.tuning)?))
    }
    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>> {
        Ok(Box::new(MassMatrix::new(grid)?))
    }
}
