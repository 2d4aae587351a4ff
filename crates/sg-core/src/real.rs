//! The floating-point types the grids hold.

use num_traits::Float;
use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{AddAssign, MulAssign, SubAssign};

/// A floating-point scalar a grid can hold: `f32` or `f64`.
pub trait Real:
    Float + Debug + Display + Default + Sum + AddAssign + SubAssign + MulAssign + Send + Sync + 'static
{
    /// Converts from `f64` (rounding to nearest for `f32`).
    fn from_f64(x: f64) -> Self;
    /// Converts to `f64` (exact).
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    #[inline]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
}
