//! Sparse grid operations on NVIDIA GPUs: device-resident grids, hierarchization, batched
//! evaluation and spvm kernels, and the split of evaluation between CPU and GPU. See the book, part
//! "Sparse grids on GPUs".

pub mod emulate;
mod error;
pub mod tables;

pub use error::{Error, Result};
