//! What every learner shares: the solver settings (`λ`, CG iterations and tolerance, the
//! operators' backend) with their one validation, the checked start of a fit, the regularised
//! CG solve `(A + λI) α = b`, and the fitted expansion `f(x) = Σ_j α_j φ_j(x)` the models
//! evaluate. Each learner then only says what its `A` and `b` are.

use std::sync::Arc;

use ndarray::{Array1, ArrayView2};
use sg_core::{AdaptiveGrid, Basis};

use crate::cg::{CgReport, conjugate_gradient};
use crate::error::{LearnError, Result};
use crate::input::{GridSource, check_points_for};
use crate::operator::{Backend, CpuAssembled};

/// The settings of a learner's CG solve.
#[derive(Debug, Clone)]
pub(crate) struct Solver {
    /// The regularisation `λ >= 0`.
    pub(crate) lambda: f64,
    /// The most CG iterations per solve (at least 1).
    pub(crate) max_iterations: usize,
    /// The relative residual `‖r‖/‖b‖` to stop at.
    pub(crate) tolerance: f64,
    /// The operators' implementation.
    pub(crate) backend: Arc<dyn Backend>,
}

impl Default for Solver {
    /// `λ = 1e-5`, at most 100 iterations, relative residual `1e-8`, CPU assembled operators
    /// (`B` stored once when it fits 1 GiB, else the matrix-free subspace walk): the fastest
    /// CPU backend in the SG++ comparison (docs: learn/measured).
    fn default() -> Self {
        Solver {
            lambda: 1e-5,
            max_iterations: 100,
            tolerance: 1e-8,
            backend: Arc::new(CpuAssembled::default()),
        }
    }
}

impl Solver {
    /// Checks the settings, builds the grid and checks the data against it: the start of
    /// every fit, before any operator is built.
    pub(crate) fn prepare(&self, grid: &GridSource, x: ArrayView2<'_, f64>) -> Result<AdaptiveGrid> {
        self.check()?;
        let grid = grid.to_grid()?;
        check_points_for(x, grid.dim())?;
        Ok(grid)
    }

    fn check(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda >= 0.0) {
            return Err(invalid("lambda", format!("{} is not finite and >= 0", self.lambda)));
        }
        if self.max_iterations == 0 {
            return Err(invalid("max_iterations", "must be at least 1".into()));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(invalid("tolerance", format!("{} is not finite and >= 0", self.tolerance)));
        }
        Ok(())
    }

    /// Solves `(A + λI) α = b` by CG, where `apply(p, out)` writes `A p`.
    pub(crate) fn solve(
        &self,
        mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
        b: &[f64],
    ) -> Result<(Vec<f64>, CgReport)> {
        let lambda = self.lambda;
        let regularised = |p: &[f64], out: &mut [f64]| {
            apply(p, out)?;
            out.iter_mut().zip(p).for_each(|(o, p)| *o += lambda * p);
            Ok(())
        };
        conjugate_gradient(regularised, b, self.max_iterations, self.tolerance)
    }

    /// The fitted expansion, evaluated later with this solver's backend.
    pub(crate) fn expansion(
        &self,
        grid: AdaptiveGrid,
        basis: Basis,
        solved: (Vec<f64>, CgReport),
    ) -> Expansion {
        let (alpha, report) = solved;
        Expansion { grid, basis, alpha, report, backend: self.backend.clone() }
    }
}

fn invalid(name: &'static str, reason: String) -> LearnError {
    LearnError::InvalidParameter { name, reason }
}

/// `f(x) = Σ_j α_j φ_j(x)` on a grid: what a fit produces.
#[derive(Debug, Clone)]
pub(crate) struct Expansion {
    pub(crate) grid: AdaptiveGrid,
    pub(crate) basis: Basis,
    pub(crate) alpha: Vec<f64>,
    pub(crate) report: CgReport,
    backend: Arc<dyn Backend>,
}

impl Expansion {
    /// `f` at the rows of `x` (`B α`).
    pub(crate) fn evaluate(&self, x: ArrayView2<'_, f64>) -> Result<Array1<f64>> {
        check_points_for(x, self.grid.dim())?;
        let mut out = vec![0.0; x.nrows()];
        self.backend.evaluate(&self.grid, self.basis, &self.alpha, x, &mut out)?;
        Ok(Array1::from_vec(out))
    }
}

/// The builder methods of the solver settings, on a learner whose [`Solver`] is at
/// `self.$path` (so that every learner spells and checks them alike).
macro_rules! solver_builder {
    ($($path:ident).+) => {
        /// The regularisation `λ >= 0` (weight decay).
        pub fn lambda(mut self, lambda: f64) -> Self {
            self.$($path).+.lambda = lambda;
            self
        }

        /// The most CG iterations per solve (at least 1).
        pub fn max_iterations(mut self, n: usize) -> Self {
            self.$($path).+.max_iterations = n;
            self
        }

        /// The relative CG residual `‖r‖/‖b‖` to stop at.
        pub fn tolerance(mut self, tolerance: f64) -> Self {
            self.$($path).+.tolerance = tolerance;
            self
        }

        /// The operators' implementation (default: [`CpuAssembled`](crate::CpuAssembled)).
        pub fn backend(mut self, backend: std::sync::Arc<dyn crate::Backend>) -> Self {
            self.$($path).+.backend = backend;
            self
        }

        /// Runs the operators on `gpu` ([`GpuStreaming`](crate::GpuStreaming), `f64`).
        pub fn gpu(self, gpu: &cuda_kernels::Gpu) -> Self {
            self.backend(std::sync::Arc::new(crate::GpuStreaming::new(gpu)))
        }
    };
}

pub(crate) use solver_builder;
