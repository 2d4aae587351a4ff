//! Density estimation (thesis Eq. 8.4): `(R + λI) α = b` with the L2 mass matrix `R` of the
//! linear hats and `b_i = (1/m) Σ_j φ_i(x_j)`. The data enter only through `b`, so the cost is
//! linear in `m`; each CG iteration is one `O(N²·d)` mass-matrix product.

use std::sync::Arc;

use ndarray::{Array1, ArrayView2};
use sg_core::{AdaptiveGrid, Basis, GridSpec};

use crate::cg::{CgReport, conjugate_gradient};
use crate::error::Result;
use crate::input::{GridSource, check_points_for, check_solver};
use crate::operator::{Backend, CpuStreaming};

/// The builder of a density estimate.
///
/// ```
/// use sg_learn::{DensityEstimator, GridSpec};
/// let x = ndarray::Array2::from_shape_fn((500, 1), |(i, _)| 0.3 + 0.4 * (i as f64 / 499.0));
/// let model = DensityEstimator::new(GridSpec::regular(1, 5)?).lambda(1e-4).fit(x.view())?;
/// let f = model.evaluate(ndarray::array![[0.5], [0.05]].view())?;
/// assert!(f[0] > 1.5 && f[1].abs() < 0.3); // about 2.5 inside [0.3, 0.7], about 0 outside
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DensityEstimator {
    grid: GridSource,
    lambda: f64,
    max_iterations: usize,
    tolerance: f64,
    backend: Arc<dyn Backend>,
}

/// A fitted density: coefficients of linear hats on a grid.
#[derive(Debug, Clone)]
pub struct DensityModel {
    grid: AdaptiveGrid,
    alpha: Vec<f64>,
    report: CgReport,
    backend: Arc<dyn Backend>,
}

impl DensityEstimator {
    /// A density estimate on the grid `spec`: `λ = 1e-5`, at most 100 CG iterations, relative
    /// residual `1e-8`, CPU operators.
    pub fn new(spec: GridSpec) -> Self {
        Self::from_source(GridSource::Spec(spec))
    }

    /// A density estimate on an adaptive grid.
    pub fn with_grid(grid: AdaptiveGrid) -> Self {
        Self::from_source(GridSource::Adaptive(grid))
    }

    fn from_source(grid: GridSource) -> Self {
        DensityEstimator {
            grid,
            lambda: 1e-5,
            max_iterations: 100,
            tolerance: 1e-8,
            backend: Arc::new(CpuStreaming::default()),
        }
    }

    /// The regularisation `λ >= 0`.
    pub fn lambda(mut self, lambda: f64) -> Self {
        self.lambda = lambda;
        self
    }

    /// The most CG iterations (at least 1).
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.max_iterations = n;
        self
    }

    /// The relative CG residual to stop at.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The operators' implementation (default: [`CpuStreaming`]).
    pub fn backend(mut self, backend: Arc<dyn Backend>) -> Self {
        self.backend = backend;
        self
    }

    /// Runs the operators on `gpu` ([`GpuStreaming`](crate::GpuStreaming), `f64`).
    pub fn gpu(self, gpu: &cuda_kernels::Gpu) -> Self {
        self.backend(Arc::new(crate::GpuStreaming::new(gpu)))
    }

    /// Estimates the density of the rows of `x`.
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, a grid of another dimension or
    /// with boundary points, bad solver parameters, or a backend failure.
    pub fn fit(&self, x: ArrayView2<'_, f64>) -> Result<DensityModel> {
        check_solver(self.lambda, self.max_iterations, self.tolerance)?;
        let grid = self.grid.to_grid()?;
        check_points_for(x, grid.dim())?;
        let _span = tracing::debug_span!("DensityEstimator::fit", m = x.nrows(), n = grid.len()).entered();
        let m = x.nrows();
        let mut b = vec![0.0; grid.len()];
        self.backend
            .data_operator(&grid, Basis::Linear, x)?
            .mult_transpose(&vec![1.0 / m as f64; m], &mut b)?;
        let mass = self.backend.mass_operator(&grid)?;
        let lambda = self.lambda;
        let solved = conjugate_gradient(
            |p, out| {
                mass.mult(p, out)?;
                out.iter_mut().zip(p).for_each(|(o, p)| *o += lambda * p);
                Ok(())
            },
            &b,
            self.max_iterations,
            self.tolerance,
        );
        drop(mass);
        let (alpha, report) = solved?;
        Ok(DensityModel { grid, alpha, report, backend: self.backend.clone() })
    }
}

impl DensityModel {
    /// The estimate at the rows of `x` (not guaranteed positive: see the book).
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, the wrong column count, or a
    /// backend failure.
    pub fn evaluate(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        check_points_for(x, self.grid.dim())?;
        let op = self.backend.data_operator(&self.grid, Basis::Linear, x)?;
        let mut out = vec![0.0; x.nrows()];
        op.mult(&self.alpha, &mut out)?;
        Ok(Array1::from_vec(out))
    }

    /// The coefficients `α`.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// The grid.
    pub fn grid(&self) -> &AdaptiveGrid {
        &self.grid
    }

    /// How the CG solve ended.
    pub fn report(&self) -> CgReport {
        self.report
    }
}
