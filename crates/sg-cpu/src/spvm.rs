//! The sparse vector-matrix product `y = Σ_i x[i] · a[ix[i], ..]` (thesis Listing 3.8): the
//! evaluation of a grid of vectors at one point, where `ix` lists one grid point per block and `x`
//! holds the basis products.
//!
//! The matrix is stored with padded rows ([`PaddedMatrix`]) so every row starts on a 64-byte
//! boundary and the column loops vectorise without peeling. Two parallel variants (sopt1, sopt2):
//!
//! | variant | parallel over | picked when |
//! |---|---|---|
//! | `Columns` | tiles of columns of `y` (each tile reads its slice of every selected row) | `p >= 2048 · threads` |
//! | `Rows` | chunks of the selected rows, private `y` each, reduced in a fixed order | otherwise |

use rayon::prelude::*;
use sg_core::{Real, SgError};

use crate::error::Result;
use sg_core::alloc::try_vec;

/// Bytes every row start is aligned to.
const ALIGN: usize = 64;

/// A dense row-major matrix whose rows start on 64-byte boundaries.
#[derive(Debug, Clone, PartialEq)]
pub struct PaddedMatrix<T> {
    rows: usize,
    cols: usize,
    stride: usize,
    start: usize,
    data: Vec<T>,
}

impl<T: Real> PaddedMatrix<T> {
    /// Copies a row-major `rows x cols` matrix into padded storage.
    ///
    /// # Errors
    /// [`SgError::Zero`] for `cols == 0`, [`SgError::NotMultiple`] when `a.len()` is not a
    /// multiple of `cols`, [`SgError::Allocation`] when the padded copy does not fit in memory.
    pub fn from_row_major(a: &[T], cols: usize) -> Result<Self> {
        if cols == 0 {
            return Err(SgError::Zero { what: "matrix columns (p)" }.into());
        }
        if !a.len().is_multiple_of(cols) {
            return Err(SgError::NotMultiple { what: "row-major matrix", len: a.len(), row: cols }.into());
        }
        let rows = a.len() / cols;
        let lanes = (ALIGN / size_of::<T>()).max(1);
        let what = "padded matrix";
        let too_big = || SgError::Allocation { what, bytes: u128::MAX };
        let stride = cols.checked_next_multiple_of(lanes).ok_or_else(too_big)?;
        let len = rows.checked_mul(stride).and_then(|n| n.checked_add(lanes)).ok_or_else(too_big)?;
        let mut data = try_vec(what, len, T::zero())?;
        // Vec only aligns to T: skip to the first 64-byte boundary.
        let start = data.as_ptr().align_offset(ALIGN).min(lanes - 1);
        for (r, row) in a.chunks(cols).enumerate() {
            data[start + r * stride..][..cols].copy_from_slice(row);
        }
        Ok(PaddedMatrix { rows, cols, stride, start, data })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns (`p`).
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `r` (without its padding).
    ///
    /// # Errors
    /// [`SgError::IndexOutOfRange`] when `r >= rows()`.
    pub fn row(&self, r: usize) -> Result<&[T]> {
        if r >= self.rows {
            return Err(SgError::IndexOutOfRange {
                what: "matrix row",
                idx: r as u64,
                len: self.rows as u64,
            }
            .into());
        }
        Ok(self.row_unchecked(r))
    }

    /// Row `r < rows()`, for loops that checked their indices once.
    #[inline]
    fn row_unchecked(&self, r: usize) -> &[T] {
        &self.data[self.start + r * self.stride..][..self.cols]
    }
}

/// The spvm variants; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpvmVariant {
    /// Parallel over column tiles of the given width.
    Columns {
        /// Columns per tile (the thesis's `bs`; a multiple of 8192 bytes worked best there).
        tile: usize,
    },
    /// Parallel over chunks of selected rows, with a reduction.
    Rows,
}

impl SpvmVariant {
    /// The variant [`spvm`] uses for `p` columns.
    pub fn choose(p: usize) -> Self {
        let threads = rayon::current_num_threads();
        if p >= 2048 * threads {
            SpvmVariant::Columns { tile: p.div_ceil(4 * threads).max(1024) }
        } else {
            SpvmVariant::Rows
        }
    }
}

/// `y = Σ_i x[i] · a.row(ix[i])`, choosing the variant by [`SpvmVariant::choose`].
///
/// ```
/// use sg_cpu::{spvm::spvm, PaddedMatrix};
/// let a = PaddedMatrix::from_row_major(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2)?;
/// assert_eq!(spvm(&[2.0, 1.0], &[0, 2], &a)?, vec![7.0, 10.0]);
/// # Ok::<(), sg_cpu::Error>(())
/// ```
pub fn spvm<T: Real>(x: &[T], ix: &[usize], a: &PaddedMatrix<T>) -> Result<Vec<T>> {
    spvm_with(SpvmVariant::choose(a.cols()), x, ix, a)
}

/// `y = Σ_i x[i] · a.row(ix[i])` with a given variant.
///
/// # Errors
/// [`SgError::LengthMismatch`] for `x.len() != ix.len()`, [`SgError::IndexOutOfRange`] for a
/// row index `>= a.rows()`, [`SgError::Allocation`] when `y` or the partial sums do not fit.
pub fn spvm_with<T: Real>(
    variant: SpvmVariant,
    x: &[T],
    ix: &[usize],
    a: &PaddedMatrix<T>,
) -> Result<Vec<T>> {
    if x.len() != ix.len() {
        return Err(SgError::LengthMismatch {
            what: "spvm row indices (one per entry of x)",
            expected: x.len(),
            got: ix.len(),
        }
        .into());
    }
    if let Some(&r) = ix.iter().find(|&&r| r >= a.rows()) {
        return Err(SgError::IndexOutOfRange {
            what: "spvm matrix row",
            idx: r as u64,
            len: a.rows() as u64,
        }
        .into());
    }
    let p = a.cols();
    let mut y = try_vec("spvm result", p, T::zero())?;
    match variant {
        SpvmVariant::Columns { tile } => {
            let tile = tile.max(1);
            y.par_chunks_mut(tile).enumerate().for_each(|(c, y)| {
                let c0 = c * tile;
                for (&xi, &r) in x.iter().zip(ix) {
                    axpy(xi, &a.row_unchecked(r)[c0..c0 + y.len()], y);
                }
            });
        }
        SpvmVariant::Rows => {
            let chunk = x.len().div_ceil(rayon::current_num_threads()).max(16);
            // One private y per chunk of rows, all reserved at once before any work.
            let chunks = x.len().div_ceil(chunk);
            let n = chunks
                .checked_mul(p)
                .ok_or(SgError::Allocation { what: "spvm partial sums", bytes: u128::MAX })?;
            let mut partials = try_vec("spvm partial sums", n, T::zero())?;
            partials.par_chunks_mut(p).zip(x.par_chunks(chunk).zip(ix.par_chunks(chunk))).for_each(
                |(part, (xs, rs))| {
                    for (&xi, &r) in xs.iter().zip(rs) {
                        axpy(xi, a.row_unchecked(r), part);
                    }
                },
            );
            for part in partials.chunks_exact(p) {
                axpy(T::one(), part, &mut y);
            }
        }
    }
    Ok(y)
}

#[inline]
fn axpy<T: Real>(a: T, x: &[T], y: &mut [T]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}
