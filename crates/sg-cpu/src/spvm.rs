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

use crate::error::{Error, Result};

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
    pub fn from_row_major(a: &[T], cols: usize) -> Result<Self> {
        if cols == 0 || !a.len().is_multiple_of(cols) {
            return Err(Error::Shape(format!("{} values are not rows of {cols} columns", a.len())));
        }
        let rows = a.len() / cols;
        let lanes = (ALIGN / size_of::<T>()).max(1);
        let stride = cols.next_multiple_of(lanes);
        let mut data = vec![T::zero(); rows * stride + lanes];
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
    #[inline]
    pub fn row(&self, r: usize) -> &[T] {
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
pub fn spvm_with<T: Real>(
    variant: SpvmVariant,
    x: &[T],
    ix: &[usize],
    a: &PaddedMatrix<T>,
) -> Result<Vec<T>> {
    if x.len() != ix.len() {
        return Err(
            SgError::LengthMismatch { what: "spvm row indices", expected: x.len(), got: ix.len() }.into()
        );
    }
    if let Some(&r) = ix.iter().find(|&&r| r >= a.rows()) {
        return Err(SgError::IndexOutOfRange { idx: r as u64, len: a.rows() as u64 }.into());
    }
    let p = a.cols();
    let mut y = vec![T::zero(); p];
    match variant {
        SpvmVariant::Columns { tile } => {
            let tile = tile.max(1);
            y.par_chunks_mut(tile).enumerate().for_each(|(c, y)| {
                let c0 = c * tile;
                for (&xi, &r) in x.iter().zip(ix) {
                    axpy(xi, &a.row(r)[c0..c0 + y.len()], y);
                }
            });
        }
        SpvmVariant::Rows => {
            let chunk = x.len().div_ceil(rayon::current_num_threads()).max(16);
            let partials: Vec<Vec<T>> = x
                .par_chunks(chunk)
                .zip(ix.par_chunks(chunk))
                .map(|(xs, rs)| {
                    let mut y = vec![T::zero(); p];
                    for (&xi, &r) in xs.iter().zip(rs) {
                        axpy(xi, a.row(r), &mut y);
                    }
                    y
                })
                .collect();
            for part in &partials {
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
