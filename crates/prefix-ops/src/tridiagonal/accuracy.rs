//! How good a computed solution is: the normwise backward error (residual) and the forward
//! error against an `f64` partial-pivoting LU (`gtsv`) solution.
//!
//! NaN rule: a quantity that cannot be computed is NaN, never a reassuring 0. `f64::max` drops a
//! NaN operand, so the maxima here go through [`max_nan`].

use super::batch::TridiagonalBatch;
use super::real::Real;
use super::solve::Solver;
use crate::Result;

/// Accuracy of a computed solution of a batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccuracyReport {
    /// Largest normwise residual over the systems, `‖A x̂ − d‖∞ / (‖A‖∞ ‖x̂‖∞ + ‖d‖∞)`, in f64;
    /// NaN as [`TridiagonalBatch::residual`] says.
    pub residual: f64,
    /// Largest `|x̂_i − x_i| / max(|x_i|, 1)` against the f64 reference solution: infinite
    /// where `x̂_i` is NaN or infinite, NaN where the reference itself is not finite.
    pub max_rel_error: f64,
    /// Residual of the f64 reference itself: how well conditioned the comparison is.
    pub reference_residual: f64,
}

/// The larger of `a` and `b`, NaN if either is NaN.
fn max_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) }
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// The largest normwise residual `‖A x − d‖∞ / (‖A‖∞ ‖x‖∞ + ‖d‖∞)` over the systems,
    /// computed in f64: 0 for an empty batch, and NaN when any coefficient, right-hand side or
    /// solution value of some system is NaN or infinite (such a residual verifies nothing).
    ///
    /// ```
    /// use prefix_ops::tridiagonal::TridiagonalBatch;
    /// let (a, b, c) = ([0.0f32, 1.0], [4.0, 4.0], [1.0, 0.0]);
    /// let batch = TridiagonalBatch::strided(&a, &b, &c, 2)?;
    /// let d = [5.0, 5.0];
    /// let mut x = [0.0; 2];
    /// batch.solve_into(&d, &mut x)?;
    /// assert!(batch.residual(&x, &d)? < 1e-6);
    /// assert!(batch.residual(&[f32::NAN, 1.0], &d)?.is_nan());
    /// # Ok::<(), prefix_ops::Error>(())
    /// ```
    pub fn residual(&self, x: &[T], d: &[T]) -> Result<f64> {
        self.check_rhs("x (solution)", x.len())?;
        self.check_rhs("d (right-hand side)", d.len())?;
        let mut worst = 0.0f64;
        for g in 0..self.systems {
            worst = max_nan(worst, self.system_residual(g, x, d));
            if worst.is_nan() {
                break;
            }
        }
        Ok(worst)
    }

    /// The normwise residual of system `g`, NaN when any of its values is not finite.
    fn system_residual(&self, g: usize, x: &[T], d: &[T]) -> f64 {
        let (mut r, mut na, mut nx, mut nd) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for k in 0..self.m {
            let i = self.at(g, k);
            let (a, c) = self.couplings(g, k);
            let left = if k > 0 { x[self.at(g, k - 1)].wide() } else { 0.0 };
            let right = if k + 1 < self.m { x[self.at(g, k + 1)].wide() } else { 0.0 };
            let (b, xi, di) = (self.b[i].wide(), x[i].wide(), d[i].wide());
            if ![a, b, c, xi, di].iter().all(|v| v.is_finite()) {
                return f64::NAN;
            }
            let ax = a * left + b * xi + c * right;
            r = r.max((ax - di).abs());
            na = na.max(a.abs() + b.abs() + c.abs());
            nx = nx.max(xi.abs());
            nd = nd.max(di.abs());
        }
        let denom = na * nx + nd;
        if denom > 0.0 { r / denom } else { r }
    }

    /// Compares `x` with the solution of the same batch computed in f64 by partial-pivoting LU
    /// (as LAPACK's `gtsv`, stable on every non-singular system), so a solver that failed
    /// (for instance Thomas at a near-zero pivot) shows as a large `max_rel_error`.
    /// Errors on bad lengths, or [`Error::ZeroPivot`](crate::Error::ZeroPivot) when a system is
    /// singular in f64.
    ///
    /// ```
    /// use prefix_ops::tridiagonal::{Solver, TridiagonalBatch};
    /// // A pivot of 1e-17: Thomas without pivoting returns [0, 1, 2], the answer is [-1, 1, 2].
    /// let (a, b, c) = ([0.0f64, 1.0, 1.0], [1e-17, 1.0, 1.0], [1.0, 1.0, 0.0]);
    /// let d = [1.0, 2.0, 3.0];
    /// let batch = TridiagonalBatch::strided(&a, &b, &c, 3)?;
    /// let mut x = d;
    /// batch.solve_with(Solver::Thomas, &mut x)?;
    /// assert_eq!(x, [0.0, 1.0, 2.0]);
    /// assert!(batch.accuracy(&x, &d)?.max_rel_error > 0.5);
    /// # Ok::<(), prefix_ops::Error>(())
    /// ```
    pub fn accuracy(&self, x: &[T], d: &[T]) -> Result<AccuracyReport> {
        let residual = self.residual(x, d)?;
        let wide = |v: &[T]| -> Result<Vec<f64>> {
            let mut out = crate::alloc::try_with_capacity(v.len(), "accuracy: f64 copy")?;
            out.extend(v.iter().map(|&t| t.wide()));
            Ok(out)
        };
        let (a, b, c, d64) = (wide(self.a)?, wide(self.b)?, wide(self.c)?, wide(d)?);
        let batch = TridiagonalBatch::new(&a, &b, &c, self.m, self.layout)?;
        let mut xref = crate::alloc::try_copy(&d64, "accuracy: reference solution")?;
        batch.solve_with(Solver::PivotingLu, &mut xref)?;
        let reference_residual = batch.residual(&xref, &d64)?;
        let max_rel_error = x
            .iter()
            .zip(&xref)
            .map(|(&g, &w)| {
                let g = g.wide();
                if !w.is_finite() {
                    f64::NAN
                } else if !g.is_finite() {
                    f64::INFINITY
                } else {
                    (g - w).abs() / w.abs().max(1.0)
                }
            })
            .fold(0.0, max_nan);
        Ok(AccuracyReport { residual, max_rel_error, reference_residual })
    }
    /// `a[k]` and `c[k]` of system `g` in f64, zero where they couple to no unknown.
    fn couplings(&self, g: usize, k: usize) -> (f64, f64) {
        let i = self.at(g, k);
        let a = if k > 0 { self.a[i].wide() } else { 0.0 };
        let c = if k + 1 < self.m { self.c[i].wide() } else { 0.0 };
        (a, c)
    }
}
