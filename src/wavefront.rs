//! 2D/3D wavefront computations: a table (box) whose cells depend on their north, west and
//! north-west (top) neighbours, swept by the sequential reference, tiled, or on all cores as
//! tiles driven by dependency counters; and the applications built on it (see the book, part
//! "Wavefronts").
//!
//! ```
//! use hetkit::wavefront::{Boundary2, Config2, run_2d};
//! // Edit distance of two words: the classic wavefront.
//! let (a, b) = (b"kitten", b"sitting");
//! let boundary = Boundary2 {
//!     north: (1..=b.len() as u32).collect(),
//!     west: (1..=a.len() as u32).collect(),
//!     corner: 0,
//! };
//! let t = run_2d(a.len(), b.len(), &boundary, &Config2::cpu(4), |i, j, n, w, nw| {
//!     (nw + u32::from(a[i] != b[j])).min(n + 1).min(w + 1)
//! })?;
//! assert_eq!(t[[5, 6]], 3);
//! # Ok::<(), hetkit::Error>(())
//! ```

use crate::Result;
use ndarray::{Array2, Array3};

pub use wavefront::{
    Boundary2, Boundary3, Config2, Config3, Executor, GpuKernel2, WavefrontError, geom, run_2d_gpu,
};

/// Autotuning the executors: the search driver, features, learners and the per-machine model
/// behind `Config2::auto` / `Config3::auto` (the book's chapter "Tuning wavefronts").
pub use wavefront::tune;

/// Computes a `rows x cols` table, cell `(i, j)` = `kernel(i, j, &north, &west, &north_west)`
/// of `(i-1, j)`, `(i, j-1)`, `(i-1, j-1)`, neighbours outside from `boundary`; the same table
/// under every `config`.
///
/// # Errors
/// [`crate::Error::Wavefront`] for an empty table, wrong boundary lengths, invalid parameters
/// (tile 0, ...), a table too large, a GPU band for a kernel without a GPU form;
/// [`crate::Error::Cuda`] for a GPU band on a machine without a GPU.
pub fn run_2d<T, K>(
    rows: usize,
    cols: usize,
    boundary: &Boundary2<T>,
    config: &Config2,
    kernel: K,
) -> Result<Array2<T>>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
{
    Ok(wavefront::run_2d(rows, cols, boundary, config, kernel)?)
}

/// Computes an `n0 x n1 x n2` box, cell `(i, j, k)` = `kernel(i, j, k, &north, &west, &top)` of
/// `(i-1, j, k)`, `(i, j-1, k)`, `(i, j, k-1)`.
///
/// # Errors
/// As [`run_2d`].
pub fn run_3d<T, K>(
    n0: usize,
    n1: usize,
    n2: usize,
    boundary: &Boundary3<T>,
    config: &Config3,
    kernel: K,
) -> Result<Array3<T>>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, usize, &T, &T, &T) -> T + Sync,
{
    Ok(wavefront::run_3d(n0, n1, n2, boundary, config, kernel)?)
}

/// The applications: sequence comparison (fast paths on all cores), the thesis's synthetic
/// kernels, a Nash-like kernel and an LU/SOR-like 3D sweep.
pub mod apps {
    use crate::Result;

    pub use wavefront::apps::{Alignment, Scoring, lcs_length, lt, nash, synthetic};

    /// Local alignment score and end of `a` against `b` (Smith-Waterman, affine gaps where a gap
    /// of length `k` costs `open + (k - 1) * extend`), on all cores with 16-bit SIMD lanes.
    ///
    /// # Errors
    /// A letter outside the scoring matrix, invalid penalties, sequences too long.
    pub fn smith_waterman(a: &[u8], b: &[u8], scoring: &Scoring) -> Result<Alignment> {
        Ok(wavefront::apps::smith_waterman(a, b, scoring)?)
    }

    /// Global alignment score (Needleman-Wunsch, affine gaps, end gaps penalised).
    ///
    /// # Errors
    /// As [`smith_waterman`].
    pub fn needleman_wunsch(a: &[u8], b: &[u8], scoring: &Scoring) -> Result<i32> {
        Ok(wavefront::apps::needleman_wunsch(a, b, scoring)?)
    }

    /// [`smith_waterman`] through the generic executor chosen by `config` (whole table kept).
    ///
    /// # Errors
    /// As [`smith_waterman`] and [`super::run_2d`].
    pub fn smith_waterman_with(
        a: &[u8],
        b: &[u8],
        scoring: &Scoring,
        config: &super::Config2,
    ) -> Result<Alignment> {
        Ok(wavefront::apps::smith_waterman_with(a, b, scoring, config)?)
    }

    /// [`lcs_length`] through the generic executor chosen by `config` (whole table kept).
    ///
    /// # Errors
    /// As [`super::run_2d`].
    pub fn lcs_length_with(a: &[u8], b: &[u8], config: &super::Config2) -> Result<usize> {
        Ok(wavefront::apps::lcs_length_with(a, b, config)?)
    }
}
