//! Sparse grids stored as plain arrays.
//!
//! A regular or truncated sparse grid, with or without boundary points, is laid out as one dense
//! array through the `gp2idx` bijection between grid points and linear indices, computed from small
//! dynamic-programming tables instead of hash keys. This crate holds the grid description, the
//! bijection and the sequential reference algorithms (hierarchization, dehierarchization,
//! evaluation, spvm) that every optimised implementation in `sg-cpu` and `sg-cuda` is tested
//! against. See the book, part "Sparse grids".
