//! Vectors of `f32` or `f64` lanes for the constant-coefficient kernels of [`crate::taps`]:
//! AVX-512, AVX2 and one-lane scalar, behind one small trait so one kernel source serves all.
//!
//! The kernels hold their accumulators in values of these types rather than in arrays of
//! elements: written with element arrays, the compiler kept the accumulators of a group on the
//! stack and stored them back after every term (a store and a store-forwarded load per term in
//! the dependency chain), which made the 13- and 27-point sweeps several times slower than
//! their arithmetic. No method fuses a multiply with an add, so every implementation rounds
//! each lane exactly as the scalar code does.

/// A vector of `N` lanes of `E`. Every method is `unsafe`: the vector implementations need
/// their instruction set (the caller checks it at run time), `load` and `store` need `N`
/// valid elements at the pointer.
pub(crate) trait Lanes: Copy {
    /// The lane type, `f32` or `f64`.
    type E: crate::element::Element;
    /// Lanes per vector.
    const N: usize;
    unsafe fn load(p: *const Self::E) -> Self;
    unsafe fn store(self, p: *mut Self::E);
    unsafe fn splat(v: Self::E) -> Self;
    unsafe fn add(self, o: Self) -> Self;
    unsafe fn mul(self, o: Self) -> Self;
    /// `self + o`, issued where the lanes have it as a fused multiply-add `self * one + o`
    /// (`one` must hold 1 in every lane, opaque to the compiler so that it is not folded back
    /// into an add). Bitwise the same sum: `self * 1` is exact, so the one rounding is that of
    /// `self + o`. It moves adds from the FP add pipes to the multiply pipes (Zen 4 has two of
    /// each, and adds only on the former): the weight-grouped kernels have 3-4 adds per
    /// multiply.
    #[inline(always)]
    unsafe fn add_on_fma(self, o: Self, one: Self) -> Self {
        let _ = one;
        // SAFETY: forwarded from the caller.
        unsafe { self.add(o) }
    }
    /// The largest `|dk|` that [`Lanes::shifted`] builds in registers; 0 where it builds none
    /// (the kernels then load shifted vectors from memory).
    const WINDOW: isize = 0;
    /// The vector that starts `dk` points after `cur`'s first one (`1 <= |dk| <= WINDOW`),
    /// built from the vectors before (`prev`), at (`cur`) and after (`next`) it by a lane
    /// shift (AVX-512 `valignd` / `valignq`) instead of a load that splits across cache lines.
    #[inline(always)]
    unsafe fn shifted(prev: Self, cur: Self, next: Self, dk: isize) -> Self {
        let _ = (prev, next, dk);
        cur
    }
}

/// One lane: the portable fallback and the tail of a row shorter than a vector.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar<E>(E);

impl<E: crate::element::Element> Lanes for Scalar<E> {
    type E = E;
    const N: usize = 1;
    #[inline(always)]
    unsafe fn load(p: *const E) -> Self {
        // SAFETY: the caller guarantees one valid element at `p`.
        Scalar(unsafe { p.read_unaligned() })
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut E) {
        // SAFETY: the caller guarantees one writable element at `p`.
        unsafe { p.write_unaligned(self.0) }
    }
    #[inline(always)]
    unsafe fn splat(v: E) -> Self {
        Scalar(v)
    }
    #[inline(always)]
    unsafe fn add(self, o: Self) -> Self {
        Scalar(self.0 + o.0)
    }
    #[inline(always)]
    unsafe fn mul(self, o: Self) -> Self {
        Scalar(self.0 * o.0)
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2F32, Avx2F64, Avx512F32, Avx512F64};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// Implements [`Lanes`] for a wrapper of one vector type with its intrinsics, each method
    /// compiled for the instruction set (and inlined into kernels compiled for it).
    macro_rules! lanes {
        ($name:ident, $v:ty, $e:ty, $n:expr, $feat:literal,
         $load:ident, $store:ident, $splat:ident, $add:ident, $mul:ident
         $(, window $w:literal, fma $fmadd:ident)?) => {
            #[doc = concat!("`", stringify!($n), "` lanes of `", stringify!($e), "` (", $feat, ").")]
            #[derive(Debug, Clone, Copy)]
            pub(crate) struct $name($v);

            impl Lanes for $name {
                type E = $e;
                const N: usize = $n;
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn load(p: *const $e) -> Self {
                    // SAFETY: the caller guarantees `N` valid elements at `p` and the feature.
                    $name(unsafe { $load(p) })
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn store(self, p: *mut $e) {
                    // SAFETY: the caller guarantees `N` writable elements at `p`.
                    unsafe { $store(p, self.0) }
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn splat(v: $e) -> Self {
                    $name($splat(v))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn add(self, o: Self) -> Self {
                    $name($add(self.0, o.0))
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn mul(self, o: Self) -> Self {
                    $name($mul(self.0, o.0))
                }
                $(
                const WINDOW: isize = $w;
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn shifted(prev: Self, cur: Self, next: Self, dk: isize) -> Self {
                    if dk > 0 { Self::align_by(cur, next, dk) } else { Self::align_by(prev, cur, $n + dk) }
                }
                #[inline]
                #[target_feature(enable = $feat)]
                unsafe fn add_on_fma(self, o: Self, one: Self) -> Self {
                    $name($fmadd(self.0, one.0, o.0))
                }
                )?
            }
        };
    }

    lanes!(
        Avx512F32,
        __m512,
        f32,
        16,
        "avx512f",
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_add_ps,
        _mm512_mul_ps,
        window 4,
        fma _mm512_fmadd_ps
    );
    lanes!(
        Avx512F64,
        __m512d,
        f64,
        8,
        "avx512f",
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_add_pd,
        _mm512_mul_pd,
        window 4,
        fma _mm512_fmadd_pd
    );
    /// Lane shifts of AVX-512 vectors: `valignd` / `valignq` across `lo` and `hi` (`lo`'s
    /// lanes from `k` on, then `hi`'s first `k`), the immediate picked by a `match` on `dk`.
    macro_rules! window {
        ($name:ident, $cast:ident, $back:ident, $align:ident, $n:literal, [$($k:literal),*]) => {
            impl $name {
                #[inline]
                #[target_feature(enable = "avx512f")]
                fn align_by(lo: Self, hi: Self, k: isize) -> Self {
                    let (lo, hi) = ($cast(lo.0), $cast(hi.0));
                    $name($back(match k {
                        $($k => $align::<$k>(hi, lo),)*
                        _ => unreachable!("shift {k} outside the window"),
                    }))
                }
            }
        };
    }
    window!(
        Avx512F32,
        _mm512_castps_si512,
        _mm512_castsi512_ps,
        _mm512_alignr_epi32,
        16,
        [1, 2, 3, 4, 12, 13, 14, 15]
    );
    window!(
        Avx512F64,
        _mm512_castpd_si512,
        _mm512_castsi512_pd,
        _mm512_alignr_epi64,
        8,
        [1, 2, 3, 4, 5, 6, 7]
    );

    lanes!(
        Avx2F32,
        __m256,
        f32,
        8,
        "avx2",
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_add_ps,
        _mm256_mul_ps
    );
    lanes!(
        Avx2F64,
        __m256d,
        f64,
        4,
        "avx2",
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_set1_pd,
        _mm256_add_pd,
        _mm256_mul_pd
    );
}
