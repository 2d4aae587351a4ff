//! The wavefront pattern in 2D and 3D: cells that depend on their upper and left neighbours,
//! computed along anti-diagonals (planes) and split between CPU cores and GPUs. See the book,
//! part "Wavefronts".
//!
//! - [`run_2d`] and [`run_3d`] sweep a user kernel (a Rust closure) over a table with the
//!   executor a [`Config2`] / [`Config3`] names: the sequential reference, tiled sequential,
//!   or tiles as rayon tasks driven by dependency counters. Every executor gives the same table.
//! - [`run_2d_gpu`] adds the GPU: a kernel with a GPU form ([`GpuKernel2`], a CUDA C device
//!   function compiled by NVRTC) runs the thesis's three phases under `Config2::hybrid`.
//! - [`geom`] holds the geometry: diagonals and planes, their lengths, offsets and bands.
//! - [`apps`] holds the applications: the thesis's synthetic kernels (with integer oracles), a
//!   Nash-like coarse kernel, an LU/SOR-like 3D sweep, and sequence comparison (LCS,
//!   Smith-Waterman and Needleman-Wunsch with affine gaps) with SIMD fast paths.
//! - [`tune`] searches configurations, learns to predict them, and backs [`Config2::auto`].
//!
//! ```
//! use wavefront::{Boundary2, Config2, run_2d};
//! // Cell (i, j) = i + j: the longest path from the corner, checks the dependency order.
//! let t = run_2d(3, 7, &Boundary2::constant(-1i64), &Config2::cpu(2), |_, _, n, w, _| *n.max(w) + 1)?;
//! assert_eq!(t[[2, 6]], 8);
//! # Ok::<(), wavefront::WavefrontError>(())
//! ```

pub mod apps;
mod boundary;
mod config;
mod dataflow;
mod error;
pub mod geom;
mod gpu;
mod gpu_check;
mod sweep2;
mod sweep3;
pub mod tune;

pub use boundary::{Boundary2, Boundary3};
pub use config::{Config2, Config3, Executor};
pub use error::{Result, WavefrontError};
pub use gpu::{GpuKernel2, run_2d_gpu};
pub use sweep2::run_2d;
pub use sweep3::run_3d;
