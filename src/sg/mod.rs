//! Sparse grids: the fast paths under the obvious names.
//!
//! **Regular grids are zero on the boundary.** [`GridSpec::regular`] holds interior points only,
//! so its interpolant vanishes on the faces of `[0, 1]^d`: right for functions that do, wrong by
//! the boundary values for the rest. `GridSpec::regular(d, n)?.with_boundary()?` adds the boundary
//! points; use it whenever `f` is not zero on the boundary.
//!
//! [`Grid`] and [`VectorGrid`] run the multi-core kernels of `sg-cpu` (plans built once per grid
//! and shared by its clones); [`Grid::to_device`] puts a grid on a GPU for the CUDA kernels. The
//! sequential reference algorithms every fast path is tested against stay reachable in
//! [`reference`](mod@reference).
//!
//! ```
//! use hetkit::sg::{Grid, GridSpec};
//! let f = |x: &[f64]| (-x.iter().map(|v| (v - 0.5) * (v - 0.5)).sum::<f64>()).exp();
//! let spec = GridSpec::regular(3, 8)?.with_boundary()?;
//! let mut grid = Grid::from_fn(spec, f)?;
//! grid.hierarchize()?;
//! let points = hetkit::ndarray::array![[0.1, 0.2, 0.3], [0.9, 0.5, 0.0]];
//! let values = grid.evaluate_batch(points.view())?;
//! assert!((values[1] - f(&[0.9, 0.5, 0.0])).abs() < 1e-3);
//! # Ok::<(), hetkit::Error>(())
//! ```

mod grid;
mod vector;

pub use grid::Grid;
pub use vector::VectorGrid;

pub use sg_core::{
    Block, BlockTable, GridPoint, GridSpec, MAX_DIM, MAX_LEVEL, SgError, Side, SubspaceTables, basis, block,
    spec, tables,
};
pub use sg_cpu::{PaddedMatrix, PointPattern};

/// The multi-core kernels and their plans, for callers who manage plans or pick variants
/// themselves (benchmarks, repeated calls on many grids of one shape).
pub mod cpu {
    pub use sg_cpu::*;
}

/// The GPU kernels: device-resident grids, evaluation, hierarchization, spvm, and the split of
/// evaluation between CPU and GPU.
pub mod gpu {
    pub use sg_cuda::*;
}

/// The sequential reference algorithms (the oracles of every fast path): `reference::Grid` is the
/// plain grid whose methods run them.
pub mod reference {
    pub use sg_core::Grid;
    pub use sg_core::VectorGrid;
    pub use sg_core::reference::*;
}

/// The sparse vector-matrix product `y = Σ_k x[k] · A[ix[k], :]` on all cores: `p = a.cols()`
/// outputs, one per column of the padded matrix.
///
/// ```
/// use hetkit::sg::{PaddedMatrix, spvm};
/// let a = PaddedMatrix::from_row_major(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2)?; // 3 x 2
/// let y = spvm(&[10.0, 1.0], &[2, 0], &a)?;                                  // 10·row 2 + row 0
/// assert_eq!(y.to_vec(), vec![51.0, 62.0]);
/// # Ok::<(), hetkit::Error>(())
/// ```
///
/// # Errors
/// Lengths that do not match, an index past the matrix's rows.
pub fn spvm<T: crate::Real>(x: &[T], ix: &[usize], a: &PaddedMatrix<T>) -> crate::Result<ndarray::Array1<T>> {
    Ok(ndarray::Array1::from_vec(sg_cpu::spvm::spvm(x, ix, a)?))
}
