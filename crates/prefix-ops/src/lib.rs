//! Parallel prefix operations on CPUs and GPUs: batched, segmented and single-pass scans;
//! batched tridiagonal solvers (Thomas, CR, PCR, RR, Wang & Mou, TPR); bitonic merge comb sort.
//! See the book, part "Prefix operations".

mod alloc;
mod error;
mod nd;
pub mod scan;
pub mod segmented;
pub mod segments;
mod shared_mut;
pub mod sort;
pub mod split;
pub mod tridiagonal;

pub use error::{Error, Result};
/// The `ndarray` version the two-dimensional entry points take (`ArrayView2`, `ArrayViewMut2`).
pub use ndarray;
