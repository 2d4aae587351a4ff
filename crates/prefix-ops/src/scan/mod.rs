//! Scans (prefix sums under any associative operator): inclusive and exclusive, in place and out
//! of place, batched over rows, segmented by offsets or head flags, on the CPU and the GPU.
//!
//! For an operator ⊕ with identity `I` and input `a`:
//! inclusive `out[i] = a[0] ⊕ … ⊕ a[i]`, exclusive `out[i] = I ⊕ a[0] ⊕ … ⊕ a[i-1]`.
//!
//! ```
//! use prefix_ops::scan::{self, Add, Max};
//! let mut xs = [3, 1, 4, 1, 5];
//! scan::inclusive(&mut xs, Add);
//! assert_eq!(xs, [3, 4, 8, 9, 14]);
//!
//! let mut ys = [3, 1, 4, 1, 5];
//! scan::exclusive(&mut ys, Max);
//! assert_eq!(ys, [i32::MIN, 3, 3, 4, 4]);
//!
//! // Two rows of three, each scanned on its own.
//! let mut rows = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0];
//! scan::inclusive_rows(&mut rows, 3, Add)?;
//! assert_eq!(rows, [1.0, 3.0, 6.0, 10.0, 30.0, 60.0]);
//!
//! // Segments [0, 2), [2, 2) (empty) and [2, 5).
//! let mut zs = [1, 1, 1, 1, 1];
//! scan::inclusive_segments(&mut zs, &[0, 2, 2, 5], Add)?;
//! assert_eq!(zs, [1, 2, 1, 2, 3]);
//! # Ok::<(), prefix_ops::Error>(())
//! ```
//!
//! Rows and segments follow the crate's one convention ([`crate::segments`]): rows must divide
//! the data, offsets are `usize`, start at 0, never decrease and end at the data's length.
//! Two-dimensional arrays go through [`inclusive_rows_2d`] and [`exclusive_rows_2d`] (rows
//! along the last axis, any layout). A panicking operator propagates to the caller on every
//! path, the multi-threaded ones included.
//!
//! The CPU entry points here choose between the vectorised single-thread scan ([`single`]) and
//! the multi-threaded chained scan ([`parallel`]) by size ([`ScanTuning::par_threshold`], tuned
//! per machine through `hetero_sched::tune`, default [`parallel::PAR_THRESHOLD`]); [`reference`](mod@reference)
//! holds the plain sequential loops used as oracles. The GPU side is in [`gpu`]; [`emulate`]
//! reproduces the GPU's combination order on the CPU.

pub mod dispatch;
pub mod emulate;
pub mod gpu;
mod gpu_tuning;
mod op;
pub mod parallel;
pub mod reference;
mod rows;
mod segmented;
pub mod single;
mod tuning;

pub use op::{Add, BuiltinOp, Max, Min, Monoid, Mul, Segmented};
pub use tuning::{KERNEL as TUNING_KERNEL, ScanTuning};

use ndarray::ArrayViewMut2;

use crate::error::{Error, Result};
use crate::segments::check_offsets;

/// In-place inclusive scan: `xs[i] <- xs[0] ⊕ … ⊕ xs[i]`. Empty input is a no-op.
pub fn inclusive<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M) {
    let _span = tracing::debug_span!("scan::inclusive", n = xs.len()).entered();
    parallel::scan(xs, op, false);
}

/// In-place exclusive scan: `xs[i] <- I ⊕ xs[0] ⊕ … ⊕ xs[i-1]`. Empty input is a no-op.
pub fn exclusive<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M) {
    let _span = tracing::debug_span!("scan::exclusive", n = xs.len()).entered();
    parallel::scan(xs, op, true);
}

/// [`inclusive`] with explicit tuning parameters instead of the cached or default ones.
pub fn inclusive_with<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M, tuning: &ScanTuning) {
    parallel::scan_with(xs, op, false, tuning);
}

/// [`exclusive`] with explicit tuning parameters instead of the cached or default ones.
pub fn exclusive_with<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M, tuning: &ScanTuning) {
    parallel::scan_with(xs, op, true, tuning);
}

fn check_same_len(src: usize, dst: usize) -> Result<()> {
    if src != dst {
        return Err(Error::LengthMismatch { what: "dst", got: dst, expected: src });
    }
    Ok(())
}

fn check_heads(data: usize, heads: usize) -> Result<()> {
    if heads != data {
        return Err(Error::LengthMismatch { what: "heads", got: heads, expected: data });
    }
    Ok(())
}

/// Out-of-place inclusive scan of `src` into `dst` (same length, else [`Error::LengthMismatch`]).
/// Copies, then scans in place: one extra streaming pass over `dst`.
pub fn inclusive_into<T: Copy + Send + Sync, M: Monoid<T>>(src: &[T], dst: &mut [T], op: M) -> Result<()> {
    check_same_len(src.len(), dst.len())?;
    dst.copy_from_slice(src);
    inclusive(dst, op);
    Ok(())
}

