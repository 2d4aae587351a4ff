//! AVX-512 tile kernels of the segmented scans for the built-in operators: one 64-byte block
//! (16 four-byte or 8 eight-byte elements) per register, every segment length at one cost.
//!
//! Blocks are aligned to the array's start (tiles are multiples of a block). A block's segment
//! heads are a bit mask; the block is scanned by one Kogge-Stone network whose step `d` lets lane
//! `i` take lane `i - d` only when no head lies in `(i - d, i]`, so each segment's part of the
//! block is the network of that part from its first element, whatever the segment lengths. The
//! lanes before the block's first head continue the running value of the previous block
//! (`r ⊕ local`); the running value goes on in a vector register. An exclusive scan is the
//! inclusive one shifted by a lane (the running value entering the block in lane 0), with the
//! identity at the heads: one pass, no second sweep.
//!
//! A block without heads (most blocks of long segments) takes the network with constant masks
//! and the identity shifted in: a shift and a combine per step, nothing else.
//!
//! The masks come from one of three sources, chosen per tile: a constant (no head at all, or
//! heads every 1, 2, 4, 8 or 16 elements at a fixed phase: `regular` descriptors and equal CSR
//! rows, where the network's masks are computed once), an arithmetic progression (other equal
//! lengths: a counter, one compare per block), or the offsets themselves (any lengths: one
//! compare per block and per head). Tiles of one-element segments skip the network.
//!
//! Exactness: every lane's output is `combine(running or identity, network value)`, as the
//! sequential loop's `combine(acc, x)` is; integer operators and `Min`/`Max` give the
//! sequential loop's bits (for floats up to the sign of a zero where `-0.0` and `+0.0` tie,
//! which `f32::min` leaves unspecified); float `Add`/`Mul` round in the order above.

use std::any::TypeId;
use std::arch::x86_64::*;

use super::descriptor::Form;
use super::scan::{Local, arithmetic};
use crate::scan::{Add, Max, Min, Mul};

/// A built-in element type under a built-in operator, one 64-byte register of it.
///
/// # Safety
/// Every method needs AVX-512F and AVX-512DQ; pointers must be valid for the lanes touched.
trait Lanes: Copy {
    type T: Copy;
    /// Lanes per register.
    const W: usize;
    /// All lanes' mask bits.
    const ALL: u32 = ((1u64 << Self::W) - 1) as u32;
    unsafe fn identity() -> __m512i;
    unsafe fn combine(a: __m512i, b: __m512i) -> __m512i;
    /// Lanes in `k` get `combine(a, b)`, the others keep `src`.
    unsafe fn mask_combine(src: __m512i, k: u32, a: __m512i, b: __m512i) -> __m512i;
    unsafe fn load(p: *const Self::T) -> __m512i;
    unsafe fn store(p: *mut Self::T, v: __m512i);
    /// The lanes in `k` from `p`, the others from `fill`.
    unsafe fn load_masked(p: *const Self::T, k: u32, fill: __m512i) -> __m512i;
    unsafe fn store_masked(p: *mut Self::T, k: u32, v: __m512i);
    /// Lanes moved up by `d` (a power of two below `W`); the low `d` lanes are don't-care.
    unsafe fn shift_up(v: __m512i, d: usize) -> __m512i;
    /// Lanes moved up by `d` (a power of two below `W`), the low `d` lanes from `fill`'s top.
    unsafe fn shift_fill(v: __m512i, fill: __m512i, d: usize) -> __m512i;
    /// `[c[W - 1], v[0], …, v[W - 2]]`.
    unsafe fn shift_in(v: __m512i, c: __m512i) -> __m512i;
    /// The last lane in every lane.
    unsafe fn broadcast_last(v: __m512i) -> __m512i;
    /// Lanes in `k` from `b`, the others from `a`.
    unsafe fn blend(k: u32, a: __m512i, b: __m512i) -> __m512i;
    /// Lane `i`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn lane(v: __m512i, i: usize) -> Self::T {
        let mut out = [std::mem::MaybeUninit::<Self::T>::uninit(); 16];
        // SAFETY: the 64 bytes of a register fit in 16 lanes of at least 4 bytes.
        unsafe {
            _mm512_storeu_si512(out.as_mut_ptr().cast(), v);
            out[i].assume_init()
        }
    }
}

