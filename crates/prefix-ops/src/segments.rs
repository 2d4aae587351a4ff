//! The one convention for batched data that the scans and the sorts share, on the CPU and the
//! GPU, and the functions that check it. Every entry point of [`scan`](crate::scan) and
//! [`sort`](crate::sort) (and their `gpu` modules) that takes rows or offsets validates them
//! with [`check_rows`] or [`check_offsets`], before touching the data: a rejected call leaves
//! the data as it was.
//!
//! **Rows.** `data` holds rows of `row_len` elements one after another: row `r` is
//! `data[r * row_len..(r + 1) * row_len]`. `data.len()` must be a whole multiple of `row_len`.
//! `row_len == 0` is allowed only for empty data (zero rows); empty data is zero rows whatever
//! `row_len` is. Two-dimensional arrays (`ndarray`) are rows along the last axis.
//!
//! **Segments.** Offsets are CSR row pointers, `usize` on every API (the GPU code converts them
//! when it uploads them): `offsets` has one entry more than there are segments, and segment `s`
//! is `data[offsets[s]..offsets[s + 1]]`. They must start at 0, never decrease and end at
//! `data.len()`, so every element belongs to exactly one segment. Empty segments are allowed
//! anywhere. `[0]` describes zero segments (of empty data); `[]` is always an error, because it
//! does not say where the data ends. [`offsets_from_lengths`] builds valid offsets from
//! segment lengths.
//!
//! ```
//! use prefix_ops::segments::{check_offsets, check_rows, offsets_from_lengths};
//! assert_eq!(check_rows(12, 4)?, 3);
//! assert_eq!(check_rows(0, 0)?, 0);
//! assert!(check_rows(5, 10).is_err());
//!
//! let offsets = offsets_from_lengths(&[2, 0, 3])?;
//! assert_eq!(offsets, [0, 2, 2, 5]);
//! assert_eq!(check_offsets(5, &offsets)?, 3);
//! assert_eq!(check_offsets(0, &[0])?, 0);
//! assert!(check_offsets(0, &[]).is_err());
//! assert!(check_offsets(5, &[1, 5]).is_err()); // must start at 0
//! # Ok::<(), prefix_ops::Error>(())
//! ```

use crate::error::{Error, Result};

/// Checks that `len` elements form whole rows of `row_len`; returns the number of rows.
///
/// Errors: [`Error::InvalidRows`] when `len` is not a multiple of `row_len`, including
/// `row_len == 0` with `len > 0`.
pub fn check_rows(len: usize, row_len: usize) -> Result<usize> {
    if len == 0 {
        return Ok(0);
    }
    if row_len == 0 || !len.is_multiple_of(row_len) {
        return Err(Error::InvalidRows { len, row_len });
    }
    Ok(len / row_len)
}

/// Checks CSR `offsets` for `len` elements (see the [module docs](self)); returns the number of
/// segments, `offsets.len() - 1`.
///
/// Errors: [`Error::InvalidOffsets`] naming the first violation.
pub fn check_offsets(len: usize, offsets: &[usize]) -> Result<usize> {
    let Some((&first, &last)) = offsets.first().zip(offsets.last()) else {
        return Err(Error::InvalidOffsets(format!(
            "no offsets for {len} elements: need at least [0, {len}] (or [0] for empty data)"
        )));
    };
    if first != 0 {
        return Err(Error::InvalidOffsets(format!("offsets[0] = {first}, must be 0")));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(Error::InvalidOffsets(format!(
            "offsets[{}] = {} is below offsets[{i}] = {}",
            i + 1,
            offsets[i + 1],
            offsets[i]
        )));
    }
    if last != len {
        return Err(Error::InvalidOffsets(format!(
            "the last offset is {last}, must be the data length {len}"
        )));
    }
    Ok(offsets.len() - 1)
}

/// CSR offsets for segments of the given lengths: `[0, l0, l0 + l1, …]`.
///
/// Errors: [`Error::Invalid`] when the total overflows `usize`, [`Error::Alloc`] when the
/// offsets cannot be allocated.
pub fn offsets_from_lengths(lengths: &[usize]) -> Result<Vec<usize>> {
    let mut out = crate::alloc::try_with_capacity(lengths.len().saturating_add(1), "segment offsets")?;
    let mut end = 0usize;
    out.push(end);
    for &l in lengths {
        end = end
            .checked_add(l)
            .ok_or_else(|| Error::Invalid("segment lengths: the total overflows usize".into()))?;
        out.push(end);
    }
    Ok(out)
}
