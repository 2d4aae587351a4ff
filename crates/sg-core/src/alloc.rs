//! Fallible allocation for every buffer whose size follows from a caller's arguments.
//!
//! `vec![x; n]` aborts the process when the allocator refuses `n` elements and panics with
//! "capacity overflow" when the byte count overflows; a grid of level 31 in 6 dimensions asks
//! for petabytes. These helpers compute the byte count with overflow checks and reserve with
//! [`Vec::try_reserve_exact`], so such sizes come back as [`SgError::Allocation`].
//!
//! What this cannot prevent: on Linux with overcommit, the kernel may grant a reservation larger
//! than the free memory (it refuses only requests beyond RAM plus swap under the default
//! heuristic) and kill the process later, when the pages are touched. Sizes up to the machine's
//! memory are the caller's to budget.

use crate::error::{Result, SgError};

/// Bytes of `n` values of `T`, saturating at `u128::MAX` (for error messages and budgets).
pub fn bytes_of<T>(n: u128) -> u128 {
    n.saturating_mul(size_of::<T>() as u128)
}

/// An empty vector with room for exactly `n` values, or [`SgError::Allocation`] naming `what`.
///
/// ```
/// use sg_core::alloc::try_with_capacity;
/// assert!(try_with_capacity::<f64>("values", 1 << 10)?.capacity() >= 1 << 10);
/// assert!(try_with_capacity::<f64>("values", usize::MAX).is_err());
/// # Ok::<(), sg_core::SgError>(())
/// ```
///
/// # Errors
/// [`SgError::Allocation`] when `n · size_of::<T>()` overflows `isize` or the allocator
/// refuses.
pub fn try_with_capacity<T>(what: &'static str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| SgError::Allocation { what, bytes: bytes_of::<T>(n as u128) })?;
    Ok(v)
}

/// `vec![value; n]`, fallibly.
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_vec<T: Clone>(what: &'static str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = try_with_capacity(what, n)?;
    v.resize(n, value);
    Ok(v)
}

/// `count · per` as a `usize` element count for buffers of `T`, or [`SgError::Allocation`]
/// (with the byte count it would have needed) when the product does not fit.
///
/// # Errors
/// When `count · per` overflows `usize`.
pub fn checked_len<T>(what: &'static str, count: u64, per: usize) -> Result<usize> {
    let n = u128::from(count) * per as u128;
    usize::try_from(n).map_err(|_| SgError::Allocation { what, bytes: bytes_of::<T>(n) })
}