/// The lane operations of `$w` lanes of one width, named by that width's intrinsics; shifts
/// by `d` in {1, 2, 4, 8} (below `$w`) bring lane `i - d` to lane `i`.
macro_rules! lanes {
    ($w:literal, $mask:ty, $loadm:ident, $storem:ident, $alignr:ident, $permute:ident, $set1:ident, $blend:ident) => {
        const W: usize = $w;
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn load(p: *const Self::T) -> __m512i {
            // SAFETY: the caller gives a pointer valid for 64 bytes and a CPU with AVX-512F.
            unsafe { _mm512_loadu_si512(p.cast()) }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn store(p: *mut Self::T, v: __m512i) {
            // SAFETY: as in `load`.
            unsafe { _mm512_storeu_si512(p.cast(), v) }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn load_masked(p: *const Self::T, k: u32, fill: __m512i) -> __m512i {
            // SAFETY: the caller's pointer is valid for the lanes in `k`; masked-off lanes are not touched.
            unsafe { $loadm(fill, k as $mask, p.cast()) }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn store_masked(p: *mut Self::T, k: u32, v: __m512i) {
            // SAFETY: as in `load_masked`.
            unsafe { $storem(p.cast(), k as $mask, v) }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn shift_up(v: __m512i, d: usize) -> __m512i {
            // SAFETY: same contract (AVX-512 enabled here).
            unsafe { Self::shift_fill(v, v, d) }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn shift_fill(v: __m512i, fill: __m512i, d: usize) -> __m512i {
            match d {
                1 => $alignr::<{ $w - 1 }>(v, fill),
                2 => $alignr::<{ $w - 2 }>(v, fill),
                4 => $alignr::<{ $w - 4 }>(v, fill),
                _ => $alignr::<{ $w - 8 }>(v, fill),
            }
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn shift_in(v: __m512i, c: __m512i) -> __m512i {
            $alignr::<{ $w - 1 }>(v, c)
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn broadcast_last(v: __m512i) -> __m512i {
            $permute($set1($w - 1), v)
        }
        #[inline]
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn blend(k: u32, a: __m512i, b: __m512i) -> __m512i {
            $blend(k as $mask, a, b)
        }
    };
}

/// The lane operations of 32-bit lanes, shared by every 4-byte kernel.
macro_rules! lanes32 {
    () => {
        lanes!(
            16,
            __mmask16,
            _mm512_mask_loadu_epi32,
            _mm512_mask_storeu_epi32,
            _mm512_alignr_epi32,
            _mm512_permutexvar_epi32,
            _mm512_set1_epi32,
            _mm512_mask_blend_epi32
        );
    };
}

/// The lane operations of 64-bit lanes.
macro_rules! lanes64 {
    () => {
        lanes!(
            8,
            __mmask8,
            _mm512_mask_loadu_epi64,
            _mm512_mask_storeu_epi64,
            _mm512_alignr_epi64,
            _mm512_permutexvar_epi64,
            _mm512_set1_epi64,
            _mm512_mask_blend_epi64
        );
    };
}

/// A kernel whose operator is one integer instruction (plain and merge-masked).
macro_rules! int_kernel {
    ($name:ident, $t:ty, $lanes:ident, $mask:ty, $id:expr, $op:ident, $mop:ident) => {
        #[derive(Clone, Copy)]
        struct $name;
        impl Lanes for $name {
            type T = $t;
            $lanes!();
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn identity() -> __m512i {
                $id
            }
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn combine(a: __m512i, b: __m512i) -> __m512i {
                $op(a, b)
            }
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn mask_combine(src: __m512i, k: u32, a: __m512i, b: __m512i) -> __m512i {
                $mop(src, k as $mask, a, b)
            }
        }
    };
}

int_kernel!(AddI32, i32, lanes32, __mmask16, _mm512_setzero_si512(), _mm512_add_epi32, _mm512_mask_add_epi32);
int_kernel!(AddU32, u32, lanes32, __mmask16, _mm512_setzero_si512(), _mm512_add_epi32, _mm512_mask_add_epi32);
int_kernel!(AddI64, i64, lanes64, __mmask8, _mm512_setzero_si512(), _mm512_add_epi64, _mm512_mask_add_epi64);
int_kernel!(AddU64, u64, lanes64, __mmask8, _mm512_setzero_si512(), _mm512_add_epi64, _mm512_mask_add_epi64);
int_kernel!(
    MulI32,
    i32,
    lanes32,
    __mmask16,
    _mm512_set1_epi32(1),
    _mm512_mullo_epi32,
    _mm512_mask_mullo_epi32
);
int_kernel!(
    MulU32,
    u32,
    lanes32,
    __mmask16,
    _mm512_set1_epi32(1),
    _mm512_mullo_epi32,
    _mm512_mask_mullo_epi32
);
int_kernel!(
    MulI64,
    i64,
    lanes64,
    __mmask8,
    _mm512_set1_epi64(1),
    _mm512_mullo_epi64,
    _mm512_mask_mullo_epi64
);
int_kernel!(
    MulU64,
    u64,
    lanes64,
    __mmask8,
    _mm512_set1_epi64(1),
    _mm512_mullo_epi64,
    _mm512_mask_mullo_epi64
);
int_kernel!(
    MinI32,
    i32,
    lanes32,
    __mmask16,
    _mm512_set1_epi32(i32::MAX),
    _mm512_min_epi32,
    _mm512_mask_min_epi32
);
int_kernel!(MinU32, u32, lanes32, __mmask16, _mm512_set1_epi32(-1), _mm512_min_epu32, _mm512_mask_min_epu32);
int_kernel!(
    MinI64,
    i64,
    lanes64,
    __mmask8,
    _mm512_set1_epi64(i64::MAX),
    _mm512_min_epi64,
    _mm512_mask_min_epi64
);
int_kernel!(MinU64, u64, lanes64, __mmask8, _mm512_set1_epi64(-1), _mm512_min_epu64, _mm512_mask_min_epu64);
int_kernel!(
    MaxI32,
    i32,
    lanes32,
    __mmask16,
    _mm512_set1_epi32(i32::MIN),
    _mm512_max_epi32,
    _mm512_mask_max_epi32
);
int_kernel!(MaxU32, u32, lanes32, __mmask16, _mm512_setzero_si512(), _mm512_max_epu32, _mm512_mask_max_epu32);
int_kernel!(
    MaxI64,
    i64,
    lanes64,
    __mmask8,
    _mm512_set1_epi64(i64::MIN),
    _mm512_max_epi64,
    _mm512_mask_max_epi64
);
int_kernel!(MaxU64, u64, lanes64, __mmask8, _mm512_setzero_si512(), _mm512_max_epu64, _mm512_mask_max_epu64);

/// A float kernel: `$op(a, b)` on the float view of the lanes.
macro_rules! float_kernel {
    ($name:ident, $t:ty, $lanes:ident, $id:expr, |$a:ident, $b:ident| $body:expr) => {
        #[derive(Clone, Copy)]
        struct $name;
        impl Lanes for $name {
            type T = $t;
            $lanes!();
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn identity() -> __m512i {
                $id
            }
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn combine($a: __m512i, $b: __m512i) -> __m512i {
                $body
            }
            #[inline]
            #[target_feature(enable = "avx512f,avx512dq")]
            unsafe fn mask_combine(src: __m512i, k: u32, a: __m512i, b: __m512i) -> __m512i {
                // Not-taken lanes keep `src` exactly (a blend, not an arithmetic no-op).
                // SAFETY: the caller has AVX-512 (this method's contract).
                unsafe { Self::blend(k, src, Self::combine(a, b)) }
            }
        }
    };
}

/// `f32::min`/`max` semantics: a NaN operand is ignored (the other one is returned).
macro_rules! ignore_nan {
    ($cast:ident, $back:ident, $cmp:ident, $mov:ident, $f:ident, $a:ident, $b:ident) => {{
        let (fa, fb) = ($cast($a), $cast($b));
        // `$f(a, b)` returns `b` when either is NaN: put `a` back where `b` is NaN.
        $back($mov($f(fa, fb), $cmp::<_CMP_UNORD_Q>(fb, fb), fa))
    }};
}

float_kernel!(AddF32, f32, lanes32, _mm512_castps_si512(_mm512_set1_ps(-0.0)), |a, b| {
    _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)))
});
float_kernel!(AddF64, f64, lanes64, _mm512_castpd_si512(_mm512_set1_pd(-0.0)), |a, b| {
    _mm512_castpd_si512(_mm512_add_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)))
});
float_kernel!(MulF32, f32, lanes32, _mm512_castps_si512(_mm512_set1_ps(1.0)), |a, b| {
    _mm512_castps_si512(_mm512_mul_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)))
});
float_kernel!(MulF64, f64, lanes64, _mm512_castpd_si512(_mm512_set1_pd(1.0)), |a, b| {
    _mm512_castpd_si512(_mm512_mul_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)))
});
float_kernel!(MinF32, f32, lanes32, _mm512_castps_si512(_mm512_set1_ps(f32::INFINITY)), |a, b| {
    ignore_nan!(
        _mm512_castsi512_ps,
        _mm512_castps_si512,
        _mm512_cmp_ps_mask,
        _mm512_mask_mov_ps,
        _mm512_min_ps,
        a,
        b
    )
});
float_kernel!(MaxF32, f32, lanes32, _mm512_castps_si512(_mm512_set1_ps(f32::NEG_INFINITY)), |a, b| {
    ignore_nan!(
        _mm512_castsi512_ps,
        _mm512_castps_si512,
        _mm512_cmp_ps_mask,
        _mm512_mask_mov_ps,
        _mm512_max_ps,
        a,
        b
    )
});
float_kernel!(MinF64, f64, lanes64, _mm512_castpd_si512(_mm512_set1_pd(f64::INFINITY)), |a, b| {
    ignore_nan!(
        _mm512_castsi512_pd,
        _mm512_castpd_si512,
        _mm512_cmp_pd_mask,
        _mm512_mask_mov_pd,
        _mm512_min_pd,
        a,
        b
    )
});
float_kernel!(MaxF64, f64, lanes64, _mm512_castpd_si512(_mm512_set1_pd(f64::NEG_INFINITY)), |a, b| {
    ignore_nan!(
        _mm512_castsi512_pd,
        _mm512_castpd_si512,
        _mm512_cmp_pd_mask,
        _mm512_mask_mov_pd,
        _mm512_max_pd,
        a,
        b
    )
});

