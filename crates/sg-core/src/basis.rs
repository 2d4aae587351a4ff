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

/// The two basis families of the data-mining algorithms (grids without boundary points).
///
/// `Linear` is the hat `φ_{l,i}(x) = max(0, 1 − |2^l·x − i|)`. `ModifiedLinear` (thesis Eq. 6.13)
/// replaces the level-1 function by the constant 1 and extrapolates the outermost function of
/// every finer level linearly to the boundary, so that data near the boundary of `[0, 1]^d` is
/// fitted without boundary points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Basis {
    /// The hat functions (zero on the boundary).
    #[default]
    Linear,
    /// The modified linear functions (linear extrapolation towards the boundary).
    ModifiedLinear,
}

/// A 1-D basis function in the unified form of thesis Eq. 7.5:
/// `φ(x) = scale · max(0, 1 − |level_factor · x − index_shift|)`, branch-free in `x`.
///
/// For `Linear`, `(level_factor, index_shift, scale) = (2^l, i, 1)`. For `ModifiedLinear`
/// (Table 7.1): `(0, 0, 1)` at level 1 (the constant), `(2^(l−1), 0, 2)` for `i = 1`,
/// `(2^(l−1), 2^(l−1), 2)` for `i = 2^l − 1`, and the hat otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unified {
    /// `l'`: the factor in front of `x` (0 makes the function constant).
    pub level_factor: f64,
    /// `i'`: the shift subtracted after scaling.
    pub index_shift: f64,
    /// `s`: 1, or 2 for the extrapolating outer functions.
    pub scale: f64,
}

impl Unified {
    /// The value at `x`.
    #[inline]
    pub fn eval<T: Real>(&self, x: T) -> T {
        T::from_f64(self.scale) * hat(T::from_f64(self.level_factor) * x - T::from_f64(self.index_shift))
    }
}

impl Basis {
    /// The unified form of function `(level >= 1, odd index < 2^level)`.
    ///
    /// ```
    /// use sg_core::basis::Basis;
    /// let u = Basis::ModifiedLinear.unified(3, 7);
    /// assert_eq!((u.level_factor, u.index_shift, u.scale), (4.0, 4.0, 2.0));
    /// assert_eq!(Basis::ModifiedLinear.eval_1d(3, 7, 1.0_f64), 2.0);
    /// ```
    ///
    /// # Panics
    /// For `level >= 64`.
    #[inline]
    pub fn unified(self, level: u32, index: u32) -> Unified {
        let hat_form = Unified { level_factor: pow2::<f64>(level), index_shift: index as f64, scale: 1.0 };
        match self {
            Basis::Linear => hat_form,
            Basis::ModifiedLinear if level == 1 => {
                Unified { level_factor: 0.0, index_shift: 0.0, scale: 1.0 }
            }
            Basis::ModifiedLinear if index == 1 => {
                Unified { level_factor: pow2::<f64>(level - 1), index_shift: 0.0, scale: 2.0 }
            }
            Basis::ModifiedLinear if index as u64 == (1u64 << level) - 1 => {
                let half = pow2::<f64>(level - 1);
                Unified { level_factor: half, index_shift: half, scale: 2.0 }
            }
            Basis::ModifiedLinear => hat_form,
        }
    }

    /// The 1-D function `(level >= 1, odd index)` at `x`.
    ///
    /// # Panics
    /// For `level >= 64`.
    #[inline]
    pub fn eval_1d<T: Real>(self, level: u32, index: u32, x: T) -> T {
        self.unified(level, index).eval(x)
    }

    /// The tensor-product function of the point `(levels, indices)` at `x` (equal lengths).
    #[inline]
    pub fn eval<T: Real>(self, levels: &[u32], indices: &[u32], x: &[T]) -> T {
        levels.iter().zip(indices).zip(x).fold(T::one(), |acc, ((&l, &i), &xv)| acc * self.eval_1d(l, i, xv))
    }
}

/// The largest `f64` below 1: data at `x = 1` is moved here where an algorithm locates cells by
/// `⌊2^l·x⌋` (the functions of grids without boundary points agree at both values up to one ulp).
pub const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// The odd index of the only level-`level` function that can be non-zero at `x ∈ [0, 1]`
/// (digest §8.1 `calculate_index`; `x = 1` counts as [`BELOW_ONE`]).
///
/// ```
/// use sg_core::basis::nearest_odd_index;
/// assert_eq!(nearest_odd_index(2, 0.6), 3);
/// assert_eq!(nearest_odd_index(3, 0.999), 7);
/// assert_eq!(nearest_odd_index(3, 1.0), 7);
/// assert_eq!(nearest_odd_index(3, 0.0), 1);
/// ```
///
/// # Panics
/// For `level >= 32`.
#[inline]
pub fn nearest_odd_index(level: u32, x: f64) -> u32 {
    let f = (pow2::<f64>(level) * x.min(BELOW_ONE)).floor() as u32;
    f | 1
}

