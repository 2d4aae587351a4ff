//! Sparse grids stored as plain arrays.
//!
//! A regular or truncated sparse grid, with or without boundary points, is laid out as one dense
//! array through the `gp2idx` bijection between grid points and linear indices, computed from small
//! dynamic-programming tables instead of hash keys. This crate holds the grid description, the
//! bijection and the sequential reference algorithms (hierarchization, dehierarchization,
//! evaluation, spvm) that every optimised implementation in `sg-cpu` and `sg-cuda` is tested
//! against. See the book, part "Sparse grids".
//!
//! ```
//! use sg_core::{Grid, GridSpec};
//! let spec = GridSpec::regular(4, 5)?;
//! assert_eq!(spec.len(), 769);
//! let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
//! let mut g = Grid::from_fn(spec, f)?;
//! g.hierarchize();
//! let x = [0.3, 0.6, 0.5, 0.5];
//! assert!((g.evaluate(&x)? - f(&x)).abs() < 0.05);
//! # Ok::<(), sg_core::SgError>(())
//! ```
//!
//! Modules: [`spec`] (the grid description and the bijection), [`tables`] (the DP tables),
//! [`block`] (blocks and points in storage order), [`basis`] (hat functions, parents and
//! children), [`reference`](mod@reference) (the reference algorithms on value slices), [`grid`] and
//! [`vector`] (owned grids of scalars and of vectors).

pub mod alloc;
pub mod basis;
pub mod block;
mod boundary;
pub mod error;
pub mod grid;
pub mod real;
pub mod reference;
pub mod spec;
pub mod tables;
pub mod vector;

pub use basis::Side;
pub use block::{Block, BlockTable, GridPoint};
pub use error::{Result, SgError};
pub use grid::Grid;
pub use real::Real;
pub use spec::{GridSpec, MAX_DIM, MAX_LEVEL};
pub use tables::SubspaceTables;
pub use vector::VectorGrid;
