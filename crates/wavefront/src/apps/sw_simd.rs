//! Smith-Waterman with 16-bit lanes, Farrar's striped layout: the query strip's rows are dealt
//! round-robin to the lanes, so a column of the table is `seg` vectors and the vertical
//! dependency crosses lanes only in the "lazy F" correction pass (which also updates `E`, so the
//! result is full Gotoh). 32 lanes with AVX-512BW or 16 with AVX2, detected at run time (the
//! kernel is a macro over the lane type). Scores saturate at `i16::MAX`; a result that comes
//! near it is recomputed with 32-bit scalar code.
//!
//! Strips (one per core) are the tiles of [`crate::apps::strips::run_strips`]: each passes its
//! bottom row's `H` and `F` to the strip below.

use crate::apps::align::Alignment;
use crate::apps::scoring::Encoded;

/// The instruction sets the striped pass is written for, widest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    /// 32 lanes of `i16`.
    Avx512,
    /// 16 lanes of `i16`.
    Avx2,
}

impl Isa {
    /// Whether this CPU has the instruction set.
    pub(crate) fn detected(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Isa::Avx512 => std::is_x86_feature_detected!("avx512bw"),
                Isa::Avx2 => std::is_x86_feature_detected!("avx2"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }
}

/// The best alignment, or `None` when this CPU has neither AVX-512BW nor AVX2, the penalties
/// are outside what the striped pass assumes (`extend <= open`), or a score could have
/// saturated. `HETKIT_WAVEFRONT_NO_SIMD` turns the striped pass off, `HETKIT_WAVEFRONT_NO_AVX512`
/// keeps it on AVX2.
pub(crate) fn smith_waterman_simd(enc: &Encoded, parallel: bool) -> Option<Alignment> {
    if std::env::var_os("HETKIT_WAVEFRONT_NO_SIMD").is_some() {
        return None;
    }
    let wide = Isa::Avx512.detected() && std::env::var_os("HETKIT_WAVEFRONT_NO_AVX512").is_none();
    let isa = if wide { Isa::Avx512 } else { Isa::Avx2 };
    smith_waterman_isa(enc, parallel, isa)
}

/// The striped pass on one instruction set; `None` where [`smith_waterman_simd`] gives `None`.
pub(crate) fn smith_waterman_isa(enc: &Encoded, parallel: bool, isa: Isa) -> Option<Alignment> {
    if enc.extend > enc.open || !isa.detected() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        match isa {
            Isa::Avx512 => avx512::run(enc, parallel),
            Isa::Avx2 => avx2::run(enc, parallel),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (enc, parallel);
        None
    }
}

/// The striped kernel over a lane type; the including module defines `V`, `LANES`, `FEATURE`
/// and the helpers `splat`, `adds`, `subs`, `max`, `shift_in`, `all_gt`, `any_gt`, `first_eq`, `lanes`,
/// each `#[target_feature]` of the module's instruction set.
#[cfg(target_arch = "x86_64")]
macro_rules! striped {
    ($feature:literal) => {
        use std::ops::Range;

        use crate::apps::align::Alignment;
        use crate::apps::scoring::Encoded;
        use crate::apps::strips::{run_strips, split};

        /// One row strip in striped layout.
        struct Strip {
            rows: Range<usize>,
            seg: usize,
            /// `prof[y * seg + i]`: scores of the strip's rows against letter `y`.
            prof: Vec<V>,
            h_store: Vec<V>,
            h_load: Vec<V>,
            e: Vec<V>,
            corner: i16,
            best: Alignment,
        }

        pub(super) fn run(enc: &Encoded, parallel: bool) -> Option<Alignment> {
            let m = enc.a.len();
            let parts = if parallel { rayon::current_num_threads().min(m / (16 * LANES)).max(1) } else { 1 };
            let states: Vec<Strip> = split(m, parts)
                .into_iter()
                // SAFETY: `run` is called only after the instruction set was detected at run time.
                .map(|rows| unsafe { new_strip(enc, rows) })
                .collect();
            let n = enc.b.len();
            let chunk = 256.max(n / 64);
            let (open, ext) = (enc.open as i16, enc.extend as i16);
            let states = run_strips(
                states,
                n,
                chunk,
                parallel,
                |st: &mut Strip, _, cols, top: Option<&Vec<(i16, i16)>>| {
                    // SAFETY: as above.
                    unsafe { tile(st, &enc.b[cols.clone()], cols.start, top.map(|t| &t[..]), open, ext) }
                },
            );
            let zero = Alignment { score: 0, end_a: 0, end_b: 0 };
            let best = states.iter().fold(zero, |acc, s| acc.better(s.best));
            // Saturation: any H at i16::MAX shows up as a best that close; then trust nothing.
            (best.score < i32::from(i16::MAX) - enc.max_score().max(1)).then_some(best)
        }

        #[target_feature(enable = $feature)]
        fn new_strip(enc: &Encoded, rows: Range<usize>) -> Strip {
            let seg = rows.len().div_ceil(LANES);
            let mut prof = Vec::with_capacity(enc.size * seg);
            for y in 0..enc.size as u8 {
                for i in 0..seg {
                    let mut lane = [i16::MIN; LANES];
                    for (k, v) in lane.iter_mut().enumerate() {
                        let q = k * seg + i;
                        if q < rows.len() {
                            *v = enc.score(enc.a[rows.start + q], y) as i16;
                        }
                    }
                    prof.push(from_lanes(lane));
                }
            }
            Strip {
                seg,
                prof,
                h_store: vec![splat(0); seg],
                h_load: vec![splat(0); seg],
                e: vec![splat(i16::MIN); seg],
                corner: 0,
                best: Alignment { score: 0, end_a: 0, end_b: 0 },
                rows,
            }
        }

        /// The strip over columns `j0 ..` (letters `b`); returns the bottom row's `(H, F)`.
        #[target_feature(enable = $feature)]
        fn tile(
            st: &mut Strip,
            b: &[u8],
            j0: usize,
            top: Option<&[(i16, i16)]>,
            open: i16,
            ext: i16,
        ) -> Vec<(i16, i16)> {
            let seg = st.seg;
            let last = st.rows.len() - 1;
            let (i_last, lane_last) = (last % seg, last / seg);
            let (v_open, v_ext, zero) = (splat(open), splat(ext), splat(0));
            let mut v_best = splat(st.best.score as i16);
            let mut bottom = Vec::with_capacity(b.len());
            for (jj, &y) in b.iter().enumerate() {
                let (th, tf) = top.map_or((0, i16::MIN), |t| t[jj]);
                let mut vf = shift_in(splat(i16::MIN), tf.saturating_sub(ext).max(th.saturating_sub(open)));
                let mut vh = shift_in(st.h_store[seg - 1], st.corner);
                st.corner = th;
                std::mem::swap(&mut st.h_store, &mut st.h_load);
                let prof = &st.prof[y as usize * seg..][..seg];
                let (h_store, h_load, e) = (&mut st.h_store[..seg], &st.h_load[..seg], &mut st.e[..seg]);
                let mut v_max = zero;
                // One step of the main pass: H from the diagonal, E and F; F moves down a row.
                let mut step = |i: usize, vh: &mut V, vf: &mut V| {
                    // F joins last: the loop-carried chain F -> H -> F is three instructions.
                    let h = max(max(max(adds(*vh, prof[i]), e[i]), zero), *vf);
                    v_max = max(v_max, h);
                    h_store[i] = h;
                    let ho = subs(h, v_open);
                    e[i] = max(subs(e[i], v_ext), ho);
                    *vf = max(subs(*vf, v_ext), ho);
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
                    vf = shift_in(vf, i16::MIN);
                    for i in 0..seg {
                        if i == i_last {
                            vf_last = max(vf_last, vf);
                        }
                        let h = max(h_store[i], vf);
                        h_store[i] = h;
                        v_max = max(v_max, h);
                        let ho = subs(h, v_open);
                        e[i] = max(e[i], ho);
                        vf = subs(vf, v_ext);
                        // Stop when every lane's carried F is below what H - open already gives.
                        if all_gt(ho, vf) {
                            break 'lazy;
                        }
                    }
                }
                if any_gt(v_max, v_best) {
                    note_best(st, j0 + jj, v_max);
                    v_best = splat(st.best.score as i16);
                }
                bottom.push((lanes(st.h_store[i_last])[lane_last], lanes(vf_last)[lane_last]));
            }
            bottom
        }

        /// Records column `j`'s maximum `v_max` if it beats the best: the row is the smallest
        /// `q = lane * seg + i` holding it, found with one compare per vector.
        #[target_feature(enable = $feature)]
        fn note_best(st: &mut Strip, j: usize, v_max: V) {
            let seg = st.seg;
            let col_max = lanes(v_max).into_iter().max().unwrap_or(0);
            if i32::from(col_max) <= st.best.score {
                return;
            }
            let q = (0..seg).filter_map(|i| first_eq(st.h_store[i], col_max).map(|k| k * seg + i)).min();
            match q {
                Some(q) if q < st.rows.len() => {
                    st.best = Alignment { score: i32::from(col_max), end_a: st.rows.start + q, end_b: j };
                }
                // The maximum sits in a padding row (possible only with open = 0): scan the real
                // rows one by one.
                _ => {
                    for q in 0..st.rows.len() {
                        let h = i32::from(lanes(st.h_store[q % seg])[q / seg]);
                        if h > st.best.score {
                            st.best = Alignment { score: h, end_a: st.rows.start + q, end_b: j };
                        }
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    type V = __m256i;
    const LANES: usize = 16;

    // SAFETY: the vectors are plain data; a strip moves between pool threads as a whole.
    unsafe impl Send for Strip {}

    #[target_feature(enable = "avx2")]
    #[inline]
    fn splat(x: i16) -> V {
        _mm256_set1_epi16(x)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn adds(a: V, b: V) -> V {
        _mm256_adds_epi16(a, b)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn subs(a: V, b: V) -> V {
        _mm256_subs_epi16(a, b)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn max(a: V, b: V) -> V {
        _mm256_max_epi16(a, b)
    }

    /// Lanes up by one, `x` into lane 0.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn shift_in(v: V, x: i16) -> V {
        let s = _mm256_alignr_epi8::<14>(v, _mm256_permute2x128_si256::<0x08>(v, v));
        _mm256_insert_epi16::<0>(s, x)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn all_gt(a: V, b: V) -> bool {
        _mm256_movemask_epi8(_mm256_cmpgt_epi16(a, b)) == -1
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn any_gt(a: V, b: V) -> bool {
        _mm256_movemask_epi8(_mm256_cmpgt_epi16(a, b)) != 0
    }

    /// The lowest lane holding `x`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn first_eq(v: V, x: i16) -> Option<usize> {
        let m = _mm256_movemask_epi8(_mm256_cmpeq_epi16(v, _mm256_set1_epi16(x))) as u32;
        (m != 0).then(|| m.trailing_zeros() as usize / 2)
    }

    #[inline]
    fn lanes(v: V) -> [i16; LANES] {
        // SAFETY: same size, and every bit pattern is valid for both.
        unsafe { std::mem::transmute(v) }
    }

    #[inline]
    fn from_lanes(l: [i16; LANES]) -> V {
        // SAFETY: same size, and every bit pattern is valid for both.
        unsafe { std::mem::transmute(l) }
    }

    striped!("avx2");
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    type V = __m512i;
    const LANES: usize = 32;

    // SAFETY: the vectors are plain data; a strip moves between pool threads as a whole.
    unsafe impl Send for Strip {}

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn splat(x: i16) -> V {
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
    fn shift_in(v: V, x: i16) -> V {
        let up = _mm512_set_epi16(
            30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
            5, 4, 3, 2, 1, 0, 0,
        );
        _mm512_mask_permutexvar_epi16(_mm512_set1_epi16(x), !1, up, v)
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn all_gt(a: V, b: V) -> bool {
        _mm512_cmpgt_epi16_mask(a, b) == u32::MAX
    }

    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn any_gt(a: V, b: V) -> bool {
        _mm512_cmpgt_epi16_mask(a, b) != 0
    }

    /// The lowest lane holding `x`.
    #[target_feature(enable = "avx512bw")]
    #[inline]
    fn first_eq(v: V, x: i16) -> Option<usize> {
        let m = _mm512_cmpeq_epi16_mask(v, _mm512_set1_epi16(x));
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    #[inline]
    fn lanes(v: V) -> [i16; LANES] {
        // SAFETY: same size, and every bit pattern is valid for both.
        unsafe { std::mem::transmute(v) }
    }

    #[inline]
    fn from_lanes(l: [i16; LANES]) -> V {
        // SAFETY: same size, and every bit pattern is valid for both.
        unsafe { std::mem::transmute(l) }
    }

    striped!("avx512bw");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::align::gotoh_strips;
    use crate::apps::scoring::Scoring;

    /// The striped pass itself (not a fallback) on every instruction set this CPU has, against
    /// the scalar strips.
    #[test]
    fn striped_matches_scalar() {
        let mut x = 12345u64;
        let mut next = |k: usize| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) as usize % k
        };
        for (m, n) in [(1, 1), (15, 16), (16, 15), (17, 33), (250, 180), (600, 513)] {
            let a: Vec<u8> = (0..m).map(|_| b"ARNDCQEGHILKMFPSTWYV"[next(20)]).collect();
            let b: Vec<u8> = (0..n).map(|_| b"ARNDCQEGHILKMFPSTWYV"[next(20)]).collect();
            for (open, ext) in [(11, 1), (3, 3), (0, 0)] {
                let enc = Scoring::blosum62(open, ext).encode(&a, &b).unwrap();
                for parallel in [false, true] {
                    for isa in [Isa::Avx512, Isa::Avx2] {
                        let simd = smith_waterman_isa(&enc, parallel, isa);
                        assert_eq!(simd.is_some(), isa.detected(), "{isa:?}");
                        if let Some(got) = simd {
                            let want = gotoh_strips(&enc, true, parallel).0;
                            assert_eq!(got, want, "{isa:?} {m}x{n} {open}/{ext}");
                        }
                    }
                }
            }
        }
    }
}
