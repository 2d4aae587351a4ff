//! Parallel prefix operations on CPUs and GPUs: batched, segmented and single-pass scans;
//! batched tridiagonal solvers (Thomas, CR, PCR, RR, Wang & Mou, TPR); bitonic merge comb sort.
//! See the book, part "Prefix operations".

mod error;
pub mod scan;
mod shared_mut;
pub mod sort;
pub mod tridiagonal;

pub use error::{Error, Result};
