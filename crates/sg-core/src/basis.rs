//! One-dimensional hat basis functions and the parent/child arithmetic of the 1-D hierarchy.
//!
//! Public convention: level `L >= 1` with odd index `i < 2^L` is the interior point
//! `x = i·2^−L` with basis `φ_{L,i}(x) = max(1 − |2^L·x − i|, 0)`; level `L = 0` with index 0 or 1
//! is the boundary point `x = 0` or `x = 1` with basis `1 − x` or `x`.
//!
//! These are the inner-loop helpers of every algorithm, so they take levels and indices as they
//! are and do not return `Result`: levels up to [`MAX_LEVEL`](crate::MAX_LEVEL) and the index
//! rules stated per function are preconditions (a level of 64 or more overflows a shift and
//! panics). Coordinates may be anything: NaN and infinite `x` give NaN or infinite values, never a
//! panic.

use crate::real::Real;

/// Which of the two hierarchical neighbours: towards 0 (`Left`) or towards 1 (`Right`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Towards x = 0.
    Left,
    /// Towards x = 1.
    Right,
}

/// The hat function `max(1 − |x|, 0)`.
#[inline]
pub fn hat<T: Real>(x: T) -> T {
    (T::one() - x.abs()).max(T::zero())
}

/// The 1-D basis function of point `(level, index)` (public convention) at `x`.
///
/// ```
/// use sg_core::basis::basis_1d;
/// assert_eq!(basis_1d(1, 1, 0.25_f64), 0.5);
/// assert_eq!(basis_1d(0, 1, 0.25_f64), 0.25); // boundary x = 1: φ(x) = x
/// ```
///
/// # Panics
/// For `level >= 64`.
#[inline]
pub fn basis_1d<T: Real>(level: u32, index: u32, x: T) -> T {
    if level == 0 {
        if index == 0 { T::one() - x } else { x }
    } else {
        hat(pow2::<T>(level) * x - T::from_f64(index as f64))
    }
}

/// The only level-`l0` (0-based) basis function whose support contains `x`: its in-level
/// position `cell = ⌊2^l0·x⌋` (clamped to `2^l0 − 1`, so `x = 1` is fine) and its value
/// `1 − |2^(l0+1)·x − 2·cell − 1|` (Eq. 3.19, clamped at 0). The point is
/// `(level l0 + 1, index 2·cell + 1)` in the public convention.
///
/// ```
/// use sg_core::basis::basis_cell;
/// let (cell, v) = basis_cell(2, 0.3_f64);
/// assert_eq!(cell, 1);
/// assert!((v - 0.4).abs() < 1e-15);
/// assert_eq!(basis_cell(3, 1.0_f64), (7, 0.0));
/// ```
///
/// # Panics
/// For `l0 >= 64`.
#[inline]
pub fn basis_cell<T: Real>(l0: u32, x: T) -> (u32, T) {
    let scale = pow2::<T>(l0);
    let top = (1u64 << l0) - 1;
    let cell = (scale * x).floor().to_f64().clamp(0.0, top as f64) as u32;
    let cellf = T::from_f64(cell as f64);
    let two = T::from_f64(2.0);
    let v = T::one() - (two * scale * x - two * cellf - T::one()).abs();
    (cell, v.max(T::zero()))
}

/// `2^k` as a float (exact).
///
/// # Panics
/// For `k >= 64`.
#[inline]
pub fn pow2<T: Real>(k: u32) -> T {
    T::from_f64((1u64 << k) as f64)
}

/// Coordinate `i·2^−L` of a 1-D point (level 0: index 0 or 1 is the boundary 0 or 1).
///
/// # Panics
/// For `level >= 64`.
#[inline]
pub fn coordinate_1d(level: u32, index: u32) -> f64 {
    index as f64 / (1u64 << level) as f64
}

/// Hierarchical parent of the interior 1-D point `(level >= 1, odd index)` on `side`: the
/// nearest point of a coarser level. Returns `(0, 0)` or `(0, 1)` when the parent is the
/// boundary `x = 0` or `x = 1`. Integer form of Eqs. 3.7–3.8: `m = i ∓ 1`, `z = ctz(m)`,
/// parent `(L − z, m >> z)`.
///
/// ```
/// use sg_core::basis::{parent_1d, Side};
/// assert_eq!(parent_1d(3, 5, Side::Left), (1, 1));  // 0.625 -> 0.5
/// assert_eq!(parent_1d(3, 5, Side::Right), (2, 3)); // 0.625 -> 0.75
/// assert_eq!(parent_1d(2, 1, Side::Left), (0, 0));  // 0.25 -> boundary 0
/// ```
///
/// # Panics
/// Requires `level >= 1` and an odd `index < 2^level`; otherwise the result is meaningless and
/// debug builds panic (assertion or arithmetic overflow).
#[inline]
pub fn parent_1d(level: u32, index: u32, side: Side) -> (u32, u32) {
    debug_assert!(level >= 1 && index % 2 == 1);
    let m = match side {
        Side::Left => index - 1,
        Side::Right => index + 1,
    };
    if m == 0 {
        return (0, 0);
    }
    let z = m.trailing_zeros();
    (level - z, m >> z)
}

/// The child of the 1-D point `(level, index)` on `side`: `(L + 1, 2i ∓ 1)`. For a boundary
/// point (level 0) both sides give the centre `(1, 1)`.
///
/// # Panics
/// In debug builds, for `index = 0` on the left of an interior level or `2·index + 1`
/// overflowing `u32` (not valid points).
#[inline]
pub fn child_1d(level: u32, index: u32, side: Side) -> (u32, u32) {
    if level == 0 {
        return (1, 1);
    }
    match side {
        Side::Left => (level + 1, 2 * index - 1),
        Side::Right => (level + 1, 2 * index + 1),
    }
}

/// Block-relative parent (digest §6.1): the point at 0-based level `l0`, in-level position `p`
/// has its `side` parent at 0-based level and position `Some((l0', p'))`, or `None` when that
/// parent is on the boundary. Used by block-structured hierarchization (Listing 4.2).
///
/// ```
/// use sg_core::basis::{parent_in_level, Side};
/// assert_eq!(parent_in_level(2, 2, Side::Left), Some((0, 0)));  // 0.625 -> 0.5
/// assert_eq!(parent_in_level(2, 2, Side::Right), Some((1, 1))); // 0.625 -> 0.75
/// assert_eq!(parent_in_level(2, 0, Side::Left), None);
/// ```
///
/// # Panics
/// Requires `l0 < 32` and `p < 2^l0`; otherwise debug builds panic on overflow.
#[inline]
pub fn parent_in_level(l0: u32, p: u32, side: Side) -> Option<(u32, u32)> {
    let m = match side {
        Side::Left if p == 0 => return None,
        Side::Left => p,
        Side::Right if p == (1u32 << l0) - 1 => return None,
        Side::Right => p + 1,
    };
    let z = m.trailing_zeros();
    Some((l0 - 1 - z, ((m >> z) - 1) / 2))
}

/// Integral over [0, 1] of the 1-D basis function of a point at `level` (`2^−L`; 1/2 on the
/// boundary).
///
/// # Panics
/// For `level >= 64`.
#[inline]
pub fn integral_1d(level: u32) -> f64 {
    if level == 0 { 0.5 } else { 1.0 / (1u64 << level) as f64 }
}
