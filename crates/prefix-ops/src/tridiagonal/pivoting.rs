//! Gaussian elimination with partial pivoting for one tridiagonal system, as LAPACK's `gtsv`:
//! solves systems that are not diagonally dominant, where Thomas and the parallel reductions
//! can divide by (nearly) zero.

use rayon::prelude::*;

use super::batch::TridiagonalBatch;
use super::real::Real;
use crate::{Error, Result};

/// Scratch of one system: the U factor's three diagonals, after row interchanges.
struct Work<T> {
    /// Main diagonal of U.
    d: Vec<T>,
    /// First super-diagonal of U.
    du: Vec<T>,
    /// Second super-diagonal of U (fill-in from interchanges).
    du2: Vec<T>,
    /// Sub-diagonal, consumed by the elimination.
    dl: Vec<T>,
    rhs: Vec<T>,
}

impl<T: Real> Work<T> {
    fn new(m: usize) -> Self {
        let z = || vec![T::zero(); m];
        Work { d: z(), du: z(), du2: z(), dl: z(), rhs: z() }
    }

    /// Solves the loaded system; `rhs` becomes `x`. Errors when an exactly zero pivot is met
    /// (the matrix is singular), like `gtsv`'s `INFO > 0`.
    fn solve(&mut self, system: usize) -> Result<()> {
        let n = self.d.len();
        let Work { d, du, du2, dl, rhs } = self;
        for i in 0..n.saturating_sub(1) {
            // dl[i] is the sub-diagonal entry of row i + 1.
            if d[i].abs() >= dl[i].abs() {
                if d[i] == T::zero() {
                    return Err(Error::ZeroPivot { system, row: i });
                }
                let f = dl[i] / d[i];
                d[i + 1] = d[i + 1] - f * du[i];
                rhs[i + 1] = rhs[i + 1] - f * rhs[i];
                du2[i] = T::zero();
            } else {
                // Swap rows i and i + 1; row i then reaches two places right.
                let f = d[i] / dl[i];
                d[i] = dl[i];
                let t = d[i + 1];
                d[i + 1] = du[i] - f * t;
                if i + 2 < n {
                    du2[i] = du[i + 1];
                    du[i + 1] = -f * du2[i];
                }
                du[i] = t;
                let r = rhs[i];
                rhs[i] = rhs[i + 1];
                rhs[i + 1] = r - f * rhs[i + 1];
            }
        }
        if n > 0 && d[n - 1] == T::zero() {
            return Err(Error::ZeroPivot { system, row: n - 1 });
        }
        for i in (0..n).rev() {
            let mut s = rhs[i];
            if i + 1 < n {
                s = s - du[i] * rhs[i + 1];
            }
            if i + 2 < n {
                s = s - du2[i] * rhs[i + 2];
            }
            rhs[i] = s / d[i];
        }
        Ok(())
    }
}

/// Solves every system of the batch with partial pivoting, systems in parallel; `d` becomes `x`.
pub(crate) fn solve_pivoting<T: Real>(batch: &TridiagonalBatch<'_, T>, d: &mut [T]) -> Result<()> {
    let m = batch.m;
    let xs: Vec<Vec<T>> = (0..batch.systems)
        .into_par_iter()
        .map_init(
            || Work::new(m),
            |w, g| {
                for k in 0..m {
                    let i = batch.at(g, k);
                    w.d[k] = batch.b[i];
                    w.du[k] = if k + 1 < m { batch.c[i] } else { T::zero() };
                    w.dl[k] = if k + 1 < m { batch.a[batch.at(g, k + 1)] } else { T::zero() };
                    w.du2[k] = T::zero();
                    w.rhs[k] = d[i];
                }
                w.solve(g).map(|()| w.rhs.clone())
            },
        )
        .collect::<Result<_>>()?;
    for (g, x) in xs.iter().enumerate() {
        for (k, &v) in x.iter().enumerate() {
            d[batch.at(g, k)] = v;
        }
    }
    Ok(())
}
