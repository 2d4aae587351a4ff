//! **hetkit**: numerical building blocks for multi-core CPUs and NVIDIA GPUs together.
//!
//! The facade is what users meet: under the obvious names are the fast paths (all cores, or a
//! GPU when the caller asks for one), every fallible call returns [`Result`] with the one
//! [`Error`] type, and generic numeric code needs the one bound [`Real`] (`f32` or `f64`).
//!
//! | module | holds |
//! |---|---|
//! | [`sg`] | sparse grids as plain arrays (gp2idx): [`sg::Grid`] hierarchizes and evaluates on all cores; [`sg::gpu`] on GPUs; [`sg::reference`] the sequential oracles |
//! | [`scan`] | batched, segmented and single-pass scans |
//! | [`tridiagonal`] | batched tridiagonal solvers |
//! | [`sort`] | sorts of whole arrays, rows and segments |
//! | [`wavefront`] | 2D/3D wavefront computations across CPU and GPU |
//! | [`stencil`] | 3D Jacobi stencils from a formula to tuned CPU and GPU kernels, split across devices |
//! | [`sched`] | CPU+GPU work splitting and autotuning |
//! | [`stream`] | pipelines of stages joined by elastic, typed channels |
//! | [`cuda`] | the CUDA sources and the runtime that loads and launches them |
//!
//! [`prefix`] is the whole prefix-operations crate (`scan`, `tridiagonal` and `sort` are its
//! modules), and [`ndarray`] the version of ndarray the APIs take and return.
//!
//! ```
//! use hetkit::sg::{Grid, GridSpec};
//! use hetkit::scan::{self, Add};
//!
//! // A sparse grid with boundary points: regular grids alone are zero on the boundary.
//! let f = |x: &[f64]| x[0] * x[0] + x[1];
//! let mut grid = Grid::from_fn(GridSpec::regular(2, 7)?.with_boundary()?, f)?;
//! grid.hierarchize()?;
//! assert!((grid.evaluate(&[0.3, 1.0])? - f(&[0.3, 1.0])).abs() < 1e-3);
//!
//! let mut xs = vec![1u32; 1000];
//! scan::inclusive(&mut xs, Add);
//! assert_eq!(xs[999], 1000);
//! # Ok::<(), hetkit::Error>(())
//! ```

mod error;
mod real;
pub mod sg;
pub mod sg_learn;
pub mod stencil;
pub mod stream;
pub mod wavefront;

pub use error::{Error, Result};
pub use real::Real;

pub use cuda_kernels as cuda;
pub use hetero_sched as sched;
pub use ndarray;
pub use prefix_ops as prefix;
pub use prefix_ops::{scan, sort, tridiagonal};

/// The book's code blocks, compiled and run as doctests so its examples stay true.
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../docs/src/introduction.md")]
    mod introduction {}
    #[doc = include_str!("../docs/src/architecture.md")]
    mod architecture {}
    #[doc = include_str!("../docs/src/testing.md")]
    mod testing {}
    #[doc = include_str!("../docs/src/reliability.md")]
    mod reliability {}
    #[doc = include_str!("../docs/src/sg/reliability.md")]
    mod sg_reliability {}
    #[doc = include_str!("../docs/src/sched/splitting.md")]
    mod sched_splitting {}
    #[doc = include_str!("../docs/src/sched/tuning.md")]
    mod sched_tuning {}
    #[doc = include_str!("../docs/src/sg/core.md")]
    mod sg_core {}
    #[doc = include_str!("../docs/src/sg/cpu.md")]
    mod sg_cpu {}
    #[doc = include_str!("../docs/src/sg/cuda.md")]
    mod sg_cuda {}
    #[doc = include_str!("../docs/src/learn/gpu.md")]
    mod learn_gpu {}
    #[doc = include_str!("../docs/src/prefix/scan.md")]
    mod scan {}
    #[doc = include_str!("../docs/src/prefix/tridiagonal.md")]
    mod tridiagonal {}
    #[doc = include_str!("../docs/src/prefix/sort.md")]
    mod sort {}
    #[doc = include_str!("../docs/src/prefix/segmented.md")]
    mod segmented {}
    #[doc = include_str!("../docs/src/prefix/reliability.md")]
    mod prefix_reliability {}
    #[doc = include_str!("../docs/src/cuda/index.md")]
    mod cuda {}
    #[doc = include_str!("../docs/src/sched/index.md")]
    mod sched {}
    #[doc = include_str!("../docs/src/wavefront/index.md")]
    mod wavefront {}
    #[doc = include_str!("../docs/src/stream/index.md")]
    mod stream {}
    #[doc = include_str!("../docs/src/stencil/index.md")]
    mod stencil_chapter {}
    #[doc = include_str!("../docs/src/learn/index.md")]
    mod learn {}
    #[doc = include_str!("../docs/src/wavefront/kernels.md")]
    mod wavefront_kernels {}
    #[doc = include_str!("../docs/src/wavefront/apps.md")]
    mod wavefront_apps {}
}