/// The L2 inner product over `[0, 1]` of the hats `(l1, i1)` and `(l2, i2)` (thesis Eq. 8.7):
/// `2/3·h` for the same function, else `h_2·φ_1(x_2) + h_1·φ_2(x_1)` (at most one term is
/// non-zero: the coarser function at the finer centre, times the finer width).
///
/// ```
/// use sg_core::basis::hat_inner_product;
/// assert_eq!(hat_inner_product(1, 1, 1, 1), 1.0 / 3.0);
/// assert_eq!(hat_inner_product(1, 1, 3, 3), 3.0 / 32.0);
/// assert_eq!(hat_inner_product(2, 1, 2, 3), 0.0);
/// ```
#[inline]
pub fn hat_inner_product(l1: u32, i1: u32, l2: u32, i2: u32) -> f64 {
    let (h1, h2) = (1.0 / pow2::<f64>(l1), 1.0 / pow2::<f64>(l2));
    if l1 == l2 && i1 == i2 {
        return 2.0 / 3.0 * h1;
    }
    let (x1, x2) = (i1 as f64 * h1, i2 as f64 * h2);
    h2 * basis_1d(l1, i1, x2) + h1 * basis_1d(l2, i2, x1)
}

#[cfg(test)]
mod learn_basis_tests {
    use super::*;

    /// Eq. 6.13 written with branches: the independent oracle of the unified form.
    fn modified_branchy(l: u32, i: u32, x: f64) -> f64 {
        let s = (1u64 << l) as f64;
        if l == 1 {
            1.0
        } else if i == 1 {
            if x <= 2.0 / s { 2.0 - s * x } else { 0.0 }
        } else if i as u64 == (1u64 << l) - 1 {
            if x >= 1.0 - 2.0 / s { s * x + 1.0 - i as f64 } else { 0.0 }
        } else {
            (1.0 - (s * x - i as f64).abs()).max(0.0)
        }
    }

    #[test]
    fn unified_modified_linear_equals_the_branchy_definition() {
        for l in 1..=6u32 {
            for i in (1..(1u32 << l)).step_by(2) {
                for k in 0..=200 {
                    let x = k as f64 / 200.0;
                    let (a, b) = (Basis::ModifiedLinear.eval_1d(l, i, x), modified_branchy(l, i, x));
                    assert!((a - b).abs() < 1e-13, "l={l} i={i} x={x}: {a} vs {b}");
                }
            }
        }
        assert_eq!(Basis::ModifiedLinear.eval_1d(3, 1, 0.0_f64), 2.0);
        assert_eq!(Basis::ModifiedLinear.eval_1d(3, 1, 0.25_f64), 0.0);
        let u = Basis::ModifiedLinear.unified(3, 3);
        assert_eq!((u.level_factor, u.index_shift, u.scale), (8.0, 3.0, 1.0));
        let u = Basis::ModifiedLinear.unified(3, 1);
        assert_eq!((u.level_factor, u.index_shift, u.scale), (4.0, 0.0, 2.0));
    }

    #[test]
    fn tensor_products_match_the_digest_values() {
        // d = 2, n = 2, alpha = 1: linear f(0.3, 0.7) = 1.32, modified 2.6.
        let pts = [([1, 1], [1, 1]), ([1, 2], [1, 1]), ([1, 2], [1, 3]), ([2, 1], [1, 1]), ([2, 1], [3, 1])];
        let f = |b: Basis, x: [f64; 2]| pts.iter().map(|(l, i)| b.eval(l, i, &x)).sum::<f64>();
        assert!((f(Basis::Linear, [0.3, 0.7]) - 1.32).abs() < 1e-14);
        assert!((f(Basis::ModifiedLinear, [0.3, 0.7]) - 2.6).abs() < 1e-14);
        assert!((f(Basis::ModifiedLinear, [0.1, 0.9]) - 4.2).abs() < 1e-14);
    }

    #[test]
    fn mass_entries_and_nearest_index_match_the_digest() {
        assert_eq!(hat_inner_product(2, 1, 2, 1), 1.0 / 6.0);
        assert_eq!(hat_inner_product(1, 1, 2, 3), 1.0 / 8.0);
        assert_eq!(hat_inner_product(2, 1, 3, 3), 1.0 / 16.0);
        assert_eq!(hat_inner_product(3, 5, 1, 1), 3.0 / 32.0);
        assert_eq!(hat_inner_product(2, 1, 3, 5), 0.0);
        for (l, x, i) in
            [(1, 0.3, 1), (2, 0.3, 1), (2, 0.6, 3), (3, 0.3, 3), (3, 0.0, 1), (3, 0.999, 7), (3, 0.5, 5)]
        {
            assert_eq!(nearest_odd_index(l, x), i, "l={l} x={x}");
        }
    }
}
