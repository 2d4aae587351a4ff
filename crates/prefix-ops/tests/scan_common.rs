//! Shared by the scan test files: input generators whose float results are exact in any
//! association order (small integers for Add, ±1 for Mul), so every path can be compared with
//! the sequential reference bit for bit, plus the non-commutative test operator.

#![allow(dead_code, unreachable_pub)]

use prefix_ops::scan::{Monoid, reference};
use rand::Rng;

/// Sizes the issue asks for (2^26 lives in an ignored test).
pub const SIZES: [usize; 8] = [0, 1, 31, 32, 33, 1023, 1025, (1 << 20) + 7];

/// Which built-in operator an input is for (it decides the value range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Add,
    Mul,
    MinMax,
}

/// What the checks need of an element.
pub trait Elem: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {}
impl<T: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static> Elem for T {}

/// Random values of `Self` for operator `kind`.
pub trait Sample: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    fn sample(rng: &mut impl Rng, kind: Kind) -> Self;
}

macro_rules! int_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(rng: &mut impl Rng, kind: Kind) -> Self {
                match kind {
                    // Full range: wrapping must agree everywhere.
                    Kind::Add | Kind::MinMax => rng.random::<$t>(),
                    // Odd factors keep products from collapsing to 0 after a few dozen terms.
                    Kind::Mul => rng.random::<$t>() | 1,
                }
            }
        }
    )*};
}
int_sample!(i32, u32, i64, u64);

macro_rules! float_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn sample(rng: &mut impl Rng, kind: Kind) -> Self {
                match kind {
                    // Integers in [-8, 8]: every partial sum of up to 2^20 terms is exact in f32.
                    Kind::Add => rng.random_range(-8i32..=8) as $t,
                    // ±1: every product is exact.
                    Kind::Mul => if rng.random::<bool>() { 1.0 } else { -1.0 },
                    Kind::MinMax => rng.random_range(-1.0e6..1.0e6),
                }
            }
        }
    )*};
}
float_sample!(f32, f64);

pub fn random_vec<T: Sample>(rng: &mut impl Rng, n: usize, kind: Kind) -> Vec<T> {
    (0..n).map(|_| T::sample(rng, kind)).collect()
}

/// The affine map `x -> a x + b` over wrapping u64; combining applies the earlier map first.
/// Not commutative, so any operand swap in a scan network shows up.
#[derive(Debug, Clone, Copy)]
pub struct Compose;

impl Monoid<(u64, u64)> for Compose {
    fn identity(&self) -> (u64, u64) {
        (1, 0)
    }
    fn combine(&self, f: (u64, u64), g: (u64, u64)) -> (u64, u64) {
        (g.0.wrapping_mul(f.0), g.0.wrapping_mul(f.1).wrapping_add(g.1))
    }
}

pub fn random_maps(rng: &mut impl Rng, n: usize) -> Vec<(u64, u64)> {
    (0..n).map(|_| (rng.random::<u64>() | 1, rng.random::<u64>())).collect()
}

/// Random CSR offsets over `n` elements with `segments` segments, many of them empty.
pub fn random_offsets(rng: &mut impl Rng, n: usize, segments: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..segments.saturating_sub(1)).map(|_| rng.random_range(0..=n)).collect();
    cuts.sort_unstable();
    let mut offsets = Vec::with_capacity(segments + 1);
    offsets.push(0);
    offsets.extend(cuts);
    offsets.push(n);
    offsets
}

/// Head flags of the segments starting at `offsets` in `n` elements (offsets at `n`, which
/// start empty trailing segments, flag nothing).
pub fn heads_of(offsets: &[usize], n: usize) -> Vec<bool> {
    let mut heads = vec![false; n];
    for &o in offsets.iter().filter(|&&o| o < n) {
        heads[o] = true;
    }
    heads
}

/// The sequential reference's inclusive or exclusive scan of a copy of `xs`.
pub fn reference_scan<T: Copy, M: Monoid<T>>(xs: &[T], op: M, exclusive: bool) -> Vec<T> {
    let mut want = xs.to_vec();
    if exclusive {
        reference::exclusive(&mut want, op)
    } else {
        reference::inclusive(&mut want, op)
    }
    want
}

/// The sequential reference's segmented scan of a copy of `xs` over `offsets`.
pub fn reference_segments<T: Copy, M: Monoid<T>>(
    xs: &[T],
    offsets: &[usize],
    op: M,
    exclusive: bool,
) -> Vec<T> {
    let mut want = xs.to_vec();
    if exclusive {
        reference::exclusive_segments(&mut want, offsets, op)
    } else {
        reference::inclusive_segments(&mut want, offsets, op)
    }
    want
}
