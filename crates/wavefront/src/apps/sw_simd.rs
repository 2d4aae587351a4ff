//! Smith-Waterman with 16 lanes of 16 bits (AVX2), Farrar's striped layout: the query strip's
//! rows are dealt round-robin to the lanes, so a column of the table is `seg` vectors and the
//! vertical dependency crosses lanes only in the "lazy F" correction pass. Scores saturate at
//! `i16::MAX`; a result that comes near it is recomputed with 32-bit scalar code.
//!
//! Strips (one per core) are the tiles of [`run_strips`]: each passes its bottom row's `H` and
//! `F` to the strip below.

use crate::apps::align::Alignment;
use crate::apps::scoring::Encoded;

/// The best alignment, or `None` when this CPU has no AVX2, the penalties are outside what the
/// striped pass assumes (`extend <= open`), or a score could have saturated.
pub(crate) fn smith_waterman_simd(enc: &Encoded, parallel: bool) -> Option<Alignment> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && enc.extend <= enc.open && enc.open <= 1000 {
            return avx2::run(enc, parallel);
        }
    }
    let _ = (enc, parallel);
    None
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use crate::apps::align::Alignment;
    use crate::apps::scoring::Encoded;
    use crate::apps::strips::{run_strips, split};

    const LANES: usize = 16;

    /// One row strip in striped layout.
    struct Strip {
        rows: Range<usize>,
        seg: usize,
        /// `prof[y * seg + i]`: scores of the strip's rows against letter `y`.
        prof: Vec<__m256i>,
        h_store: Vec<__m256i>,
        h_load: Vec<__m256i>,
        e: Vec<__m256i>,
        corner: i16,
        best: Alignment,
    }

    // SAFETY: `__m256i` is plain data; the strip moves between pool threads as a whole.
    unsafe impl Send for Strip {}

    pub(super) fn run(enc: &Encoded, parallel: bool) -> Option<Alignment> {
        let m = enc.a.len();
        let parts = if parallel { rayon::current_num_threads().min(m / 256).max(1) } else { 1 };
        let states: Vec<Strip> = split(m, parts).into_iter().map(|rows| new_strip(enc, rows)).collect();
        let n = enc.b.len();
        let chunk = 256.max(n / 64);
        let (open, ext) = (enc.open as i16, enc.extend as i16);
        let states = run_strips(
            states,
            n,
            chunk,
            parallel,
            |st: &mut Strip, _, cols, top: Option<&Vec<(i16, i16)>>| {
                // SAFETY: `run` is only called after AVX2 was detected at run time.
                unsafe { tile(st, &enc.b[cols.clone()], cols.start, top.map(|t| &t[..]), open, ext) }
            },
        );
        let best =
            states.iter().fold(Alignment { score: 0, end_a: 0, end_b: 0 }, |acc, s| acc.better(s.best));
        // Saturation: any H at i16::MAX shows up as a best that close; then trust nothing.
        (best.score < i32::from(i16::MAX) - enc.max_score().max(1)).then_some(best)
    }

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
                // SAFETY: an unaligned load from a local array of 32 bytes.
                prof.push(unsafe { _mm256_loadu_si256(lane.as_ptr().cast()) });
            }
        }
        // SAFETY: plain constants (AVX intrinsics callable: AVX2 was detected).
        let (zero, neg) = unsafe { (_mm256_setzero_si256(), _mm256_set1_epi16(i16::MIN)) };
        Strip {
            seg,
            prof,
            h_store: vec![zero; seg],
            h_load: vec![zero; seg],
            e: vec![neg; seg],
            corner: 0,
            best: Alignment { score: 0, end_a: 0, end_b: 0 },
            rows,
        }
    }

    /// Shifts the 16 lanes up by one (lane 0 gets `x`).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn shift_in(v: __m256i, x: i16) -> __m256i {
        let s = _mm256_alignr_epi8::<14>(v, _mm256_permute2x128_si256::<0x08>(v, v));
        _mm256_insert_epi16::<0>(s, x)
    }

    #[inline(always)]
    fn lanes(v: __m256i) -> [i16; LANES] {
        // SAFETY: `__m256i` and `[i16; 16]` have the same size and no invalid bit patterns.
        unsafe { std::mem::transmute(v) }
    }

    /// The strip over columns `j0 ..` (letters `b`); returns the bottom row's `(H, F)`.
    #[target_feature(enable = "avx2")]
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
        let v_open = _mm256_set1_epi16(open);
        let v_ext = _mm256_set1_epi16(ext);
        let zero = _mm256_setzero_si256();
        let neg = _mm256_set1_epi16(i16::MIN);
        let mut v_best = _mm256_set1_epi16(st.best.score as i16);
        let mut bottom = Vec::with_capacity(b.len());
        for (jj, &y) in b.iter().enumerate() {
            let (th, tf) = top.map_or((0, i16::MIN), |t| t[jj]);
            let mut vf = shift_in(neg, tf.saturating_sub(ext).max(th.saturating_sub(open)));
            let mut vh = shift_in(st.h_store[seg - 1], st.corner);
            st.corner = th;
            std::mem::swap(&mut st.h_store, &mut st.h_load);
            let prof = &st.prof[y as usize * seg..][..seg];
            let (h_store, h_load, e) = (&mut st.h_store[..seg], &st.h_load[..seg], &mut st.e[..seg]);
            let mut v_max = zero;
            let mut vf_last = neg;
            for i in 0..seg {
                vh = _mm256_adds_epi16(vh, prof[i]);
                let ve = e[i];
                if i == i_last {
                    vf_last = vf;
                }
                vh = _mm256_max_epi16(_mm256_max_epi16(vh, ve), _mm256_max_epi16(vf, zero));
                v_max = _mm256_max_epi16(v_max, vh);
                h_store[i] = vh;
                let vho = _mm256_subs_epi16(vh, v_open);
                e[i] = _mm256_max_epi16(_mm256_subs_epi16(ve, v_ext), vho);
                vf = _mm256_max_epi16(_mm256_subs_epi16(vf, v_ext), vho);
                vh = h_load[i];
            }
            // Lazy F: carry F across the lane boundaries until it can no longer win anywhere.
            'lazy: for _ in 0..LANES {
                vf = shift_in(vf, i16::MIN);
                for i in 0..seg {
                    if i == i_last {
                        vf_last = _mm256_max_epi16(vf_last, vf);
                    }
                    let vh = _mm256_max_epi16(h_store[i], vf);
                    h_store[i] = vh;
                    v_max = _mm256_max_epi16(v_max, vh);
                    let vho = _mm256_subs_epi16(vh, v_open);
                    e[i] = _mm256_max_epi16(e[i], vho);
                    vf = _mm256_subs_epi16(vf, v_ext);
                    // Stop when every lane's carried F is below what H - open already gives.
                    if _mm256_movemask_epi8(_mm256_cmpgt_epi16(vho, vf)) == -1 {
                        break 'lazy;
                    }
                }
            }
            if _mm256_movemask_epi8(_mm256_cmpgt_epi16(v_max, v_best)) != 0 {
                note_best(st, j0 + jj);
                v_best = _mm256_set1_epi16(st.best.score as i16);
            }
            bottom.push((lanes(st.h_store[i_last])[lane_last], lanes(vf_last)[lane_last]));
        }
        bottom
    }

    /// Scans column `j` (real rows only, ascending) for a new best.
    fn note_best(st: &mut Strip, j: usize) {
        let seg = st.seg;
        let mut best = st.best;
        let col: Vec<[i16; LANES]> = st.h_store.iter().map(|&v| lanes(v)).collect();
        for q in 0..st.rows.len() {
            let h = i32::from(col[q % seg][q / seg]);
            if h > best.score {
                best = Alignment { score: h, end_a: st.rows.start + q, end_b: j };
            }
        }
        st.best = best;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::align::gotoh_strips;
    use crate::apps::scoring::Scoring;

    /// The striped pass itself (not a fallback) against the scalar strips, where AVX2 exists.
    #[test]
    fn striped_matches_scalar() {
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
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
                    let simd = smith_waterman_simd(&enc, parallel);
                    assert_eq!(simd.is_some(), avx2);
                    if let Some(got) = simd {
                        assert_eq!(got, gotoh_strips(&enc, true, parallel).0, "{m}x{n} {open}/{ext}");
                    }
                }
            }
        }
    }
}