/// Where a tile's per-block head masks come from (positions relative to the tile's start).
trait Heads {
    /// The heads of the next block of `w` elements, as bits.
    fn next_mask(&mut self, w: usize) -> u32;
}

/// The same mask in every block.
struct Constant(u32);

impl Heads for Constant {
    #[inline(always)]
    fn next_mask(&mut self, _w: usize) -> u32 {
        self.0
    }
}

/// Heads at `next`, `next + step`, … (`step >= 1`), one short loop per block: a branch that
/// follows the period of the heads predicts well, where a branch-free mask (shift, popcount,
/// multiply) put ten cycles of dependent arithmetic on every block.
struct Progression {
    start: usize,
    next: usize,
    step: usize,
}

impl Heads for Progression {
    #[inline(always)]
    fn next_mask(&mut self, w: usize) -> u32 {
        let end = self.start + w;
        let mut m = 0u32;
        while self.next < end {
            m |= 1 << (self.next - self.start);
            self.next += self.step;
        }
        self.start = end;
        m
    }
}

/// Heads read from a sorted list (repeats, from empty segments, allowed).
struct List<'a> {
    heads: &'a [usize],
    start: usize,
}

impl Heads for List<'_> {
    #[inline(always)]
    fn next_mask(&mut self, w: usize) -> u32 {
        let end = self.start + w;
        let mut m = 0u32;
        while let Some((&h, rest)) = self.heads.split_first() {
            if h >= end {
                break;
            }
            m |= 1 << (h - self.start);
            self.heads = rest;
        }
        self.start = end;
        m
    }
}

