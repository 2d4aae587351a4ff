//! The operators of data mining on sparse grids (thesis Ch. 7–8): `B α` and `Bᵀ v` for `m`
//! data points by the unified streaming algorithm ([`StreamingOperator`]) and by the subspace
//! algorithm ([`SubspaceOperator`]), the L2 mass-matrix product (pairwise: [`MassMatrix`];
//! up-down, linear in `N`: [`UpDown`], which also applies the Laplacian) and the
//! density right-hand side ([`density_rhs`]); [`AssembledOperator`] stores `B` (sparse, by one
//! subspace walk) for the repeated products of a solve when it fits in memory;
//! [`TrieOperator`] computes `B α` on a regular grid of linear hats by the batched
//! evaluation's trie. `B_ij = φ_j(x_i)` is `m × N`, rows are data points. Grids are
//! [`AdaptiveGrid`]s (a regular grid converts with [`AdaptiveGrid::from_spec`]); both bases
//! of [`Basis`] are supported.
//!
//! ```
//! use sg_core::{AdaptiveGrid, Basis, GridSpec};
//! use sg_cpu::learn::{StreamingOperator, SubspaceOperator};
//! let grid = AdaptiveGrid::from_spec(&GridSpec::regular(3, 4)?)?;
//! let x = ndarray::Array2::from_shape_fn((50, 3), |(i, k)| ((i * 7 + k * 13) % 50) as f64 / 49.0);
//! let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
//! let (mut a, mut b) = (vec![0.0; 50], vec![0.0; 50]);
//! StreamingOperator::new(&grid, Basis::ModifiedLinear, x.view(), Default::default())?.mult(&alpha, &mut a)?;
//! SubspaceOperator::new(&grid, Basis::ModifiedLinear, x.view(), Default::default())?.mult(&alpha, &mut b)?;
//! assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`AdaptiveGrid`]: sg_core::AdaptiveGrid
//! [`AdaptiveGrid::from_spec`]: sg_core::AdaptiveGrid::from_spec
//! [`Basis`]: sg_core::Basis

mod assembled;
mod mass;
mod streaming;
mod subspace;
mod trie;
mod tuning;
mod updown;

pub use assembled::AssembledOperator;
pub use mass::{MassMatrix, density_rhs};
pub use streaming::StreamingOperator;
pub use subspace::{MISSING, SubspaceOperator};
pub use trie::TrieOperator;
pub use tuning::{STREAM_KERNEL, SUBSPACE_KERNEL, StreamTuning, SubspaceTuning};
pub use updown::UpDown;

use ndarray::ArrayView2;
use sg_core::reference::check_point_coords;
use sg_core::{AdaptiveGrid, SgError};

use crate::error::{Error, Result};

/// Checks a data set against a grid: same dimension, both non-empty, every row in `[0, 1]^d`.
fn check_operator_input(grid: &AdaptiveGrid, x: ArrayView2<'_, f64>) -> Result<()> {
    if grid.is_empty() {
        return Err(Error::Shape("the grid has no point".into()));
    }
    if x.nrows() == 0 {
        return Err(Error::Shape("the data set has no point".into()));
    }
    if x.ncols() != grid.dim() {
        return Err(
            SgError::LengthMismatch { what: "data columns", expected: grid.dim(), got: x.ncols() }.into()
        );
    }
    for (row, p) in x.rows().into_iter().enumerate() {
        match p.as_slice() {
            Some(s) => check_point_coords(grid.dim(), s, row)?,
            None => check_point_coords(grid.dim(), &p.to_vec(), row)?,
        }
    }
    Ok(())
}

/// Checks a vector length.
fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(SgError::LengthMismatch { what, expected, got }.into());
    }
    Ok(())
}
