//! The comb network on 64, 128 or 256 keys of 32 bits held in AVX2 registers, one row at a time.
//!
//! `R` registers of eight lanes hold `N = 8R` keys, key `i` in lane `i / R` of register `i % R`
//! (the register is the low part of the index). A comparator of the comb network with high bit
//! `h` (see [`super::network`]) then pairs:
//!
//! - for `h < log2 R`, register `r` with register `r ^ j` (or its mirror in the block, for a
//!   flip), lane for lane: one `vpminud` and one `vpmaxud` on whole registers, no shuffle;
//! - for `h >= log2 R`, lanes of a register with lanes of the same register (half-cleaner) or of
//!   the mirror register (flip): one lane permutation, the min and max, and a blend that keeps
//!   the minima in the lower lanes.
//!
//! For 256 keys that is 30 shuffle-free layers of the 36 and 6 with shuffles. The keys come in in
//! any order (a sort does not care where a key starts) and go out through 8 x 8 transposes of
//! blocks of eight registers, which put lane `l` of registers `8b .. 8b + 7` at `l R + 8b`.

#[cfg(target_arch = "x86_64")]
pub(super) use x86::*;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Lanes of a register.
    pub(crate) const LANES: usize = 8;
    /// The most keys one network sorts (32 registers).
    pub(crate) const MAX_KEYS: usize = 256;
    /// The fewest keys one network sorts (8 registers, one transpose block).
    pub(crate) const MIN_KEYS: usize = 64;

    /// Sorts `keys` (at most [`MAX_KEYS`]) ascending, padding them to a power of two of at
    /// least [`MIN_KEYS`] with `u32::MAX`; the sorted keys go to `out` (`out.len() ==
    /// keys.len()`; `keys` and `out` may be the same memory only through [`sort_in_place`]).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn sort_into(keys: &[u32], out: &mut [u32]) {
        assert!(keys.len() <= MAX_KEYS && out.len() == keys.len(), "sort_into: lengths");
        // SAFETY: `keys` and `out` hold n keys each (asserted) and do not overlap (borrows).
        unsafe { sort_raw(keys.as_ptr(), out.as_mut_ptr(), keys.len()) }
    }

    /// [`sort_into`] with the output over the input.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn sort_in_place(keys: &mut [u32]) {
        assert!(keys.len() <= MAX_KEYS, "sort_in_place: length");
        let p = keys.as_mut_ptr();
        // SAFETY: `keys` holds n keys; `sort_raw` reads every key before it writes one.
        unsafe { sort_raw(p, p, keys.len()) }
    }

    /// Sorts the `n <= MAX_KEYS` keys at `src` into `dst` (which may be `src`). A row that fills
    /// its network (64, 128 or 256 keys) loads and stores straight from and to the row; other
    /// lengths go through an aligned buffer padded with `u32::MAX`.
    ///
    /// # Safety
    /// AVX2; `src` valid for reading and `dst` for writing `n` keys; if they overlap, they are
    /// the same pointer.
    #[target_feature(enable = "avx2")]
    unsafe fn sort_raw(src: *const u32, dst: *mut u32, n: usize) {
        // SAFETY: n keys at src and dst (the caller's contract), the network size equal to n in
        // the arms that sort in place of the row; the buffer holds MAX_KEYS >= n keys.
        unsafe {
            match n {
                0 | 1 => {
                    if n == 1 {
                        *dst = *src;
                    }
                }
                64 => sort_regs::<8>(src, dst),
                128 => sort_regs::<16>(src, dst),
                256 => sort_regs::<32>(src, dst),
                _ => {
                    let mut buf = Buf([u32::MAX; MAX_KEYS]);
                    std::ptr::copy_nonoverlapping(src, buf.0.as_mut_ptr(), n);
                    let p = buf.0.as_mut_ptr();
                    if n <= MIN_KEYS {
                        sort_regs::<8>(p, p)
                    } else if n <= 128 {
                        sort_regs::<16>(p, p)
                    } else {
                        sort_regs::<32>(p, p)
                    }
                    std::ptr::copy_nonoverlapping(buf.0.as_ptr(), dst, n);
                }
            }
        }
    }

    /// A row's worth of keys, aligned for whole-register loads and stores.
    #[repr(align(32))]
    struct Buf([u32; MAX_KEYS]);

    /// Loads `R` registers from `src`, sorts their `8R` keys, stores them to `dst` in order.
    ///
    /// # Safety
    /// AVX2; `8R` keys readable at `src` and writable at `dst` (the same pointer or disjoint):
    /// every load comes before the first store.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn sort_regs<const R: usize>(src: *const u32, dst: *mut u32) {
        let p = src.cast::<__m256i>();
        // SAFETY: R registers of 8 keys lie at src (the caller's contract).
        let mut v: [__m256i; R] = std::array::from_fn(|r| unsafe { _mm256_loadu_si256(p.add(r)) });
        network(&mut v);
        let q = dst.cast::<__m256i>();
        for b in 0..R / LANES {
            let t = transpose(std::array::from_fn(|i| v[b * LANES + i]));
            for (l, x) in t.into_iter().enumerate() {
                // SAFETY: lane l of block b goes to keys l R + 8b .. + 8, inside the 8R keys at
                // dst (R and 8b are multiples of 8).
                unsafe { _mm256_storeu_si256(q.add((l * R + b * LANES) / LANES), x) };
            }
        }
    }

    /// The comb network on `8R` keys in the register layout of the module docs, written out with
    /// constant parameters so that it compiles to straight-line register code (a loop over
    /// runtime layer sizes indexes the register array at run time and keeps it in memory).
    ///
    /// The layers run in *groups*: up to three consecutive layers of a stage whose masks have
    /// distinct high bits only ever pair registers inside one orbit of at most eight registers
    /// (`b ^ span{m1, m2, m3}`), so each orbit runs all of them before the next orbit starts.
    /// Comparators of different orbits commute, so this is the same network; with 32 registers
    /// (256 keys) in 16 `ymm` it keeps eight registers live per group instead of streaming all
    /// 32 through the spill slots once per layer.
    #[inline(always)]
    fn network<const R: usize>(v: &mut [__m256i; R]) {
        // Stages 1-3 stay inside blocks of eight registers.
        first_three_stages(v);
        // Stages 4 and 5 (flip 15, then 4 2 1; flip 31, then 8 4 2 1) in three groups where
        // both run: the last layer of stage 4 joins the first two of stage 5.
        if R == 16 {
            group::<R, 15, 4, 2, NO_LANES>(v);
            group::<R, 1, 0, 0, NO_LANES>(v);
        }
        if R >= 32 {
            group::<R, 15, 4, 2, NO_LANES>(v);
            group::<R, 1, 31, 8, NO_LANES>(v);
            group::<R, 4, 2, 1, NO_LANES>(v);
        }
        lane_stage::<R, 0>(v);
        lane_stage::<R, 1>(v);
        lane_stage::<R, 2>(v);
    }

    /// The first layer of a group is a plain register comparator.
    const NO_LANES: i32 = -1;

    /// Stages 1, 2 and 3 (register masks 1 | 3, 1 | 7, 2, 1) on each block of eight registers.
    #[inline(always)]
    fn first_three_stages<const R: usize>(v: &mut [__m256i; R]) {
        for blk in 0..R / 8 {
            let o = blk * 8;
            let mut w: [__m256i; 8] = std::array::from_fn(|i| v[o + i]);
            layer8::<1>(&mut w);
            layer8::<3>(&mut w);
            layer8::<1>(&mut w);
            layer8::<7>(&mut w);
            layer8::<2>(&mut w);
            layer8::<1>(&mut w);
            v[o..o + 8].copy_from_slice(&w);
        }
    }

    /// One layer of register mask `M` on eight registers.
    #[inline(always)]
    fn layer8<const M: usize>(w: &mut [__m256i; 8]) {
        for i in 0..8 {
            if i & high_bit(M) == 0 {
                cas(w, i, i ^ M);
            }
        }
    }

    /// The highest set bit of `m` (as a mask), 0 for 0.
    const fn high_bit(m: usize) -> usize {
        if m == 0 { 0 } else { 1 << (usize::BITS - 1 - m.leading_zeros()) }
    }

    /// Layers with register masks `M1`, `M2`, `M3` (0: none, only after the others; linearly
    /// independent over GF(2), each below `R`; see [`pivots`]), orbit by orbit. A layer pairs register `i` with `i ^ M`, the lower keys in the
    /// register whose bit `high_bit(M)` is clear. `LHB >= 0` makes the first layer the lane
    /// flip on lane bit `LHB` (`M1 = R - 1`), followed by the in-register half-cleaners on lane
    /// bits `LHB - 1 ..= 0` of every register of the orbit.
    #[inline(always)]
    fn group<const R: usize, const M1: usize, const M2: usize, const M3: usize, const LHB: i32>(
        v: &mut [__m256i; R],
    ) {
        let k = (M1 != 0) as usize + (M2 != 0) as usize + (M3 != 0) as usize;
        let hbs = const { pivots([M1, M2, M3]) };
        let comb = |c: usize| {
            (if c & 1 != 0 { M1 } else { 0 })
                ^ (if c & 2 != 0 { M2 } else { 0 })
                ^ (if c & 4 != 0 { M3 } else { 0 })
        };
        for q in 0..R >> k {
            // The orbit's representative: q with zero bits inserted at the pivots, which include
            // every mask's high bit, so bit `high_bit(M)` of member `b ^ comb(c)` is that of
            // `comb(c)`, known at compile time.
            let mut b = q;
            for h in hbs {
                if h != 0 {
                    b = ((b & !(h - 1)) << 1) | (b & (h - 1));
                }
            }
            // The orbit in a local array indexed by constants (member c is `b ^ comb(c)`; layer t
            // pairs c with c ^ 2^t): registers even where the loop over orbits stays a loop.
            let mut w: [__m256i; 8] = [v[b]; 8];
            for (c, x) in w.iter_mut().enumerate() {
                if c < 1 << k {
                    *x = v[b ^ comb(c)];
                }
            }
            orbit_layer::<M1, M2, M3, 0, LHB>(&mut w, k);
            if M2 != 0 {
                orbit_layer::<M1, M2, M3, 1, NO_LANES>(&mut w, k);
            }
            if M3 != 0 {
                orbit_layer::<M1, M2, M3, 2, NO_LANES>(&mut w, k);
            }
            for (c, &x) in w.iter().enumerate() {
                if c < 1 << k {
                    v[b ^ comb(c)] = x;
                }
            }
        }
    }

    /// Layer `T` of a [`group`] on the orbit's `2^k` registers `w` (member `c` is `b ^ comb(c)`),
    /// with every index a constant once unrolled.
    #[inline(always)]
    fn orbit_layer<const M1: usize, const M2: usize, const M3: usize, const T: usize, const LHB: i32>(
        w: &mut [__m256i; 8],
        k: usize,
    ) {
        let comb = |c: usize| {
            (if c & 1 != 0 { M1 } else { 0 })
                ^ (if c & 2 != 0 { M2 } else { 0 })
                ^ (if c & 4 != 0 { M3 } else { 0 })
        };
        let hb = high_bit([M1, M2, M3][T]);
        for c in 0..8 {
            if c >= 1 << k || comb(c) & hb != 0 {
                continue;
            }
            let d = c ^ (1 << T);
            if LHB >= 0 {
                // SAFETY: AVX2 is enabled in every caller (`sort_regs`), here and below.
                unsafe { flip_lanes_pair(w, c, d, LHB as u32) };
            } else {
                cas(w, c, d);
            }
        }
        for (c, x) in w.iter_mut().enumerate() {
            // SAFETY: as above.
            unsafe {
                if c < 1 << k && LHB >= 2 {
                    *x = clean_lanes(*x, 1);
                }
                if c < 1 << k && LHB >= 1 {
                    *x = clean_lanes(*x, 0);
                }
            }
        }
    }

    /// The pivot bits (as masks, ascending, 0 for none) of the span of `masks`: the leading bits
    /// of its reduced echelon basis. Each orbit `b ^ span` holds exactly one register with all
    /// pivot bits clear, and every mask's high bit is a pivot. Fails to compile (it runs in a
    /// `const` block) when the masks are dependent or a 0 precedes a mask.
    const fn pivots(masks: [usize; 3]) -> [usize; 3] {
        let mut basis = [0usize; 3];
        let mut n = 0;
        let mut i = 0;
        while i < 3 {
            let mut x = masks[i];
            let mut j = 0;
            while j < n {
                if x & high_bit(basis[j]) != 0 {
                    x ^= basis[j];
                }
                j += 1;
            }
            assert!((x != 0) == (masks[i] != 0), "dependent masks");
            assert!(masks[i] == 0 || i == n, "a mask after an empty one");
            if x != 0 {
                // Keep the basis reduced: no vector has a bit at another's lead.
                let mut j = 0;
                while j < n {
                    if basis[j] & high_bit(x) != 0 {
                        basis[j] ^= x;
                    }
                    j += 1;
                }
                basis[n] = x;
                n += 1;
            }
            i += 1;
        }
        let mut p = [high_bit(basis[0]), high_bit(basis[1]), high_bit(basis[2])];
        // Ascending (zeros first), for the bit insertion of `group`.
        let mut a = 0;
        while a < 3 {
            let mut b = a + 1;
            while b < 3 {
                if p[b] < p[a] {
                    let t = p[a];
                    p[a] = p[b];
                    p[b] = t;
                }
                b += 1;
            }
            a += 1;
        }
        let mut i = 0;
        while i < 3 {
            let h = high_bit(masks[i]);
            assert!(h == 0 || h == p[0] || h == p[1] || h == p[2], "a high bit that is not a pivot");
            i += 1;
        }
        p
    }

    /// A stage whose flip's high bit is lane bit `HB`: the lane flip, the in-register
    /// half-cleaners and the two highest register half-cleaners as one group, then the other
    /// register half-cleaners.
    #[inline(always)]
    fn lane_stage<const R: usize, const HB: i32>(v: &mut [__m256i; R]) {
        match R {
            8 => {
                group::<R, 7, 4, 2, HB>(v);
                group::<R, 1, 0, 0, NO_LANES>(v);
            }
            16 => {
                group::<R, 15, 8, 4, HB>(v);
                group::<R, 2, 1, 0, NO_LANES>(v);
            }
            _ => {
                group::<R, 31, 16, 8, HB>(v);
                group::<R, 4, 2, 1, NO_LANES>(v);
            }
        }
    }

    #[inline(always)]
    fn cas<const R: usize>(v: &mut [__m256i; R], i: usize, j: usize) {
        let (x, y) = (v[i], v[j]);
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            v[i] = _mm256_min_epu32(x, y);
            v[j] = _mm256_max_epu32(x, y);
        }
    }

    /// The flip whose mask spans every register bit and lane bits `0 ..= hb`, on one pair:
    /// register `lo` against its mirror register `hi` with lanes mirrored in groups of
    /// `2^(hb + 1)`; lanes with bit `hb` clear are the lower keys of register `lo`.
    #[inline(always)]
    unsafe fn flip_lanes_pair<const N: usize>(v: &mut [__m256i; N], lo: usize, hi: usize, hb: u32) {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            let (a, b) = (v[lo], mirror(v[hi], hb));
            let (mn, mx) = (_mm256_min_epu32(a, b), _mm256_max_epu32(a, b));
            v[lo] = blend_upper(mn, mx, hb);
            v[hi] = mirror(blend_upper(mx, mn, hb), hb);
        }
    }

    /// The half-cleaner inside a register: lane `l` against lane `l ^ 2^hb`.
    #[inline(always)]
    unsafe fn clean_lanes(x: __m256i, hb: u32) -> __m256i {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            let y = match hb {
                0 => _mm256_shuffle_epi32::<0b10_11_00_01>(x),
                1 => _mm256_shuffle_epi32::<0b01_00_11_10>(x),
                _ => _mm256_permute2x128_si256::<0x01>(x, x),
            };
            blend_upper(_mm256_min_epu32(x, y), _mm256_max_epu32(x, y), hb)
        }
    }

    /// Lanes mirrored within groups of `2^(hb + 1)`: lane `l` from lane `l ^ (2^(hb + 1) - 1)`.
    #[inline(always)]
    unsafe fn mirror(x: __m256i, hb: u32) -> __m256i {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            match hb {
                0 => _mm256_shuffle_epi32::<0b10_11_00_01>(x),
                1 => _mm256_shuffle_epi32::<0b00_01_10_11>(x),
                _ => _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0)),
            }
        }
    }

    /// `lo` in lanes whose bit `hb` is clear, `hi` in the others.
    #[inline(always)]
    unsafe fn blend_upper(lo: __m256i, hi: __m256i, hb: u32) -> __m256i {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            match hb {
                0 => _mm256_blend_epi32::<0b1010_1010>(lo, hi),
                1 => _mm256_blend_epi32::<0b1100_1100>(lo, hi),
                _ => _mm256_blend_epi32::<0b1111_0000>(lo, hi),
            }
        }
    }

    /// The 8 x 8 transpose of 32-bit lanes: register `j` of the result holds lane `j` of every
    /// input register.
    #[inline(always)]
    pub(crate) fn transpose(r: [__m256i; LANES]) -> [__m256i; LANES] {
        // SAFETY: AVX2 is enabled in every caller.
        unsafe {
            let t0 = _mm256_unpacklo_epi32(r[0], r[1]);
            let t1 = _mm256_unpackhi_epi32(r[0], r[1]);
            let t2 = _mm256_unpacklo_epi32(r[2], r[3]);
            let t3 = _mm256_unpackhi_epi32(r[2], r[3]);
            let t4 = _mm256_unpacklo_epi32(r[4], r[5]);
            let t5 = _mm256_unpackhi_epi32(r[4], r[5]);
            let t6 = _mm256_unpacklo_epi32(r[6], r[7]);
            let t7 = _mm256_unpackhi_epi32(r[6], r[7]);
            let u0 = _mm256_unpacklo_epi64(t0, t2);
            let u1 = _mm256_unpackhi_epi64(t0, t2);
            let u2 = _mm256_unpacklo_epi64(t1, t3);
            let u3 = _mm256_unpackhi_epi64(t1, t3);
            let u4 = _mm256_unpacklo_epi64(t4, t6);
            let u5 = _mm256_unpackhi_epi64(t4, t6);
            let u6 = _mm256_unpacklo_epi64(t5, t7);
            let u7 = _mm256_unpackhi_epi64(t5, t7);
            [
                _mm256_permute2x128_si256::<0x20>(u0, u4),
                _mm256_permute2x128_si256::<0x20>(u1, u5),
                _mm256_permute2x128_si256::<0x20>(u2, u6),
                _mm256_permute2x128_si256::<0x20>(u3, u7),
                _mm256_permute2x128_si256::<0x31>(u0, u4),
                _mm256_permute2x128_si256::<0x31>(u1, u5),
                _mm256_permute2x128_si256::<0x31>(u2, u6),
                _mm256_permute2x128_si256::<0x31>(u3, u7),
            ]
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    use crate::sort::quick::test_bits as bits;

    #[test]
    fn every_length_up_to_256_against_std() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for n in 0..=MAX_KEYS {
            for (seed, modulus) in [(n as u64, u32::MAX), (7 * n as u64 + 1, 3), (n as u64 + 99, 1)] {
                let input = bits(seed, n, modulus);
                let mut want = input.clone();
                want.sort_unstable();
                let mut got = vec![0; n];
                // SAFETY: AVX2 checked above.
                unsafe { sort_into(&input, &mut got) };
                assert_eq!(got, want, "n = {n}, modulus {modulus}");
                let mut inplace = input.clone();
                // SAFETY: as above.
                unsafe { sort_in_place(&mut inplace) };
                assert_eq!(inplace, want, "in place, n = {n}");
            }
        }
    }

    /// The 0-1 principle, sampled: a comparator network that sorts every 0-1 input sorts every
    /// input; random 0-1 rows of every network size, biased so every count of ones occurs, and
    /// their shifts by one register (the grouped layers pair registers, the lane layers lanes).
    #[test]
    fn random_zero_one_rows_of_each_network_size() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for n in [64, 128, 256] {
            for t in 0..3000u64 {
                let threshold = (t % 101) as u32 * (u32::MAX / 100);
                let input: Vec<u32> = bits(t * 31 + n as u64, n, u32::MAX)
                    .into_iter()
                    .map(|x| u32::from(x < threshold))
                    .collect();
                let mut want = input.clone();
                want.sort_unstable();
                let mut got = input.clone();
                // SAFETY: AVX2 checked above.
                unsafe { sort_in_place(&mut got) };
                assert_eq!(got, want, "n = {n}, trial {t}");
            }
        }
    }

    #[test]
    fn sorted_reversed_and_equal_rows() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for n in [2, 3, 8, 31, 64, 100, 128, 129, 255, 256] {
            let up: Vec<u32> = (0..n as u32).collect();
            let down: Vec<u32> = up.iter().rev().copied().collect();
            let dup: Vec<u32> = up.iter().map(|x| x / 3).rev().collect();
            for input in [up.clone(), down, dup, vec![7; n], vec![u32::MAX; n], vec![0; n]] {
                let mut want = input.clone();
                want.sort_unstable();
                let mut got = vec![1; n];
                // SAFETY: AVX2 checked above.
                unsafe { sort_into(&input, &mut got) };
                assert_eq!(got, want, "n = {n}");
            }
        }
    }

    #[test]
    fn the_maximum_key_survives_the_padding() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        for n in [1, 63, 64, 65, 200, 256] {
            let mut v: Vec<u32> =
                (0..n as u32).map(|i| if i % 3 == 0 { u32::MAX } else { n as u32 - i }).collect();
            let mut want = v.clone();
            want.sort_unstable();
            // SAFETY: AVX2 checked above.
            unsafe { sort_in_place(&mut v) };
            assert_eq!(v, want);
        }
    }
}
