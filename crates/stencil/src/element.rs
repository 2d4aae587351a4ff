//! [`Element`]: the floating-point types stencils are computed in.

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

/// `f32` or `f64`.
///
/// Sealed: the kernels' exactness arguments (dyadic inputs, no fused multiply-add on the CPU)
/// are made for IEEE binary32 and binary64 only.
pub trait Element:
    Copy
    + Default
    + Debug
    + Display
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + Sum
    + num_traits::Zero
    + cuda_kernels::GpuScalar
    + sealed::Sealed
    + 'static
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// `"f32"` or `"f64"`: the precision in tuning keys and reports.
    const NAME: &'static str;
    /// The value rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// The value widened to f64 (exact).
    fn to_f64(self) -> f64;
}

impl Element for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NAME: &'static str = "f32";
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Element for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const NAME: &'static str = "f64";
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}
