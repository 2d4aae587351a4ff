//! Sparse grid operations on multi-core CPUs: hierarchization along chains, batched evaluation
//! over a trie of blocks with vectorised point tiles, and the sparse vector-matrix product, all
//! parallel with rayon and equal to the `sg-core` references. See the book, part "Sparse grids
//! on CPUs".
//!
//! Each operation has a *plan* built once per grid description (the integer work of the
//! bijection moved out of the loops) and one entry point that picks a variant by size and shape;
//! every variant is public too, for tests and benchmarks. Thread count follows rayon's pool.
//!
//! ```
//! use sg_core::{Grid, GridSpec};
//! let spec = GridSpec::regular(4, 6)?;
//! let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
//! let mut grid = Grid::from_fn(spec, f)?;
//! sg_cpu::hierarchize(&mut grid)?;
//! let points = ndarray::array![[0.3, 0.6, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4]];
//! let ys = sg_cpu::evaluate_batch(&grid, points.view())?;
//! assert!((ys[0] - f(&[0.3, 0.6, 0.5, 0.5])).abs() < 0.05);
//! # Ok::<(), sg_cpu::Error>(())
//! ```

mod chains;
mod error;
pub mod evaluate;
pub mod hierarchize;
pub mod learn;
mod patterns;
mod shared_ptr;
pub mod spvm;
mod trie;
mod tuning;

pub use error::{Error, Result};
pub use evaluate::{EvalTuning, EvalVariant, Evaluator};
pub use hierarchize::{HierTuning, Hierarchizer};
pub use patterns::PointPattern;
pub use spvm::{PaddedMatrix, SpvmVariant};

use ndarray::{Array1, Array2, ArrayView2};
use sg_core::{Grid, Real, VectorGrid};

/// Hierarchizes `grid` in place (nodal values to surpluses), in parallel.
pub fn hierarchize<T: Real>(grid: &mut Grid<T>) -> Result<()> {
    let plan = Hierarchizer::new(grid.spec())?;
    plan.hierarchize(grid.values_mut(), 1)
}

/// Dehierarchizes `grid` in place (surpluses to nodal values), in parallel.
pub fn dehierarchize<T: Real>(grid: &mut Grid<T>) -> Result<()> {
    let plan = Hierarchizer::new(grid.spec())?;
    plan.dehierarchize(grid.values_mut(), 1)
}

/// Hierarchizes a grid of vectors in place.
pub fn hierarchize_vector<T: Real>(grid: &mut VectorGrid<T>) -> Result<()> {
    let s = grid.components();
    let plan = Hierarchizer::new(grid.spec())?;
    plan.hierarchize(grid.values_mut(), s)
}

/// Dehierarchizes a grid of vectors in place.
pub fn dehierarchize_vector<T: Real>(grid: &mut VectorGrid<T>) -> Result<()> {
    let s = grid.components();
    let plan = Hierarchizer::new(grid.spec())?;
    plan.dehierarchize(grid.values_mut(), s)
}

/// The interpolant of `grid` (values are surpluses) at the rows of `points` (`m x d`), choosing
/// the variant by [`Evaluator::choose`].
pub fn evaluate_batch<T: Real>(grid: &Grid<T>, points: ArrayView2<'_, T>) -> Result<Array1<T>> {
    let plan = Evaluator::new(grid.spec())?;
    let out = plan.evaluate(grid.values(), 1, points)?;
    Ok(Array1::from_vec(out))
}

/// The interpolant of a grid of vectors at the rows of `points`: an `m x s` array.
pub fn evaluate_batch_vector<T: Real>(grid: &VectorGrid<T>, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
    let s = grid.components();
    let plan = Evaluator::new(grid.spec())?;
    let out = plan.evaluate(grid.values(), s, points)?;
    Ok(Array2::from_shape_vec((points.nrows(), s), out).expect("m x s values"))
}
