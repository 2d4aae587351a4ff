//! Scan operators: associative monoids (an identity and an associative `combine`).
//!
//! `combine(a, b)` always receives the *earlier* operand first, so non-commutative operators
//! (matrix products, affine maps) scan correctly. The built-in operators [`Add`], [`Mul`], [`Min`]
//! and [`Max`] exist for `i32`, `u32`, `i64`, `u64`, `f32` and `f64`:
//!
//! - integer `Add` and `Mul` **wrap** on overflow (two's complement), so every path, sequential or
//!   parallel, CPU or GPU, gives bit-identical integer results;
//! - float `Add` uses `-0.0` as identity (the only exact additive identity in IEEE arithmetic:
//!   `-0.0 + x == x` for every `x`, including `+0.0`), so padding with the identity never changes a
//!   result; float `Min`/`Max` use `+inf`/`-inf` and ignore a NaN operand like `fminf`/`fmaxf`.
//!
//! Float `Add` and `Mul` are commutative but not associative in rounding: a parallel scan
//! associates differently from the sequential loop, so float results agree with the reference
//! within a tolerance (see the book), except in the GPU's deterministic order, which
//! [`crate::scan::emulate`] reproduces exactly on the CPU.

/// An associative binary operator with an identity: `combine(identity, x) == x ==
/// combine(x, identity)` and `combine(combine(a, b), c) == combine(a, combine(b, c))`.
///
/// ```
/// use prefix_ops::scan::{self, Monoid};
/// /// The affine map x -> a x + b; composing "first f, then g" is not commutative.
/// #[derive(Clone, Copy)]
/// struct Compose;
/// impl Monoid<(i64, i64)> for Compose {
///     fn identity(&self) -> (i64, i64) { (1, 0) }
///     fn combine(&self, f: (i64, i64), g: (i64, i64)) -> (i64, i64) { (g.0 * f.0, g.0 * f.1 + g.1) }
/// }
/// let mut maps = [(2, 1), (3, 0), (1, 5)];
/// scan::inclusive(&mut maps, Compose);
/// assert_eq!(maps, [(2, 1), (6, 3), (6, 8)]);
/// ```
pub trait Monoid<T>: Copy + Send + Sync {
    /// True when `combine(a, b) == combine(b, a)` up to rounding. Lets reductions interleave
    /// accumulators (which vectorises); leave `false` for operators where order matters.
    const COMMUTATIVE: bool = false;
    /// The neutral element.
    fn identity(&self) -> T;
    /// `a` then `b`: `a` is the earlier operand.
    fn combine(&self, a: T, b: T) -> T;
}

/// Sum (integers wrap on overflow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Add;
/// Product (integers wrap on overflow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Mul;
/// Minimum (floats: a NaN operand is ignored, like `fminf`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Min;
/// Maximum (floats: a NaN operand is ignored, like `fmaxf`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Max;

/// A built-in operator the GPU kernels are instantiated for; `NAME` is its part of the kernel
/// names (`scan_lookback_<NAME>_<type>`). Operators of your own run on the GPU as CUDA C
/// expressions instead ([`gpu::UserOp`](crate::scan::gpu::UserOp)).
pub trait BuiltinOp<T>: Monoid<T> + Default + std::fmt::Debug + 'static {
    /// `"add"`, `"mul"`, `"min"` or `"max"`.
    const NAME: &'static str;
}

macro_rules! int_ops {
    ($($t:ty),*) => {$(
        impl Monoid<$t> for Add {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { 0 }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl Monoid<$t> for Mul {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { 1 }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a.wrapping_mul(b) }
        }
        impl Monoid<$t> for Min {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { <$t>::MAX }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
        impl Monoid<$t> for Max {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { <$t>::MIN }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
    )*};
}
int_ops!(i32, u32, i64, u64);

macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl Monoid<$t> for Add {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { -0.0 }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a + b }
        }
        impl Monoid<$t> for Mul {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { 1.0 }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a * b }
        }
        impl Monoid<$t> for Min {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { <$t>::INFINITY }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a.min(b) }
        }
        impl Monoid<$t> for Max {
            const COMMUTATIVE: bool = true;
            #[inline(always)] fn identity(&self) -> $t { <$t>::NEG_INFINITY }
            #[inline(always)] fn combine(&self, a: $t, b: $t) -> $t { a.max(b) }
        }
    )*};
}
float_ops!(f32, f64);

macro_rules! builtin {
    ($op:ty, $name:literal) => {
        impl BuiltinOp<i32> for $op {
            const NAME: &'static str = $name;
        }
        impl BuiltinOp<u32> for $op {
            const NAME: &'static str = $name;
        }
        impl BuiltinOp<i64> for $op {
            const NAME: &'static str = $name;
        }
        impl BuiltinOp<u64> for $op {
            const NAME: &'static str = $name;
        }
        impl BuiltinOp<f32> for $op {
            const NAME: &'static str = $name;
        }
        impl BuiltinOp<f64> for $op {
            const NAME: &'static str = $name;
        }
    };
}
builtin!(Add, "add");
builtin!(Mul, "mul");
builtin!(Min, "min");
builtin!(Max, "max");

/// The segmented form of an operator on `(head, value)` pairs: `(f1, v1) ⊕ (f2, v2) = (f1 | f2,
/// if f2 { v2 } else { v1 ⊕ v2 })`. It is associative whenever `M` is, which is what lets one
/// parallel scan handle segments of any lengths (Schwartz; Sengupta et al.).
#[derive(Debug, Clone, Copy, Default)]
pub struct Segmented<M>(pub M);

impl<T, M: Monoid<T>> Monoid<(bool, T)> for Segmented<M> {
    #[inline(always)]
    fn identity(&self) -> (bool, T) {
        (false, self.0.identity())
    }
    #[inline(always)]
    fn combine(&self, a: (bool, T), b: (bool, T)) -> (bool, T) {
        (a.0 | b.0, if b.0 { b.1 } else { self.0.combine(a.1, b.1) })
    }
}
