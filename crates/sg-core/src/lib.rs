//! Sparse grids stored as plain arrays.
//!
//! **Boundary conditions first.** [`GridSpec::regular`] and [`GridSpec::truncated`] grids have
//! no points on the boundary of `[0, 1]^d`: their interpolants are **zero on the boundary**, which
//! suits functions that vanish there and nothing else. For any other function take the boundary
//! grid, [`GridSpec::with_boundary`], which adds the points with a coordinate 0 or 1 (more points:
//! 7681 instead of 769 below). The first function most users try, `exp(-|x − 0.5|²)`, shows the
//! difference (relative L2 error on 1000 points, measured by this example):
//!
//! ```
//! use sg_core::{Grid, GridSpec};
//! let f = |x: &[f64]| (-x.iter().map(|&v| (v - 0.5) * (v - 0.5)).sum::<f64>()).exp();
//! let pts = ndarray::Array2::from_shape_fn((1000, 4), |(i, t)| ((i * (2 * t + 3) * 37) % 1000) as f64 / 999.0);
//!
//! let mut zero = Grid::from_fn(GridSpec::regular(4, 5)?, f)?;                    // 769 points
//! let mut bound = Grid::from_fn(GridSpec::regular(4, 5)?.with_boundary()?, f)?;  // 7681 points
//! zero.hierarchize();
//! bound.hierarchize();
//! let (e_zero, e_bound) = (zero.error(pts.view(), f)?, bound.error(pts.view(), f)?);
//! assert!(e_zero > 0.3);    // 0.40: the interpolant is 0 where f is 0.37
//! assert!(e_bound < 2e-3);  // 9.3e-4
//! assert_eq!(zero.evaluate(&[0.0; 4])?, 0.0);
//! assert!((bound.evaluate(&[0.0; 4])? - f(&[0.0; 4])).abs() < 1e-12);
//! # Ok::<(), sg_core::SgError>(())
//! ```
//!
//! A regular or truncated sparse grid, with or without boundary points, is laid out as one dense
//! array through the `gp2idx` bijection between grid points and linear indices, computed from small
//! dynamic-programming tables instead of hash keys. This crate holds the grid description, the
//! bijection and the sequential reference algorithms (hierarchization, dehierarchization,
//! evaluation, spvm) that every optimised implementation in `sg-cpu` and `sg-cuda` is tested
//! against: they are the oracles, not the fast path (`sg-cpu` is 6–40 times faster). See the
//! book, part "Sparse grids".
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
//! let points = g.points()?; // the grid's points as a 769 × 4 array
//! assert_eq!(points.dim(), (769, 4));
//! # Ok::<(), sg_core::SgError>(())
//! ```
//!
//! Sizes: every function that allocates from a size the caller chose (the point count of a grid,
//! `s` values per point, `m` evaluation points) computes the byte count first and allocates
//! fallibly, so a grid too large for memory is [`SgError::Allocation`] or
//! [`SgError::TooManyPoints`], not an abort (see [`alloc`]).
//!
//! Modules: [`spec`] (the grid description and the bijection), [`alloc`] (fallible buffers), [`tables`] (the DP tables),
//! [`block`] (blocks and points in storage order), [`basis`] (hat functions, parents and
//! children), [`reference`](mod@reference) (the reference algorithms on value slices), [`grid`] and
//! [`vector`] (owned grids of scalars and of vectors).

pub mod adaptive;
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

pub use adaptive::AdaptiveGrid;
pub use basis::{Basis, Side};
pub use block::{Block, BlockTable, GridPoint};
pub use error::{Result, SgError};
pub use grid::Grid;
pub use real::Real;
pub use spec::{GridSpec, MAX_DIM, MAX_LEVEL};
pub use tables::SubspaceTables;
pub use vector::VectorGrid;
