//! Smith-Waterman in Farrar's striped layout: the query strip's rows are dealt round-robin to
//! the lanes, so a column of the table is `seg` vectors and the vertical dependency crosses lanes
//! only in the "lazy F" correction pass (which also updates `E`, so the result is full Gotoh).
//!
//! Four kernels, one macro over the lane type: 64 lanes of `i8` on AVX-512BW, 32 on AVX2, 32
//! lanes of `i16` on AVX-512BW and 16 on AVX2, detected at run time. A lane holds `score + T::MIN`,
//! so the saturating add of a negative substitution score stops at the local floor 0 by itself
//! (no separate `max` with zero), and the range is `0 ..= T::MAX - T::MIN` (255 for `i8`). A
//! result that reached the top of the range may have saturated: it is recomputed with the next
//! wider kernel (`i8`, then `i16`, then the 32-bit scalar strips). Random proteins of 20 000
//! residues score well below 255 under BLOSUM62, so the 8-bit pass usually decides alone.
//!
//! Strips (one per core at least, and short enough for L1) are the tiles of
//! [`crate::apps::strips::run_strips`]: each passes its bottom row's `H` and `F` to the strip below.

use crate::apps::align::Alignment;
use crate::apps::scoring::Encoded;

/// The striped kernels, in the order [`smith_waterman_simd`] tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// 64 lanes of `i8` (AVX-512BW): scores up to 254.
    Avx512I8,
    /// 32 lanes of `i8` (AVX2): scores up to 254.
    Avx2I8,
    /// 32 lanes of `i16` (AVX-512BW): scores up to 65 534.
    Avx512I16,
    /// 16 lanes of `i16` (AVX2).
    Avx2I16,
}

impl Kernel {
    #[cfg(test)]
    pub(crate) const ALL: [Kernel; 4] =
        [Kernel::Avx512I8, Kernel::Avx2I8, Kernel::Avx512I16, Kernel::Avx2I16];