/// The masked Kogge-Stone network of one block (see the module doc).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn network<K: Lanes>(mut v: __m512i, heads: u32) -> __m512i {
    let mut seen = heads;
    let mut d = 1;
    while d < K::W {
        let take = !seen & (K::ALL << d) & K::ALL;
        // SAFETY: the caller has AVX-512.
        v = unsafe { K::mask_combine(v, take, K::shift_up(v, d), v) };
        seen |= seen << d;
        d *= 2;
    }
    v
}

/// The network of a block without heads: the identity shifted in, no masks (a shift and a
/// combine per step). A lane below `d` becomes `identity ⊕ v`: `v` itself for the integer
/// operators and float `Add`/`Mul`; for float `Min`/`Max` a NaN lane becomes the identity,
/// which no output can tell apart (every output and the running value are `r ⊕ lane` with a
/// non-NaN `r`, and both ignore it).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn network_plain<K: Lanes>(mut v: __m512i, id: __m512i) -> __m512i {
    let mut d = 1;
    while d < K::W {
        // SAFETY: the caller has AVX-512.
        v = unsafe { K::combine(K::shift_fill(v, id, d), v) };
        d *= 2;
    }
    v
}

/// One block: returns (inclusive values, what to store) and advances the running value `run`
/// (every lane equal).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn block<K: Lanes, const EX: bool>(
    x: __m512i,
    heads: u32,
    run: &mut __m512i,
    id: __m512i,
) -> (__m512i, __m512i) {
    // SAFETY: the caller has AVX-512; no pointer is touched.
    unsafe {
        let v = if heads == 0 { network_plain::<K>(x, id) } else { network::<K>(x, heads) };
        // The lanes before the first head continue the running value; the others start anew.
        let open = (heads & heads.wrapping_neg()).wrapping_sub(1) & K::ALL;
        let inclusive = K::combine(K::blend(open, id, *run), v);
        let before = *run;
        // The last lane's value, computed off the output's path: `combine(run or identity, v[W-1])`.
        let into_last = if heads == 0 { *run } else { id };
        *run = K::combine(into_last, K::broadcast_last(v));
        let out = if EX { K::blend(heads, K::shift_in(inclusive, before), id) } else { inclusive };
        (inclusive, out)
    }
}

