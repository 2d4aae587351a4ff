//! Fallible allocation for scratch buffers sized by the caller's data: a size the machine
//! cannot provide is [`Error::Alloc`], never an abort.

use crate::error::{Error, Result};

/// An empty vector with room for `len` elements, or [`Error::Alloc`] naming `what`.
pub(crate) fn try_with_capacity<T>(len: usize, what: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::Alloc { what, bytes: len.saturating_mul(size_of::<T>()) })?;
    Ok(v)
}

/// A copy of `src`, or [`Error::Alloc`].
pub(crate) fn try_copy<T: Copy>(src: &[T], what: &'static str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(src.len(), what)?;
    v.extend_from_slice(src);
    Ok(v)
}
