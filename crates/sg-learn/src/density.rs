//! Density estimation (thesis Eq. 8.4): `(R + λI) α = b` with the L2 mass matrix `R` of the
//! linear hats and `b_i = (1/m) Σ_j φ_i(x_j)`. The data enter only through `b`, so the cost is
//! linear in `m`; each CG iteration is one `O(N²·d)` mass-matrix product.

use ndarray::{Array1, ArrayView2};
use sg_core::{AdaptiveGrid, Basis, GridSpec};

use crate::cg::CgReport;
use crate::error::Result;
use crate::input::GridSource;
use crate::solver::{Expansion, Solver, solver_builder};

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
    pub(crate) solver: Solver,
}

/// A fitted density: coefficients of linear hats on a grid.
#[derive(Debug, Clone)]
pub struct DensityModel(Expansion);

impl DensityEstimator {
    /// A density estimate on the grid `spec`: `λ = 1e-5`, at most 100 CG iterations, relative
    /// residual `1e-8`, CPU operators.
    pub fn new(spec: GridSpec) -> Self {
        DensityEstimator { grid: GridSource::Spec(spec), solver: Solver::default() }
    }

    /// A density estimate on an adaptive grid.
    pub fn with_grid(grid: AdaptiveGrid) -> Self {
        DensityEstimator { grid: GridSource::Adaptive(grid), solver: Solver::default() }
    }

    solver_builder!(solver);

    /// Estimates the density of the rows of `x`.
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, a grid of another dimension or
    /// with boundary points, bad solver parameters, or a backend failure.
    pub fn fit(&self, x: ArrayView2<'_, f64>) -> Result<DensityModel> {
        let grid = self.solver.prepare(&self.grid, x)?;
        let _span = tracing::debug_span!("DensityEstimator::fit", m = x.nrows(), n = grid.len()).entered();
        let solved = self.solve(&grid, x)?;
        Ok(DensityModel(self.solver.expansion(grid, Basis::Linear, solved)))
    }

    /// `(R + λI) α = b`, `b = Bᵀ 1 / m`.
    fn solve(&self, grid: &AdaptiveGrid, x: ArrayView2<'_, f64>) -> Result<(Vec<f64>, CgReport)> {
        let m = x.nrows();
        let mut b = vec![0.0; grid.len()];
        let backend = &self.solver.backend;
        backend.data_operator(grid, Basis::Linear, x)?.mult_transpose(&vec![1.0 / m as f64; m], &mut b)?;
        let mass = backend.mass_operator(grid)?;
        self.solver.solve(|p, out| mass.mult(p, out), &b)
    }
}

impl DensityModel {
    /// The estimate at the rows of `x` (not guaranteed positive: see the book).
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, the wrong column count, or a
    /// backend failure.
    pub fn evaluate(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        self.0.evaluate(x)
    }

    /// The coefficients `α`.
    pub fn alpha(&self) -> &[f64] {
        &self.0.alpha
    }

    /// The grid.
    pub fn grid(&self) -> &AdaptiveGrid {
        &self.0.grid
    }

    /// How the CG solve ended.
    pub fn report(&self) -> CgReport {
        self.0.report
    }
}