/// Scans one tile from the identity; returns the running value after its last element.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn tile<K: Lanes, H: Heads, const EX: bool>(part: &mut [K::T], mut heads: H) -> K::T {
    let (n, p) = (part.len(), part.as_mut_ptr());
    // SAFETY: `i + W <= full <= n` for the full blocks, and the last one's mask covers `n - i` lanes, so every access is inside `part`; the caller has AVX-512.
    unsafe {
        let id = K::identity();
        let mut run = id;
        let full = n - n % K::W;
        let mut i = 0;
        while i < full {
            let h = heads.next_mask(K::W);
            let x = K::load(p.add(i));
            // Blocks without a head (most of them, for long segments) take the network with
            // constant masks: no mask arithmetic, no mask-register moves.
            let (_, out) =
                if h == 0 { block::<K, EX>(x, 0, &mut run, id) } else { block::<K, EX>(x, h, &mut run, id) };
            K::store(p.add(i), out);
            i += K::W;
        }
        if i == n {
            return K::lane(run, 0);
        }
        // The last partial block: the missing lanes are the identity, after every real lane.
        let k = ((1u64 << (n - i)) - 1) as u32;
        let h = heads.next_mask(K::W) & k;
        let (inclusive, out) = block::<K, EX>(K::load_masked(p.add(i), k, id), h, &mut run, id);
        K::store_masked(p.add(i), k, out);
        K::lane(inclusive, n - i - 1)
    }
}

/// Step 1 of the tiled scan on one tile (`a` its first element's index): the mask source
/// chosen from the descriptor, then the kernel.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn local<K: Lanes, const EX: bool>(part: &mut [K::T], a: usize, form: Form<'_>) -> Local<K::T> {
    let n = part.len();
    let (first, last) = match form {
        Form::Regular(len) => {
            let phase = a.next_multiple_of(len) - a;
            // SAFETY: AVX-512 is enabled on this function.
            (phase.min(n), unsafe { progression::<K, EX>(part, phase, len) })
        }
        Form::Offsets(o) => {
            let s = o.partition_point(|&x| x < a);
            let e = s + o[s..].partition_point(|&x| x < a + n);
            let heads = &o[s..e];
            let first = heads.first().map_or(n, |&h| h - a);
            // A progression stands for the tile's heads only if its next term is past the tile.
            // SAFETY: AVX-512 is enabled on this function.
            let last = unsafe {
                match (arithmetic(heads), heads.last()) {
                    (Some(step), Some(&l)) if l - a + step >= n => progression::<K, EX>(part, first, step),
                    (_, None) => tile::<K, Constant, EX>(part, Constant(0)),
                    _ => tile::<K, List<'_>, EX>(part, List { heads, start: a }),
                }
            };
            (first, last)
        }
    };
    Local { first, last }
}

