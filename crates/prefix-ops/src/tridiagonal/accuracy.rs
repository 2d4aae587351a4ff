//! How good a computed solution is: the normwise backward error (residual) and the forward
//! error against an `f64` Thomas (or, where Thomas breaks down, `f64` pivoting LU) solution.

use super::batch::TridiagonalBatch;
use super::real::Real;
use super::solve::Solver;
use crate::{Error, Result};

/// Accuracy of a computed solution of a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccuracyReport {
    /// Largest normwise residual over the systems, `‖A x̂ − d‖∞ / (‖A‖∞ ‖x̂‖∞ + ‖d‖∞)`, in f64.
    pub residual: f64,
    /// Largest `|x̂_i − x_i| / max(|x_i|, 1)` against the f64 reference solution.
    pub max_rel_error: f64,
    /// Residual of the f64 reference itself: how well conditioned the comparison is.
    pub reference_residual: f64,
    /// Whether the reference needed pivoting (f64 Thomas met a zero pivot).
    pub reference_pivoted: bool,
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// The largest normwise residual `‖A x − d‖∞ / (‖A‖∞ ‖x‖∞ + ‖d‖∞)` over the systems,
    /// computed in f64 (0 for an empty batch; NaN when `x` holds NaN).
    ///
    /// ```
    /// use prefix_ops::tridiagonal::TridiagonalBatch;
    /// let (a, b, c) = ([0.0f32, 1.0], [4.0, 4.0], [1.0, 0.0]);
    /// let batch = TridiagonalBatch::strided(&a, &b, &c, 2)?;
    /// let d = [5.0, 5.0];
    /// let mut x = [0.0; 2];
    /// batch.solve_into(&d, &mut x)?;
    /// assert!(batch.residual(&x, &d)? < 1e-6);
    /// # Ok::<(), prefix_ops::Error>(())
    /// ```
    pub fn residual(&self, x: &[T], d: &[T]) -> Result<f64> {
        self.check_rhs("x (solution)", x.len())?;
        self.check_rhs("d (right-hand side)", d.len())?;
        let mut worst = 0.0f64;
        for g in 0..self.systems {
            let (mut r, mut na, mut nx, mut nd) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
            for k in 0..self.m {
                let i = self.at(g, k);
                let (a, c) = self.couplings(g, k);
                let left = if k > 0 { x[self.at(g, k - 1)].wide() } else { 0.0 };
                let right = if k + 1 < self.m { x[self.at(g, k + 1)].wide() } else { 0.0 };
                let ax = a * left + self.b[i].wide() * x[i].wide() + c * right;
                r = r.max((ax - d[i].wide()).abs());
                na = na.max(a.abs() + self.b[i].wide().abs() + c.abs());
                nx = nx.max(x[i].wide().abs());
                nd = nd.max(d[i].wide().abs());
            }
            let denom = na * nx + nd;
            let rel = if denom > 0.0 { r / denom } else { r };
            worst = if rel.is_nan() { f64::NAN } else { worst.max(rel) };
            if worst.is_nan() {
                break;
            }
        }
        Ok(worst)
    }

    /// Compares `x` with the solution of the same batch in f64 (Thomas, or pivoting LU where
    /// Thomas meets a zero pivot). Errors only on bad lengths or an f64-singular system.
    pub fn accuracy(&self, x: &[T], d: &[T]) -> Result<AccuracyReport> {
        let residual = self.residual(x, d)?;
        let wide = |v: &[T]| v.iter().map(|&t| t.wide()).collect::<Vec<f64>>();
        let (a, b, c, d64) = (wide(self.a), wide(self.b), wide(self.c), wide(d));
        let batch = TridiagonalBatch::new(&a, &b, &c, self.m, self.layout)?;
        let mut xref = d64.clone();
        let mut reference_pivoted = false;
        match batch.solve_with(Solver::Auto, &mut xref) {
            Ok(()) => {}
            Err(Error::ZeroPivot { .. }) => {
                reference_pivoted = true;
                xref.copy_from_slice(&d64);
                batch.solve_with(Solver::PivotingLu, &mut xref)?;
            }
            Err(e) => return Err(e),
        }
        let reference_residual = batch.residual(&xref, &d64)?;
        let max_rel_error = x
            .iter()
            .zip(&xref)
            .map(|(&g, &w)| {
                let g = g.wide();
                if g.is_nan() { f64::INFINITY } else { (g - w).abs() / w.abs().max(1.0) }
            })
            .fold(0.0, f64::max);
        Ok(AccuracyReport { residual, max_rel_error, reference_residual, reference_pivoted })
    }

    /// `a[k]` and `c[k]` of system `g` in f64, zero where they couple to no unknown.
    fn couplings(&self, g: usize, k: usize) -> (f64, f64) {
        let i = self.at(g, k);
        let a = if k > 0 { self.a[i].wide() } else { 0.0 };
        let c = if k + 1 < self.m { self.c[i].wide() } else { 0.0 };
        (a, c)
    }
}
