//! Parallel prefix operations on CPUs and GPUs: batched, segmented and single-pass scans;
//! batched tridiagonal solvers (Thomas, CR, PCR, RR, Wang & Mou, TPR); bitonic merge comb sort.
//! See the book, part "Prefix operations".

mod alloc;
mod error;
mod nd;
pub mod scan;
pub mod segments;
mod shared_mut;
pub mod sort;
pub mod tridiagonal;

pub use error::{Error, Result};
/// The `ndarray` version the two-dimensional entry points take (`ArrayView2`, `ArrayViewMut2`).
pub use ndarray;

/// The rust blocks of the book's prefix chapters, run as doctests by `cargo test` so that they
/// stay true (`mdbook test` runs the same blocks).
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../../../docs/src/prefix/scan.md")]
    struct Scan;
    #[doc = include_str!("../../../docs/src/prefix/tridiagonal.md")]
    struct Tridiagonal;
    #[doc = include_str!("../../../docs/src/prefix/sort.md")]
    struct Sort;
    #[doc = include_str!("../../../docs/src/prefix/reliability.md")]
    struct Reliability;
}