/// Out-of-place exclusive scan of `src` into `dst` (same length, else [`Error::LengthMismatch`]).
pub fn exclusive_into<T: Copy + Send + Sync, M: Monoid<T>>(src: &[T], dst: &mut [T], op: M) -> Result<()> {
    check_same_len(src.len(), dst.len())?;
    dst.copy_from_slice(src);
    exclusive(dst, op);
    Ok(())
}

/// Batched inclusive scan: `data` holds rows of `row_len` one after another, each scanned on its
/// own. Rows follow the convention of [`crate::segments`]: `data.len()` must be a multiple of
/// `row_len` ([`Error::InvalidRows`]); `row_len == 0` only with empty data.
pub fn inclusive_rows<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    row_len: usize,
    op: M,
) -> Result<()> {
    let _span = tracing::debug_span!("scan::inclusive_rows", n = data.len(), row_len).entered();
    rows::scan_rows(data, row_len, op, false)
}

/// Batched exclusive scan (see [`inclusive_rows`]).
pub fn exclusive_rows<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    row_len: usize,
    op: M,
) -> Result<()> {
    let _span = tracing::debug_span!("scan::exclusive_rows", n = data.len(), row_len).entered();
    rows::scan_rows(data, row_len, op, true)
}

/// Batched inclusive scan of the rows of a 2-D array (rows along the last axis), each row on
/// its own, in place. Any layout: a row-major array is scanned where it lies, any other through
/// a row-major copy. Errors only when that copy cannot be allocated ([`Error::Alloc`]).
///
/// ```
/// use prefix_ops::ndarray::array;
/// use prefix_ops::scan::{self, Add};
/// let mut a = array![[1, 2, 3], [10, 20, 30]];
/// scan::inclusive_rows_2d(a.view_mut(), Add)?;
/// assert_eq!(a, array![[1, 3, 6], [10, 30, 60]]);
/// // Column-major works too: the rows are still the last axis.
/// let mut f = array![[1, 2, 3], [10, 20, 30]].reversed_axes().as_standard_layout().reversed_axes().to_owned();
/// scan::inclusive_rows_2d(f.view_mut(), Add)?;
/// assert_eq!(f, array![[1, 3, 6], [10, 30, 60]]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn inclusive_rows_2d<T: Copy + Send + Sync, M: Monoid<T>>(
    data: ArrayViewMut2<'_, T>,
    op: M,
) -> Result<()> {
    crate::nd::on_rows(data, |flat, row_len| rows::scan_rows(flat, row_len, op, false))
}

/// Batched exclusive scan of the rows of a 2-D array (see [`inclusive_rows_2d`]).
pub fn exclusive_rows_2d<T: Copy + Send + Sync, M: Monoid<T>>(
    data: ArrayViewMut2<'_, T>,
    op: M,
) -> Result<()> {
    crate::nd::on_rows(data, |flat, row_len| rows::scan_rows(flat, row_len, op, true))
}

/// Segmented inclusive scan with CSR offsets: segment `s` is `data[offsets[s]..offsets[s + 1]]`.
/// Offsets follow the convention of [`crate::segments`]: they start at 0, never decrease and
/// end at `data.len()` ([`Error::InvalidOffsets`]); empty segments are allowed; `[0]` is zero
/// segments of empty data.
pub fn inclusive_segments<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    offsets: &[usize],
    op: M,
) -> Result<()> {
    let _span =
        tracing::debug_span!("scan::inclusive_segments", n = data.len(), segments = offsets.len()).entered();
    check_offsets(data.len(), offsets)?;
    segmented::scan_offsets(data, offsets, op, false);
    Ok(())
}

/// Segmented exclusive scan with CSR offsets (see [`inclusive_segments`]): each segment starts
/// from the identity.
pub fn exclusive_segments<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    offsets: &[usize],
    op: M,
) -> Result<()> {
    let _span =
        tracing::debug_span!("scan::exclusive_segments", n = data.len(), segments = offsets.len()).entered();
    check_offsets(data.len(), offsets)?;
    segmented::scan_offsets(data, offsets, op, true);
    Ok(())
}

/// Segmented inclusive scan with head flags: the scan restarts at every `i` with `heads[i]`
/// (and at 0). `heads.len()` must equal `data.len()` ([`Error::LengthMismatch`]).
pub fn inclusive_flagged<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    heads: &[bool],
    op: M,
) -> Result<()> {
    check_heads(data.len(), heads.len())?;
    segmented::scan_flags(data, heads, op, false);
    Ok(())
}

/// Segmented exclusive scan with head flags (see [`inclusive_flagged`]): a head gets the identity.
pub fn exclusive_flagged<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    heads: &[bool],
    op: M,
) -> Result<()> {
    check_heads(data.len(), heads.len())?;
    segmented::scan_flags(data, heads, op, true);
    Ok(())
}
