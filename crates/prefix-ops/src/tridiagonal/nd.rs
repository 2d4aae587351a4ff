//! Batches of systems held in the rows of two-dimensional `ndarray` arrays.
//!
//! Arrays of shape `(G, m)`: row `g` holds system `g` (rows along the last axis, as everywhere
//! in this crate). Row-major (standard) arrays are a [strided](Layout::Strided) batch and
//! column-major ones an [interleaved](Layout::Interleaved) batch, both solved without a copy;
//! any other layout (slices with steps, mixed layouts) is copied to row-major and back.

use ndarray::{ArrayView2, ArrayViewMut2};

use super::batch::{Layout, TridiagonalBatch};
use super::real::Real;
use super::solve::Solver;
#[cfg(doc)]
use crate::Error;
use crate::Result;
use crate::nd::{check_shape, copy_back, row_major};

/// Solves the systems in the rows of `(G, m)` arrays in place with [`Solver::Auto`], the safe
/// default: `d` holds the right-hand sides on entry and the solutions on return.
///
/// Errors: [`Error::ShapeMismatch`] when the four shapes differ, then as
/// [`TridiagonalBatch::solve`].
///
/// ```
/// use prefix_ops::ndarray::array;
/// use prefix_ops::tridiagonal::solve_2d;
/// // Two systems of size 3: [-1, 2, -1] (Poisson) and a dominant one.
/// let a = array![[0.0, -1.0, -1.0], [0.0, 1.0, 1.0]];
/// let b = array![[2.0, 2.0, 2.0], [4.0, 4.0, 4.0]];
/// let c = array![[-1.0, -1.0, 0.0], [1.0, 1.0, 0.0]];
/// let mut d = array![[1.0, 0.0, 1.0], [5.0, 6.0, 5.0]];
/// solve_2d(a.view(), b.view(), c.view(), d.view_mut())?;
/// let want = array![[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]];
/// assert!(d.iter().zip(&want).all(|(x, w): (&f64, &f64)| (x - w).abs() < 1e-12));
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn solve_2d<T: Real>(
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    c: ArrayView2<'_, T>,
    d: ArrayViewMut2<'_, T>,
) -> Result<()> {
    solve_2d_with(Solver::Auto, a, b, c, d)
}

/// [`solve_2d`] with any [`Solver`].
pub fn solve_2d_with<T: Real>(
    solver: Solver,
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    c: ArrayView2<'_, T>,
    mut d: ArrayViewMut2<'_, T>,
) -> Result<()> {
    let shape = d.dim();
    for (what, got) in
        [("a (sub-diagonal)", a.dim()), ("b (main diagonal)", b.dim()), ("c (super-diagonal)", c.dim())]
    {
        check_shape(what, got, shape)?;
    }
    let m = shape.1;
    if d.is_standard_layout()
        && let (Some(a), Some(b), Some(c)) = (a.to_slice(), b.to_slice(), c.to_slice())
        && let Some(d) = d.view_mut().into_slice()
    {
        return TridiagonalBatch::new(a, b, c, m, Layout::Strided)?.solve_with(solver, d);
    }
    if let (Some(at), Some(bt), Some(ct)) = (a.t().to_slice(), b.t().to_slice(), c.t().to_slice())
        && let Some(d) = d.view_mut().reversed_axes().into_slice()
    {
        return TridiagonalBatch::new(at, bt, ct, m, Layout::Interleaved)?.solve_with(solver, d);
    }
    let (a, b, c) = (row_major(&a)?, row_major(&b)?, row_major(&c)?);
    let mut x = row_major(&d.view())?.into_owned();
    TridiagonalBatch::new(&a, &b, &c, m, Layout::Strided)?.solve_with(solver, &mut x)?;
    copy_back(d, &x);
    Ok(())
}
