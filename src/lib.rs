//! **hetkit**: numerical building blocks for multi-core CPUs and NVIDIA GPUs together.
//!
//! This facade re-exports each of hetkit's crates under a short name:
//!
//! | module | crate | holds |
//! |---|---|---|
//! | [`sg`] | `sg-core` | sparse grids as plain arrays (gp2idx), reference algorithms |
//! | [`sg_cpu`] | `sg-cpu` | fast multi-core sparse grid kernels |
//! | [`sg_cuda`] | `sg-cuda` | sparse grid kernels on GPUs |
//! | [`prefix`] | `prefix-ops` | scans, tridiagonal solvers, sorting networks |
//! | [`wavefront`] | `wavefront` | 2D/3D wavefront computations across CPU and GPU |
//! | [`sched`] | `hetero-sched` | CPU+GPU work splitting and autotuning |
//! | [`cuda`] | `cuda-kernels` | the CUDA sources and the runtime that loads and launches them |

pub use cuda_kernels as cuda;
pub use hetero_sched as sched;
pub use prefix_ops as prefix;
pub use sg_core as sg;
pub use sg_cpu;
pub use sg_cuda;
pub use wavefront;
