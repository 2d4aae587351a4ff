//! Applications written on the segmented catalogue: the thesis's flattened algorithms.
//!
//! - [`quicksort`]: CuNesl's recursion-free quicksort, a `while` loop of segmented `reduce`
//!   (Min, Max) and [`split3`](super::split3) rounds.
//! - [`bitonic_sort`]: Batcher's bitonic sort in the NESL formulation, bottom-up, on regular
//!   segments of power-of-two lengths.
//! - [`Csr`]: a CSR sparse matrix whose product with a vector is a segmented reduction of the
//!   row products, the granularity chosen by row length (HiDP §6.4.3); COO input is converted.

mod bitonic;
mod quicksort;
mod spmv;

pub use bitonic::{bitonic_sort, bitonic_sort_by_key};
pub use quicksort::{Midpoint, QuicksortReport, quicksort, quicksort_with};
pub use spmv::{Csr, SpmvScalar};
