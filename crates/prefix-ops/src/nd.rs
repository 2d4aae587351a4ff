//! Two-dimensional `ndarray` inputs of the batched entry points: rows along the last axis, any
//! memory layout, with the row-major (standard) layout passed through as a flat slice and every
//! other layout copied to row-major and back.

use std::borrow::Cow;

use ndarray::{ArrayView2, ArrayViewMut2, Zip};

use crate::error::{Error, Result};

/// [`Error::ShapeMismatch`] unless `got == expected`.
pub(crate) fn check_shape(what: &'static str, got: (usize, usize), expected: (usize, usize)) -> Result<()> {
    if got != expected {
        return Err(Error::ShapeMismatch { what, got, expected });
    }
    Ok(())
}

/// The elements of `v` in row-major order: borrowed when `v` is already laid out so.
pub(crate) fn row_major<'v, T: Copy>(v: &ArrayView2<'v, T>) -> Result<Cow<'v, [T]>> {
    if let Some(s) = v.to_slice() {
        return Ok(Cow::Borrowed(s));
    }
    let mut out = crate::alloc::try_with_capacity(v.len(), "row-major copy of a 2-D array")?;
    out.extend(v.iter().copied());
    Ok(Cow::Owned(out))
}

/// Writes the row-major `flat` (as many elements as `dst`) into `dst`, whatever its layout.
pub(crate) fn copy_back<T: Copy>(dst: ArrayViewMut2<'_, T>, flat: &[T]) {
    let src = ArrayView2::from_shape(dst.dim(), flat).expect("flat holds one element per element of dst");
    Zip::from(dst).and(&src).for_each(|d, &s| *d = s);
}

/// Runs `f` on the rows of `data` as one flat row-major slice and the row length.
pub(crate) fn on_rows<T: Copy>(
    mut data: ArrayViewMut2<'_, T>,
    f: impl FnOnce(&mut [T], usize) -> Result<()>,
) -> Result<()> {
    let row_len = data.ncols();
    if let Some(flat) = data.as_slice_mut() {
        return f(flat, row_len);
    }
    let mut flat = row_major(&data.view())?.into_owned();
    f(&mut flat, row_len)?;
    copy_back(data, &flat);
    Ok(())
}

/// [`on_rows`] for two arrays of the same shape (keys and values).
pub(crate) fn on_rows_pair<K: Copy, V: Copy>(
    mut keys: ArrayViewMut2<'_, K>,
    mut values: ArrayViewMut2<'_, V>,
    f: impl FnOnce(&mut [K], &mut [V], usize) -> Result<()>,
) -> Result<()> {
    check_shape("values", values.dim(), keys.dim())?;
    let row_len = keys.ncols();
    if let (Some(k), Some(v)) = (keys.as_slice_mut(), values.as_slice_mut()) {
        return f(k, v, row_len);
    }
    let mut k = row_major(&keys.view())?.into_owned();
    let mut v = row_major(&values.view())?.into_owned();
    f(&mut k, &mut v, row_len)?;
    copy_back(keys, &k);
    copy_back(values, &v);
    Ok(())
}
