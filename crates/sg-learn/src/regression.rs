//! Least-squares regression with weight decay (thesis Eq. 7.4):
//! `(BᵀB/m + λI) α = Bᵀy/m`, `B_ij = φ_j(x_i)`, solved by conjugate gradients with the
//! matrix-free operators of a [`Backend`](crate::Backend).

use ndarray::{Array1, ArrayView1, ArrayView2};
use sg_core::{AdaptiveGrid, Basis, GridSpec};

use crate::cg::CgReport;
use crate::error::Result;
use crate::input::{GridSource, check_points, check_targets};
use crate::solver::{Expansion, Solver, solver_builder};

/// The builder of a regression fit.
///
/// ```
/// use sg_learn::{Basis, GridSpec, Regressor};
/// let x = ndarray::Array2::from_shape_fn((200, 2), |(i, k)| ((i * (3 + 4 * k)) % 199) as f64 / 198.0);
/// let y = x.rows().into_iter().map(|r| r[0] + 2.0 * r[1]).collect::<ndarray::Array1<f64>>();
/// let model = Regressor::new(GridSpec::regular(2, 4)?)
///     .basis(Basis::ModifiedLinear)
///     .lambda(1e-6)
///     .fit(x.view(), y.view())?;
/// assert!(model.mse(x.view(), y.view())? < 1e-4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Regressor {
    grid: GridSource,
    basis: Basis,
    solver: Solver,
    refinement: Option<(usize, usize)>,
}

/// A fitted regression: the grid, the basis and the coefficients `α`.
#[derive(Debug, Clone)]
pub struct RegressionModel(Expansion);

impl Regressor {
    /// A regression on the grid `spec` (no boundary points), modified linear basis,
    /// `λ = 1e-5`, at most 100 CG iterations, relative residual `1e-8`, no refinement, CPU
    /// streaming operators.
    pub fn new(spec: GridSpec) -> Self {
        Self::from_source(GridSource::Spec(spec))
    }

    /// A regression on an adaptive grid.
    pub fn with_grid(grid: AdaptiveGrid) -> Self {
        Self::from_source(GridSource::Adaptive(grid))
    }

    fn from_source(grid: GridSource) -> Self {
        Regressor { grid, basis: Basis::ModifiedLinear, solver: Solver::default(), refinement: None }
    }

    /// The basis.
    pub fn basis(mut self, basis: Basis) -> Self {
        self.basis = basis;
        self
    }

    solver_builder!(solver);

    /// Surplus refinement (thesis §6.2): after each of `steps` solves, refine the `points`
    /// points of largest `|α|` and solve again.
    pub fn refinement(mut self, steps: usize, points: usize) -> Self {
        self.refinement = Some((steps, points));
        self
    }

    /// Fits `y ≈ f(x)` on the rows of `x`.
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, a non-finite target,
    /// `y.len() != x.nrows()`, a grid of another dimension or with boundary points, `λ < 0`,
    /// zero iterations, a negative tolerance, or a backend failure.
    pub fn fit(&self, x: ArrayView2<'_, f64>, y: ArrayView1<'_, f64>) -> Result<RegressionModel> {
        let mut grid = self.solver.prepare(&self.grid, x)?;
        check_targets(y, x.nrows())?;
        let _span = tracing::debug_span!("Regressor::fit", m = x.nrows(), n = grid.len()).entered();
        let (steps, points) = self.refinement.unwrap_or((0, 0));
        let mut solved = self.solve(&grid, x, y)?;
        for _ in 0..steps {
            if grid.refine_surplus(&solved.0, points)? == 0 {
                break;
            }
            solved = self.solve(&grid, x, y)?;
        }
        Ok(RegressionModel(self.solver.expansion(grid, self.basis, solved)))
    }

    /// `(BᵀB/m + λI) α = Bᵀy/m`.
    fn solve(
        &self,
        grid: &AdaptiveGrid,
        x: ArrayView2<'_, f64>,
        y: ArrayView1<'_, f64>,
    ) -> Result<(Vec<f64>, CgReport)> {
        let op = self.solver.backend.data_operator(grid, self.basis, x)?;
        let inv_m = 1.0 / x.nrows() as f64;
        let y_m: Vec<f64> = y.iter().map(|v| v * inv_m).collect();
        let mut rhs = vec![0.0; grid.len()];
        op.mult_transpose(&y_m, &mut rhs)?;
        let mut bp = vec![0.0; x.nrows()];
        let normal = |p: &[f64], out: &mut [f64]| {
            op.mult(p, &mut bp)?;
            op.mult_transpose(&bp, out)?;
            out.iter_mut().for_each(|o| *o *= inv_m);
            Ok(())
        };
        self.solver.solve(normal, &rhs)
    }
}

impl RegressionModel {
    /// The fitted function at the rows of `x`.
    ///
    /// # Errors
    /// Empty data, a point outside `[0, 1]^d` or not finite, a column count other than the
    /// grid's dimension, or a backend failure.
    pub fn predict(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        self.0.evaluate(x)
    }

    /// The mean squared error `(1/m) Σ (f(x_i) − y_i)²`.
    ///
    /// # Errors
    /// As [`predict`](Self::predict), plus `y.len() != x.nrows()` or a non-finite target.
    pub fn mse(&self, x: ArrayView2<'_, f64>, y: ArrayView1<'_, f64>) -> Result<f64> {
        check_points(x)?;
        check_targets(y, x.nrows())?;
        let f = self.predict(x)?;
        Ok(f.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / x.nrows() as f64)
    }

    /// The coefficients `α`, one per grid point.
    pub fn alpha(&self) -> &[f64] {
        &self.0.alpha
    }

    /// The grid (refined if refinement was asked for).
    pub fn grid(&self) -> &AdaptiveGrid {
        &self.0.grid
    }

    /// The basis.
    pub fn basis_kind(&self) -> Basis {
        self.0.basis
    }

    /// How the last CG solve ended.
    pub fn report(&self) -> CgReport {
        self.0.report
    }
}
