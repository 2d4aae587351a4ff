//! Sort keys as order-preserving unsigned bit patterns.
//!
//! Every sort in this module compares keys through [`SortKey::to_bits`]: a bijection onto `u32`
//! or `u64` whose unsigned order is the key order. Integers flip their sign bit. Floats use the
//! IEEE total order (`f32::total_cmp`) rotated so that negative NaNs join the positive ones at
//! the top:
//!
//! `-inf < ... < -0.0 < +0.0 < ... < +inf < +NaN < -NaN` (each NaN group in
//! `total_cmp` order)`.
//!
//! So NaNs sort last (ascending), `-0.0` before `+0.0`, and since the map is a bijection a sort
//! returns exactly the input bits, NaN payloads included. The GPU kernels
//! (`cuda-kernels/prefix/sort_keys.cuh`) use the same maps.

use std::fmt::Debug;

/// The unsigned integers keys map onto (`u32`, `u64`).
pub trait SortBits: Copy + Ord + Eq + Debug + Send + Sync + 'static {
    /// All bits set: the largest pattern, used as padding (it sorts last).
    const MAX: Self;
    /// Zero.
    const ZERO: Self;
    /// The width in bits (32 or 64).
    const BITS: u32;
    /// Bitwise exclusive or (descending sorts xor with [`SortBits::MAX`]).
    fn xor(self, other: Self) -> Self;
    /// The value zero-extended to `u64` (the radix sorts' digit source).
    fn to_u64(self) -> u64;
    /// The low bits of `v` (the inverse of [`SortBits::to_u64`]).
    fn from_u64(v: u64) -> Self;
}

impl SortBits for u32 {
    const MAX: Self = u32::MAX;
    const ZERO: Self = 0;
    const BITS: u32 = u32::BITS;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as u32
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
}

impl SortBits for u64 {
    const MAX: Self = u64::MAX;
    const ZERO: Self = 0;
    const BITS: u32 = u64::BITS;
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v
    }
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
}

/// A key type the sorts accept: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
///
/// ```
/// use prefix_ops::sort::SortKey;
/// assert!((-0.0f32).to_bits_ordered() < 0.0f32.to_bits_ordered());
/// assert!(f32::INFINITY.to_bits_ordered() < f32::NAN.to_bits_ordered());
/// assert!((-f32::NAN).to_bits_ordered() > f32::NAN.to_bits_ordered());
/// assert_eq!(f32::from_bits_ordered(1.5f32.to_bits_ordered()), 1.5);
/// ```
pub trait SortKey: cuda_kernels::GpuScalar + Copy + Send + Sync + Debug + 'static {
    /// The unsigned type of the same width.
    type Bits: SortBits;
    /// The order-preserving bijection onto [`SortKey::Bits`].
    fn to_bits_ordered(self) -> Self::Bits;
    /// The inverse of [`SortKey::to_bits_ordered`].
    fn from_bits_ordered(bits: Self::Bits) -> Self;
}

impl SortKey for u32 {
    type Bits = u32;
    #[inline(always)]
    fn to_bits_ordered(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u32) -> Self {
        bits
    }
}

impl SortKey for u64 {
    type Bits = u64;
    #[inline(always)]
    fn to_bits_ordered(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u64) -> Self {
        bits
    }
}

impl SortKey for i32 {
    type Bits = u32;
    #[inline(always)]
    fn to_bits_ordered(self) -> u32 {
        (self as u32) ^ (1 << 31)
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u32) -> Self {
        (bits ^ (1 << 31)) as i32
    }
}

impl SortKey for i64 {
    type Bits = u64;
    #[inline(always)]
    fn to_bits_ordered(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u64) -> Self {
        (bits ^ (1 << 63)) as i64
    }
}

/// Negative NaN codes of f32 (exponent all ones, mantissa non-zero): the rotation distance.
const F32_NEG_NANS: u32 = (1 << 23) - 1;
/// Negative NaN codes of f64.
const F64_NEG_NANS: u64 = (1 << 52) - 1;

impl SortKey for f32 {
    type Bits = u32;
    #[inline(always)]
    fn to_bits_ordered(self) -> u32 {
        let b = self.to_bits();
        let m = if b >> 31 == 1 { !b } else { b | (1 << 31) };
        m.wrapping_sub(F32_NEG_NANS)
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u32) -> Self {
        let m = bits.wrapping_add(F32_NEG_NANS);
        f32::from_bits(if m >> 31 == 1 { m ^ (1 << 31) } else { !m })
    }
}

impl SortKey for f64 {
    type Bits = u64;
    #[inline(always)]
    fn to_bits_ordered(self) -> u64 {
        let b = self.to_bits();
        let m = if b >> 63 == 1 { !b } else { b | (1 << 63) };
        m.wrapping_sub(F64_NEG_NANS)
    }
    #[inline(always)]
    fn from_bits_ordered(bits: u64) -> Self {
        let m = bits.wrapping_add(F64_NEG_NANS);
        f64::from_bits(if m >> 63 == 1 { m ^ (1 << 63) } else { !m })
    }
}

/// Payload types the GPU key-value sorts carry (`u32`, `u64`). The CPU sorts take any
/// `Copy + Send + Sync` value.
pub trait SortValue: cuda_kernels::GpuScalar + Copy + Send + Sync + 'static {}
impl SortValue for u32 {}
impl SortValue for u64 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_map_is_a_bijection_at_the_edges() {
        let edge = [
            0u32,
            1,
            0x007F_FFFF,
            0x0080_0000,
            0x7F7F_FFFF,
            0x7F80_0000,
            0x7F80_0001,
            0x7FC0_0000,
            0x7FFF_FFFF,
            0x8000_0000,
            0x8000_0001,
            0xFF7F_FFFF,
            0xFF80_0000,
            0xFF80_0001,
            0xFFC0_0000,
            0xFFFF_FFFF,
        ];
        for b in edge {
            let x = f32::from_bits(b);
            assert_eq!(f32::from_bits_ordered(x.to_bits_ordered()).to_bits(), b);
        }
        // -inf maps to 0, the smallest pattern; the negative NaN with the smallest
        // payload (the last one in total_cmp order) to the largest.
        assert_eq!(f32::NEG_INFINITY.to_bits_ordered(), 0);
        assert_eq!(f32::from_bits(0xFF80_0001).to_bits_ordered(), u32::MAX);
        assert_eq!(f64::NEG_INFINITY.to_bits_ordered(), 0);
        assert_eq!(f64::from_bits(0xFFF0_0000_0000_0001).to_bits_ordered(), u64::MAX);
    }

    #[test]
    fn float_order_matches_total_order_outside_nans() {
        let xs = [f64::NEG_INFINITY, -1e300, -1.0, -f64::MIN_POSITIVE, -0.0, 0.0, 1e-310, 2.0, f64::INFINITY];
        for w in xs.windows(2) {
            assert!(w[0].to_bits_ordered() < w[1].to_bits_ordered(), "{w:?}");
        }
        assert!(f64::INFINITY.to_bits_ordered() < f64::NAN.to_bits_ordered());
        assert!(f64::INFINITY.to_bits_ordered() < (-f64::NAN).to_bits_ordered());
    }

    #[test]
    fn integer_maps_keep_order() {
        assert!(i32::MIN.to_bits_ordered() < (-1i32).to_bits_ordered());
        assert!((-1i32).to_bits_ordered() < 0i32.to_bits_ordered());
        assert!(0i64.to_bits_ordered() < i64::MAX.to_bits_ordered());
        assert_eq!(i64::from_bits_ordered(i64::MIN.to_bits_ordered()), i64::MIN);
    }
}