/// A tile whose heads are `first`, `first + step`, … up to its end or beyond.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn progression<K: Lanes, const EX: bool>(part: &mut [K::T], first: usize, step: usize) -> K::T {
    // SAFETY: the callee's contract is this one's (AVX-512, a valid tile).
    unsafe {
        if first >= part.len() {
            return tile::<K, Constant, EX>(part, Constant(0));
        }
        if step == 1 && first == 0 {
            return singletons::<K, EX>(part);
        }
        if K::W.is_multiple_of(step) && first < step {
            // Blocks start at multiples of W, a multiple of the step: every block has the same
            // heads, and the network's masks are computed once, outside the loop.
            let mask = Progression { start: 0, next: first, step }.next_mask(K::W);
            return tile::<K, Constant, EX>(part, Constant(mask));
        }
        tile::<K, Progression, EX>(part, Progression { start: 0, next: first, step })
    }
}

/// A tile of one-element segments: `identity ⊕ x` (inclusive) or the identity (exclusive),
/// without the network; returns `identity ⊕ x` of the last element.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn singletons<K: Lanes, const EX: bool>(part: &mut [K::T]) -> K::T {
    let (n, p) = (part.len(), part.as_mut_ptr());
    // SAFETY: every load and store covers lanes below `n`, the last block by its mask; the caller has AVX-512.
    unsafe {
        let id = K::identity();
        // Read before the element is overwritten (`part` is not empty here).
        let last = K::lane(K::combine(id, K::load_masked(p.add(n - 1), 1, id)), 0);
        let mut i = 0;
        while i + K::W <= n {
            let x = K::load(p.add(i));
            K::store(p.add(i), if EX { id } else { K::combine(id, x) });
            i += K::W;
        }
        let k = ((1u64 << (n - i)) - 1) as u32;
        let x = K::combine(id, K::load_masked(p.add(i), k, id));
        K::store_masked(p.add(i), k, if EX { id } else { x });
        last
    }
}

/// Step 1 on a tile by the AVX-512 kernel of `(T, M)`, or `None` when the CPU lacks AVX-512 or
/// `(T, M)` is not a built-in pair.
pub(super) fn local_in<T: Copy + 'static, M: 'static>(
    part: &mut [T],
    a: usize,
    form: Form<'_>,
    exclusive: bool,
) -> Option<Local<T>> {
    if !available() {
        return None;
    }
    macro_rules! pick {
        ($(($t:ty, $m:ty, $k:ty)),* $(,)?) => {$(
            if TypeId::of::<T>() == TypeId::of::<$t>() && TypeId::of::<M>() == TypeId::of::<$m>() {
                // SAFETY: `T` is `$t` (same TypeId), so the slice's layout is unchanged; the CPU
                // has AVX-512F and DQ (checked above).
                let part = unsafe { &mut *(part as *mut [T] as *mut [$t]) };
                // SAFETY: `T` is `$t` and the CPU has AVX-512F and DQ (both checked above).
                let l = unsafe {
                    if exclusive { local::<$k, true>(part, a, form) } else { local::<$k, false>(part, a, form) }
                };
                // SAFETY: `$t` is `T`.
                return Some(Local { first: l.first, last: unsafe { std::mem::transmute_copy::<$t, T>(&l.last) } });
            }
        )*};
    }
    pick!(
        (f32, Add, AddF32),
        (f64, Add, AddF64),
        (i32, Add, AddI32),
        (u32, Add, AddU32),
        (i64, Add, AddI64),
        (u64, Add, AddU64),
        (f32, Mul, MulF32),
        (f64, Mul, MulF64),
        (i32, Mul, MulI32),
        (u32, Mul, MulU32),
        (i64, Mul, MulI64),
        (u64, Mul, MulU64),
        (f32, Min, MinF32),
        (f64, Min, MinF64),
        (i32, Min, MinI32),
        (u32, Min, MinU32),
        (i64, Min, MinI64),
        (u64, Min, MinU64),
        (f32, Max, MaxF32),
        (f64, Max, MaxF64),
        (i32, Max, MaxI32),
        (u32, Max, MaxU32),
        (i64, Max, MaxI64),
        (u64, Max, MaxU64),
    );
    None
}

/// Whether the kernels may run: the CPU has AVX-512F and DQ and neither `HETKIT_SORT_ISA` nor
/// `HETKIT_SEGSCAN_ISA` caps the scans below it ([`super::scan::isa`]).
pub(super) fn available() -> bool {
    use std::sync::OnceLock;
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        super::scan::isa() == crate::sort::isa::Isa::Avx512 && std::arch::is_x86_feature_detected!("avx512dq")
    })
}
