//! Applications of the wavefront skeleton, each with its cell kernel (for [`crate::run_2d`] /
//! [`crate::run_3d`] and every executor) and, for sequence comparison, a fast path.
//!
//! | application | kernel | grain |
//! |---|---|---|
//! | [`synthetic`] | Gauss-Seidel-like update over N/W/NW repeated `tsize` times, `dsize` doubles | tunable |
//! | [`synthetic`] (integer) | max-plus cell of `u32` (`dsize` 0) matching by a hash tested `rounds` times | tunable, fine |
//! | [`nash`] | Nash-like: smoothed fictitious play on a 2x2 game perturbed by the neighbours | coarse |
//! | [`lcs_length`] | longest common subsequence (bit-parallel fast path) | very fine |
//! | [`smith_waterman`] | local alignment, affine gaps, score and end (8/16-bit SIMD fast path) | very fine |
//! | [`needleman_wunsch`] | global alignment score, affine gaps, end gaps penalised | very fine |
//! | [`synthetic`] (3D) | the synthetic kernel over N/W/top | tunable |
//! | [`lt`] | LU/SOR-like lower-triangular 3D sweep with 5x5 blocks | medium |

mod align;
mod lcs;
pub mod lt;
pub mod nash;
mod scoring;
mod strips;
mod sw_simd;
pub mod synthetic;

pub use align::{Alignment, needleman_wunsch, needleman_wunsch_with, smith_waterman, smith_waterman_with};
pub use lcs::{lcs_length, lcs_length_gpu, lcs_length_with};
pub use scoring::Scoring;
