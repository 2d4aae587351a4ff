//! Density estimation (thesis Eq. 8.4): `(R + λI) α = b` with the L2 mass matrix `R` of the
//! linear hats and `b_i = (1/m) Σ_j φ_i(x_j)`. The data enter only through `b`, so the cost is
//! linear in `m`; each CG iteration is one mass-matrix product, `O(2^d·N)` by the up-down
//! scheme on a consistent grid. With [`Regularization::Laplacian`] the system is
//! `(R + λS) α = b` with the Laplacian `S_ij = (∇φ_i, ∇φ_j)_{L2}` instead (SG++'s choice).

use ndarray::{Array1, ArrayView2};
use sg_core::{AdaptiveGrid, Basis, GridSpec};
use sg_cpu::learn::UpDown;

use crate::cg::{CgReport, conjugate_gradient};
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
    regularization: Regularization,
}

/// The regularisation operator `C` of the density system `(R + λC) α = b`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Regularization {
    /// `C = I` (the thesis's Eq. 8.4; the default).
    #[default]
    Identity,
    /// `C = S`, the Laplacian (stiffness) matrix of the hats, which penalises the estimate's
    /// gradient rather than its coefficients; applied on the CPU by the up-down scheme (the
    /// grid must be consistent), whatever the backend.
    Laplacian,
}

/// A fitted density: coefficients of linear hats on a grid.
#[derive(Debug, Clone)]
pub struct DensityModel(Expansion);

impl DensityEstimator {
    /// A density estimate on the grid `spec`: `λ = 1e-5`, at most 100 CG iterations, relative
    /// residual `1e-8`, CPU operators.
    pub fn new(spec: GridSpec) -> Self {
        DensityEstimator {
            grid: GridSource::Spec(spec),
            solver: Solver::default(),
            regularization: Regularization::Identity,
        }
    }

    /// A density estimate on an adaptive grid.
    pub fn with_grid(grid: AdaptiveGrid) -> Self {
        DensityEstimator {
            grid: GridSource::Adaptive(grid),
            solver: Solver::default(),
            regularization: Regularization::Identity,
        }
    }

    solver_builder!(solver);

    /// The regularisation operator `C` (default [`Regularization::Identity`]).
    pub fn regularization(mut self, c: Regularization) -> Self {
        self.regularization = c;
        self
    }

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

    /// `(R + λC) α = b`, `b = Bᵀ 1 / m`.
    fn solve(&self, grid: &AdaptiveGrid, x: ArrayView2<'_, f64>) -> Result<(Vec<f64>, CgReport)> {
        let m = x.nrows();
        let mut b = vec![0.0; grid.len()];
        let backend = &self.solver.backend;
        backend.data_operator(grid, Basis::Linear, x)?.mult_transpose(&vec![1.0 / m as f64; m], &mut b)?;
        let mass = backend.mass_operator(grid)?;
        match self.regularization {
            Regularization::Identity => self.solver.solve(|p, out| mass.mult(p, out), &b),
            Regularization::Laplacian => {
                let stiffness = UpDown::<f64>::new(grid)?;
                let mut sp = vec![0.0; grid.len()];
                let lambda = self.solver.lambda;
                let apply = |p: &[f64], out: &mut [f64]| {
                    mass.mult(p, out)?;
                    stiffness.laplacian(p, &mut sp)?;
                    out.iter_mut().zip(&sp).for_each(|(o, s)| *o += lambda * s);
                    Ok(())
                };
                conjugate_gradient(apply, &b, self.solver.max_iterations, self.solver.tolerance)
            }
        }
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