    /// Whether this CPU has the kernel's instruction set.
    pub(crate) fn detected(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Kernel::Avx512I8 | Kernel::Avx512I16 => std::is_x86_feature_detected!("avx512bw"),
                Kernel::Avx2I8 | Kernel::Avx2I16 => std::is_x86_feature_detected!("avx2"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// Whether the lanes hold every substitution score and penalty, and the lazy-F pass's
    /// assumption `extend <= open` holds.
    pub(crate) fn takes(self, enc: &Encoded) -> bool {
        let limit = match self {
            Kernel::Avx512I8 | Kernel::Avx2I8 => i32::from(i8::MAX),
            Kernel::Avx512I16 | Kernel::Avx2I16 => i32::from(i16::MAX),
        };
        enc.extend <= enc.open && enc.open <= limit && enc.matrix.iter().all(|s| s.abs() <= limit)
    }
}

/// The best alignment, or `None` when this CPU has neither AVX2 nor AVX-512BW, the penalties
/// are outside what the striped pass assumes (`extend <= open`), or a score could have
/// saturated 16 bits. `HETKIT_WAVEFRONT_NO_SIMD` turns the striped passes off,
/// `HETKIT_WAVEFRONT_NO_8BIT` skips the 8-bit one, `HETKIT_WAVEFRONT_NO_AVX512` keeps both
/// on AVX2.
pub(crate) fn smith_waterman_simd(enc: &Encoded, parallel: bool) -> Option<Alignment> {
    let off = |var: &str| std::env::var_os(var).is_some();
    if off("HETKIT_WAVEFRONT_NO_SIMD") {
        return None;
    }
    let wide = Kernel::Avx512I16.detected() && !off("HETKIT_WAVEFRONT_NO_AVX512");
    if !off("HETKIT_WAVEFRONT_NO_8BIT")
        && let Some(al) =
            smith_waterman_kernel(enc, parallel, if wide { Kernel::Avx512I8 } else { Kernel::Avx2I8 })
    {
        return Some(al);
    }
    smith_waterman_kernel(enc, parallel, if wide { Kernel::Avx512I16 } else { Kernel::Avx2I16 })
}

/// One striped kernel; `None` when it is not detected, does not take the scoring, or may have
/// saturated.
pub(crate) fn smith_waterman_kernel(enc: &Encoded, parallel: bool, kernel: Kernel) -> Option<Alignment> {
    if !kernel.detected() || !kernel.takes(enc) {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        match kernel {
            Kernel::Avx512I8 => avx512_i8::run(enc, parallel),
            Kernel::Avx2I8 => avx2_i8::run(enc, parallel),
            Kernel::Avx512I16 => avx512::run(enc, parallel),
            Kernel::Avx2I16 => avx2::run(enc, parallel),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (enc, parallel);
        None
    }
}

/// The striped kernel over a lane type; the including module defines the vector `V`, its lane
/// type `T`, `LANES`, and the helpers `splat`, `adds`, `subs`, `max`, `shift_in`, `any_gt`,
/// `first_eq`, each `#[target_feature]` of the module's instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! striped {
    ($feature:literal) => {
        use std::ops::Range;

        use crate::apps::align::Alignment;
        use crate::apps::scoring::Encoded;
        use crate::apps::strips::{pipeline_chunk, run_strips, split};

        /// Score 0 in a lane.
        const ZERO: T = T::MIN;

        /// A score in `0 ..= T::MAX - T::MIN` as a lane value.
        fn lane_of(score: i32) -> T {
            (score + i32::from(T::MIN)) as T
        }

        /// The score a lane value stands for.
        fn score_of(x: T) -> i32 {
            i32::from(x) - i32::from(T::MIN)
        }

        #[inline]
        fn lanes(v: V) -> [T; LANES] {
            // SAFETY: same size, and every bit pattern is valid for both.
            unsafe { std::mem::transmute(v) }
        }

        #[inline]
        fn from_lanes(l: [T; LANES]) -> V {
            // SAFETY: same size, and every bit pattern is valid for both.
            unsafe { std::mem::transmute(l) }
        }

        /// One row strip in striped layout.
        struct Strip {
            rows: Range<usize>,
            seg: usize,
            /// `prof[y * seg + i]`: scores of the strip's rows against letter `y`.
            prof: Vec<V>,
            h_store: Vec<V>,
            h_load: Vec<V>,
            e: Vec<V>,
            corner: T,
            best: Alignment,
            /// Whether a strip below takes this one's bottom edge.
            below: bool,
        }

        // SAFETY: the vectors are plain data; a strip moves between pool threads as a whole.
        unsafe impl Send for Strip {}

        pub(super) fn run(enc: &Encoded, parallel: bool) -> Option<Alignment> {
            let m = enc.a.len();
            let threads =
                if parallel { rayon::current_num_threads().min(m / (16 * LANES)).max(1) } else { 1 };
            // A column of a strip touches four arrays of its rows (H in and out, E, the
            // profile's row): strips of at most 8 KiB per array keep them near L1 (32 KiB on
            // Zen 3), where a tall one streams five vectors per step from L2 (shorter strips
            // measured slower: each adds its per-column work). A multiple of the thread count
            // keeps the pipeline's threads equally busy.
            let parts = m.div_ceil(8192 / std::mem::size_of::<T>()).div_ceil(threads) * threads;
            let ranges = split(m, parts);
            let states: Vec<Strip> = ranges
                .into_iter()
                .enumerate()
                // SAFETY: `run` is called only after the instruction set was detected at run time.
                .map(|(s, rows)| unsafe { new_strip(rows, s + 1 < parts) })
                .collect();
            let n = enc.b.len();
            let (open, ext) = (enc.open as T, enc.extend as T);
            let states = run_strips(
                states,
                n,
                pipeline_chunk(n),
                parallel,
                |st: &mut Strip, _, cols, top: Option<&Vec<(T, T)>>| {
                    // SAFETY: as above.
                    unsafe {
                        if st.prof.is_empty() {
                            st.prof = build_profile(enc, st.rows.clone(), st.seg);
                        }
                        tile(st, &enc.b[cols.clone()], cols.start, top.map(|t| &t[..]), open, ext)
                    }
                },
            );
            let zero = Alignment { score: 0, end_a: 0, end_b: 0 };
            let best = states.iter().fold(zero, |acc, s| acc.better(s.best));
            // Only the add of a substitution score can saturate, and to `T::MAX`, in a real row
            // (a padding row stays `open` below the best real one), so the best shows it.
            (best.score < score_of(T::MAX)).then_some(best)
        }

        /// A strip without its query profile: the thread that sweeps it builds that in its first
        /// tile, so the strips' profiles are built at once and a second thread's wake-up overlaps
        /// the first one's build instead of following it.
        #[target_feature(enable = $feature)]
        fn new_strip(rows: Range<usize>, below: bool) -> Strip {
            let seg = rows.len().div_ceil(LANES);
            Strip {
                seg,
                prof: Vec::new(),
                h_store: vec![splat(ZERO); seg],
                h_load: vec![splat(ZERO); seg],
                e: vec![splat(ZERO); seg],
                corner: ZERO,
                best: Alignment { score: 0, end_a: 0, end_b: 0 },
                rows,
                below,
            }
        }

        /// The query profile of rows `rows` in striped layout: `prof[y * seg + i]`, lane `k`,
        /// scores row `k * seg + i` against letter `y`. Padding rows add `T::MIN`: they stay at
        /// the floor unless a gap reaches them.
        #[target_feature(enable = $feature)]
        fn build_profile(enc: &Encoded, rows: Range<usize>, seg: usize) -> Vec<V> {
            // The letters in striped order, padding as letter `size` (at most 255: the encoder
            // gives at most 255 letters), whose column entry stays `T::MIN`.
            let pad = enc.size as u8;
            let mut idx = vec![pad; seg * LANES];
            for (q, &x) in enc.a[rows].iter().enumerate() {
                idx[(q % seg) * LANES + q / seg] = x;
            }
            let mut prof = Vec::with_capacity(enc.size * seg);
            let mut column = [T::MIN; 256];
            for y in 0..enc.size {
                for (x, c) in column[..enc.size].iter_mut().enumerate() {
                    *c = enc.matrix[x * enc.size + y] as T;
                }
                profile_column(&column, enc.size + 1, &idx, &mut prof);
            }
            prof
        }

        /// Pushes one vector per `LANES` letters of `idx`, lane `k` taking `column[idx[k]]`.
        #[target_feature(enable = $feature)]
        fn profile_column_scalar(column: &[T; 256], idx: &[u8], prof: &mut Vec<V>) {
            for chunk in idx.chunks_exact(LANES) {
                let mut lane = [ZERO; LANES];
                for (v, &x) in lane.iter_mut().zip(chunk) {
                    *v = column[usize::from(x)];
                }
                prof.push(from_lanes(lane));
            }
        }

        /// The strip over columns `j0 ..` (letters `b`); returns the bottom row's `(H, F)` when
        /// a strip below needs them.
        #[target_feature(enable = $feature)]
        fn tile(st: &mut Strip, b: &[u8], j0: usize, top: Option<&[(T, T)]>, open: T, ext: T) -> Vec<(T, T)> {
            let seg = st.seg;
            let last = st.rows.len() - 1;
            let (i_last, lane_last) = (last % seg, last / seg);
            let (v_open, v_ext) = (splat(open), splat(ext));
            let mut v_best = splat(lane_of(st.best.score));
            let mut bottom = Vec::with_capacity(if st.below { b.len() } else { 0 });
            for (jj, &y) in b.iter().enumerate() {
                let (th, tf) = top.map_or((ZERO, ZERO), |t| t[jj]);
                let mut vf = shift_in(splat(ZERO), tf.saturating_sub(ext).max(th.saturating_sub(open)));
                let mut vh = shift_in(st.h_store[seg - 1], st.corner);
                st.corner = th;
                std::mem::swap(&mut st.h_store, &mut st.h_load);
                let prof = &st.prof[y as usize * seg..][..seg];
                let (h_store, h_load, e) = (&mut st.h_store[..seg], &st.h_load[..seg], &mut st.e[..seg]);
                let mut v_max = splat(ZERO);
                // One step of the main pass: H from the diagonal, E and F; F moves down a row.
                // The saturating add is the local floor. With `x` the H before F joins,
                // `H - open = max(x - open, F - open)` and `F - open <= F - extend`, so the next F
                // is `max(F - extend, x - open)`: the loop-carried chain is F -> F, two
                // instructions, where going through H would make it three.
                let mut step = |i: usize, vh: &mut V, vf: &mut V| {
                    let x = max(adds(*vh, prof[i]), e[i]);
                    let h = max(x, *vf);
                    v_max = max(v_max, h);
                    h_store[i] = h;
                    e[i] = max(subs(e[i], v_ext), subs(h, v_open));
                    *vf = max(subs(*vf, v_ext), subs(x, v_open));
                    *vh = h_load[i];
                };
                for i in 0..i_last {
                    step(i, &mut vh, &mut vf);
                }
                let mut vf_last = vf;
                for i in i_last..seg {
                    step(i, &mut vh, &mut vf);
                }
                // Lazy F: carry F across the lane boundaries until it can no longer win anywhere.
                'lazy: for _ in 0..LANES {
                    vf = shift_in(vf, ZERO);
                    for i in 0..seg {
                        if i == i_last {
                            vf_last = max(vf_last, vf);
                        }
                        let h_old = h_store[i];
                        let h = max(h_old, vf);
                        h_store[i] = h;
                        v_max = max(v_max, h);
                        e[i] = max(e[i], subs(h, v_open));
                        vf = subs(vf, v_ext);
                        // The main pass (or the round before) gave the next row an F of at
                        // least this row's earlier H - open: once that covers the carried F in
                        // every lane, nothing below changes. Comparing with the earlier H, not
                        // the corrected one, keeps this right when open = extend, and a lane
                        // saturated at the floor compares equal and stops.
                        if !any_gt(vf, subs(h_old, v_open)) {
                            break 'lazy;
                        }
                    }
                }
                if any_gt(v_max, v_best) {
                    note_best(st, j0 + jj, v_max);
                    v_best = splat(lane_of(st.best.score));
                }
                if st.below {
                    bottom.push((lanes(st.h_store[i_last])[lane_last], lanes(vf_last)[lane_last]));
                }
            }
            bottom
        }

        /// Records column `j`'s maximum `v_max` if it beats the best: the row is the smallest
        /// `q = lane * seg + i` holding it, found with one compare per vector.
        #[target_feature(enable = $feature)]
        fn note_best(st: &mut Strip, j: usize, v_max: V) {
            let seg = st.seg;
            let col_max = lanes(v_max).into_iter().max().unwrap_or(ZERO);
            if score_of(col_max) <= st.best.score {
                return;
            }
            let q = (0..seg).filter_map(|i| first_eq(st.h_store[i], col_max).map(|k| k * seg + i)).min();
            match q {
                Some(q) if q < st.rows.len() => {
                    st.best = Alignment { score: score_of(col_max), end_a: st.rows.start + q, end_b: j };
                }
                // The maximum sits in a padding row (possible only with open = 0): scan the real
                // rows one by one.
                _ => {
                    for q in 0..st.rows.len() {
                        let h = score_of(lanes(st.h_store[q % seg])[q / seg]);
                        if h > st.best.score {
                            st.best = Alignment { score: h, end_a: st.rows.start + q, end_b: j };
                        }
                    }
                }
            }
        }
    };
}

/// The AVX2 helpers of [`striped`] for lanes of `$width` bytes, from the intrinsics of that
/// width.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_lanes {
    ($t:ty, $width:literal, $set1:ident, $adds:ident, $subs:ident, $max:ident, $cmpgt:ident, $cmpeq:ident, $insert:ident) => {
        use std::arch::x86_64::*;

        type V = __m256i;
        type T = $t;
        const LANES: usize = 32 / $width;

        #[target_feature(enable = "avx2")]
        #[inline]
        fn splat(x: T) -> V {
            $set1(x)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        fn adds(a: V, b: V) -> V {
            $adds(a, b)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        fn subs(a: V, b: V) -> V {
            $subs(a, b)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        fn max(a: V, b: V) -> V {
            $max(a, b)
        }

        /// Lanes up by one, `x` into lane 0: the low half's top lane crosses into the high
        /// half through a copy of the low half moved up.
        #[target_feature(enable = "avx2")]
        #[inline]
        fn shift_in(v: V, x: T) -> V {
            let s = _mm256_alignr_epi8::<{ 16 - $width }>(v, _mm256_permute2x128_si256::<0x08>(v, v));
            $insert::<0>(s, x)
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        fn any_gt(a: V, b: V) -> bool {
            _mm256_movemask_epi8($cmpgt(a, b)) != 0
        }

        /// The lowest lane holding `x`.
        #[target_feature(enable = "avx2")]
        #[inline]
        fn first_eq(v: V, x: T) -> Option<usize> {
            let m = _mm256_movemask_epi8($cmpeq(v, $set1(x))) as u32;
            (m != 0).then(|| m.trailing_zeros() as usize / $width)
        }

        striped!("avx2");
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2_i8 {
    avx2_lanes!(
        i8,
        1,
        _mm256_set1_epi8,
        _mm256_adds_epi8,
        _mm256_subs_epi8,
        _mm256_max_epi8,
        _mm256_cmpgt_epi8,
        _mm256_cmpeq_epi8,
        _mm256_insert_epi8
    );

    /// [`profile_column_scalar`] 32 lanes at a time for up to 32 letters (BLOSUM62 has 24 and
    /// the padding one): two sixteen-entry byte shuffles and a blend on bit 4 of the letter.
    #[target_feature(enable = "avx2")]
    fn profile_column(column: &[T; 256], letters: usize, idx: &[u8], prof: &mut Vec<V>) {
        if letters > 32 {
            return profile_column_scalar(column, idx, prof);
        }
        // SAFETY: `column` has 256 bytes, of which the first 32 are read.
        let t = unsafe { _mm256_loadu_si256(column.as_ptr().cast()) };
        let lo = _mm256_permute2x128_si256::<0x00>(t, t);
        let hi = _mm256_permute2x128_si256::<0x11>(t, t);
        for chunk in idx.chunks_exact(LANES) {
            // SAFETY: `chunk` has LANES = 32 bytes.
            let ix = unsafe { _mm256_loadu_si256(chunk.as_ptr().cast()) };
            // Letters are below 32, so no index has its top bit set (which would zero the
            // lane); shifting the 16-bit lanes by 3 moves each byte's bit 4 to its top bit.
            let pick_hi = _mm256_slli_epi16::<3>(ix);
            prof.push(_mm256_blendv_epi8(_mm256_shuffle_epi8(lo, ix), _mm256_shuffle_epi8(hi, ix), pick_hi));
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    avx2_lanes!(
        i16,
        2,
        _mm256_set1_epi16,
        _mm256_adds_epi16,
        _mm256_subs_epi16,
        _mm256_max_epi16,
        _mm256_cmpgt_epi16,
        _mm256_cmpeq_epi16,
        _mm256_insert_epi16
    );

    #[target_feature(enable = "avx2")]
    fn profile_column(column: &[T; 256], _letters: usize, idx: &[u8], prof: &mut Vec<V>) {
        profile_column_scalar(column, idx, prof);
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    type V = __m512i;
    type T = i16;
    const LANES: usize = 32;

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn splat(x: T) -> V {
        _mm512_set1_epi16(x)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn adds(a: V, b: V) -> V {
        _mm512_adds_epi16(a, b)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn subs(a: V, b: V) -> V {
        _mm512_subs_epi16(a, b)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn max(a: V, b: V) -> V {
        _mm512_max_epi16(a, b)
    }

    /// Lanes up by one, `x` into lane 0: one cross-lane permute (lane `k` takes lane `k - 1`)
    /// whose masked-off lane 0 keeps `x`.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn shift_in(v: V, x: T) -> V {
        let up = _mm512_set_epi16(
            30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
            5, 4, 3, 2, 1, 0, 0,
        );
        _mm512_mask_permutexvar_epi16(_mm512_set1_epi16(x), !1, up, v)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn any_gt(a: V, b: V) -> bool {
        _mm512_cmpgt_epi16_mask(a, b) != 0
    }

    /// The lowest lane holding `x`.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn first_eq(v: V, x: T) -> Option<usize> {
        let m = _mm512_cmpeq_epi16_mask(v, _mm512_set1_epi16(x));
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    #[target_feature(enable = "avx512bw")]
    fn profile_column(column: &[T; 256], _letters: usize, idx: &[u8], prof: &mut Vec<V>) {
        profile_column_scalar(column, idx, prof);
    }

    striped!("avx512bw");
}

#[cfg(target_arch = "x86_64")]
mod avx512_i8 {
    use std::arch::x86_64::*;

    type V = __m512i;
    type T = i8;
    const LANES: usize = 64;

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn splat(x: T) -> V {
        _mm512_set1_epi8(x)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn adds(a: V, b: V) -> V {
        _mm512_adds_epi8(a, b)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn subs(a: V, b: V) -> V {
        _mm512_subs_epi8(a, b)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn max(a: V, b: V) -> V {
        _mm512_max_epi8(a, b)
    }

    /// Lanes up by one, `x` into lane 0, without AVX-512VBMI's byte permute: `valignd` moves
    /// each 128-bit block up by one (block 0 takes the top block of `splat(x)`), and the byte
    /// `alignr` joins every block with the top byte of the block below.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn shift_in(v: V, x: T) -> V {
        let below = _mm512_alignr_epi32::<12>(v, _mm512_set1_epi8(x));
        _mm512_alignr_epi8::<15>(v, below)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn any_gt(a: V, b: V) -> bool {
        _mm512_cmpgt_epi8_mask(a, b) != 0
    }

    /// The lowest lane holding `x`.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn first_eq(v: V, x: T) -> Option<usize> {
        let m = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(x));
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    /// [`profile_column_scalar`] 64 lanes at a time for up to 64 letters: one two-table byte
    /// permute needs AVX-512VBMI, so this uses four 16-entry shuffles within 128-bit blocks
    /// (`vpshufb` on each quarter of the column) and picks by bits 4 and 5 of the letter.
    #[target_feature(enable = "avx512bw")]
    fn profile_column(column: &[T; 256], letters: usize, idx: &[u8], prof: &mut Vec<V>) {
        if letters > 64 {
            return profile_column_scalar(column, idx, prof);
        }
        // SAFETY: `column` has 256 bytes, of which the first 64 are read.
        let t = unsafe { _mm512_loadu_si512(column.as_ptr().cast()) };
        let q: [V; 4] = [
            _mm512_shuffle_i32x4::<0x00>(t, t),
            _mm512_shuffle_i32x4::<0x55>(t, t),
            _mm512_shuffle_i32x4::<0xaa>(t, t),
            _mm512_shuffle_i32x4::<0xff>(t, t),
        ];
        let (bit4, bit5) = (_mm512_set1_epi8(16), _mm512_set1_epi8(32));
        for chunk in idx.chunks_exact(LANES) {
            // SAFETY: `chunk` has LANES = 64 bytes.
            let ix = unsafe { _mm512_loadu_si512(chunk.as_ptr().cast()) };
            // Letters are below 64: no index has its top bit set (which would zero the lane).
            let hi4 = _mm512_test_epi8_mask(ix, bit4);
            let lo_half =
                _mm512_mask_blend_epi8(hi4, _mm512_shuffle_epi8(q[0], ix), _mm512_shuffle_epi8(q[1], ix));
            let hi_half =
                _mm512_mask_blend_epi8(hi4, _mm512_shuffle_epi8(q[2], ix), _mm512_shuffle_epi8(q[3], ix));
            prof.push(_mm512_mask_blend_epi8(_mm512_test_epi8_mask(ix, bit5), lo_half, hi_half));
        }
    }

    striped!("avx512bw");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::align::gotoh_strips;
    use crate::apps::scoring::Scoring;

    fn lcg(seed: u64) -> impl FnMut(usize) -> usize {
        let mut x = seed;
        move |k| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % k
        }
    }

    /// Each kernel answers exactly when it is detected, takes the scoring and the score is below
    /// the top of its lanes, and then equals the scalar strips; so does the dispatcher.
    fn check(enc: &Encoded, what: &str) {
        for parallel in [false, true] {
            let want = gotoh_strips(enc, true, parallel).0;
            for kernel in Kernel::ALL {
                let top = if matches!(kernel, Kernel::Avx2I8 | Kernel::Avx512I8) { 255 } else { 65_535 };
                let answers = kernel.detected() && kernel.takes(enc) && want.score < top;
                let got = smith_waterman_kernel(enc, parallel, kernel);
                assert_eq!(got, answers.then_some(want), "{kernel:?} {what} parallel {parallel}");
            }
            assert_eq!(smith_waterman_simd(enc, parallel).unwrap_or(want), want, "{what}");
        }
    }

    /// The striped passes themselves (not a fallback) on every kernel this CPU has, against
    /// the scalar strips, with penalties where the lazy-F pass matters (open = extend), and
    /// queries tall enough for several strips on one thread (over 4096 rows for 16 bits, 8192
    /// for 8).
    #[test]
    fn striped_matches_scalar() {
        let mut next = lcg(12345);
        for (m, n) in [
            (1, 1),
            (15, 16),
            (16, 15),
            (17, 33),
            (31, 40),
            (33, 64),
            (250, 180),
            (600, 513),
            (1100, 90),
            (4500, 40),
            (8300, 30),
        ] {
            let a: Vec<u8> = (0..m).map(|_| b"ARNDCQEGHILKMFPSTWYV"[next(20)]).collect();
            let b: Vec<u8> = (0..n).map(|_| b"ARNDCQEGHILKMFPSTWYV"[next(20)]).collect();
            for (open, ext) in [(11, 1), (3, 3), (1, 1), (0, 0), (6, 2)] {
                let enc = Scoring::blosum62(open, ext).encode(&a, &b).unwrap();
                check(&enc, &format!("{m}x{n} {open}/{ext}"));
            }
        }
    }

    /// Alphabets around the 32 (AVX2) and 64 (AVX-512) letters, padding included, that the 8-bit
    /// profiles' byte shuffles cover, and beyond, where they are built letter by letter.
    #[test]
    fn large_alphabets() {
        let mut next = lcg(4242);
        for letters in [31usize, 32, 33, 63, 64, 65, 200] {
            let a: Vec<u8> = (0..700).map(|_| next(letters) as u8).collect();
            let b: Vec<u8> = (0..300).map(|_| next(letters) as u8).collect();
            for (open, ext) in [(3, 1), (2, 2)] {
                let enc = Scoring::simple(5, -2, open, ext).encode(&a, &b).unwrap();
                check(&enc, &format!("{letters} letters {open}/{ext}"));
            }
        }
    }

    /// Scores around the top of each lane type: the narrower kernels decline, the wider one and
    /// the dispatcher still give the scalar answer.
    #[test]
    fn saturation_falls_back() {
        let mut next = lcg(777);
        // (length of the shared segment, match score): scores len * match around 255 and 65 535.
        for (len, hit) in
            [(250, 1), (254, 1), (255, 1), (256, 1), (300, 1), (60, 1000), (66, 1000), (70, 1000)]
        {
            let core: Vec<u8> = (0..len).map(|_| b"ACGT"[next(4)]).collect();
            let mut a: Vec<u8> = (0..40).map(|_| b"ACGT"[next(4)]).collect();
            a.extend(&core);
            let mut b = core.clone();
            b.extend((0..25).map(|_| b"ACGT"[next(4)]));
            let enc = Scoring::simple(hit, -hit, hit, hit / 2).encode(&a, &b).unwrap();
            check(&enc, &format!("{len} x {hit}"));
        }
    }
}
