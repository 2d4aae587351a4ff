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
        debug_assert!(keys.len() <= MAX_KEYS && out.len() == keys.len());
        let mut buf = Buf([u32::MAX; MAX_KEYS]);
        let n = keys.len();
        buf.0[..n].copy_from_slice(keys);
        sort_buf(&mut buf, n);
        out.copy_from_slice(&buf.0[..n]);
    }

    /// [`sort_into`] with the output over the input.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn sort_in_place(keys: &mut [u32]) {
        debug_assert!(keys.len() <= MAX_KEYS);
        let mut buf = Buf([u32::MAX; MAX_KEYS]);
        let n = keys.len();
        buf.0[..n].copy_from_slice(keys);
        sort_buf(&mut buf, n);
        keys.copy_from_slice(&buf.0[..n]);
    }

    /// A row's worth of keys, aligned for whole-register loads and stores.
    #[repr(align(32))]
    pub(crate) struct Buf(pub(crate) [u32; MAX_KEYS]);

    /// Sorts the first `n` keys of `buf` (the rest must be `u32::MAX`), choosing the network's
    /// size from `n`.
    #[target_feature(enable = "avx2")]
    pub(crate) fn sort_buf(buf: &mut Buf, n: usize) {
        if n <= MIN_KEYS {
            sort_regs::<8>(buf)
        } else if n <= 128 {
            sort_regs::<16>(buf)
        } else {
            sort_regs::<32>(buf)
        }
    }

    /// Loads `R` registers from `buf`, sorts their `8R` keys, stores them back in order.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn sort_regs<const R: usize>(buf: &mut Buf) {
        let p = buf.0.as_mut_ptr().cast::<__m256i>();
        // SAFETY: R <= 32 registers of 8 keys lie inside the 256-key aligned buffer.
        let mut v: [__m256i; R] = std::array::from_fn(|r| unsafe { _mm256_load_si256(p.add(r)) });
        network(&mut v);
        for b in 0..R / LANES {
            let t = transpose(std::array::from_fn(|i| v[b * LANES + i]));
            for (l, x) in t.into_iter().enumerate() {
                // SAFETY: lane l of block b goes to keys l R + 8b .. + 8, inside the buffer and
                // 32-byte aligned (R and 8b are multiples of 8).
                unsafe { _mm256_store_si256(p.add((l * R + b * LANES) / LANES), x) };
            }
        }
    }

    /// The comb network on `8R` keys in the register layout of the module docs.
    #[inline(always)]
    fn network<const R: usize>(v: &mut [__m256i; R]) {
        let log_r = R.trailing_zeros();
        let log_n = log_r + LANES.trailing_zeros();
        for s in 1..=log_n {
            let h = s - 1;
            if h < log_r {
                flip_regs(v, 1 << s);
            } else {
                // SAFETY: AVX2 is enabled in every caller (`sort_regs`), here and below.
                unsafe { flip_lanes(v, h - log_r) };
            }
            // The half-cleaners inside lanes touch one register each: all of a stage's in a row.
            if s >= 2 && s - 2 >= log_r {
                for x in v.iter_mut() {
                    for hb in (0..=s - 2 - log_r).rev() {
                        // SAFETY: as above.
                        *x = unsafe { clean_lanes(*x, hb) };
                    }
                }
            }
            for hr in (0..(s - 1).min(log_r)).rev() {
                clean_regs(v, 1 << hr);
            }
        }
    }

    /// The flip of a block of `size` registers: register `i` against its mirror.
    #[inline(always)]
    fn flip_regs<const R: usize>(v: &mut [__m256i; R], size: usize) {
        for blk in (0..R).step_by(size) {
            for i in 0..size / 2 {
                cas(v, blk + i, blk + size - 1 - i);
            }
        }
    }

    /// The half-cleaner pairing register `i` with `i + j`.
    #[inline(always)]
    fn clean_regs<const R: usize>(v: &mut [__m256i; R], j: usize) {
        for blk in (0..R).step_by(2 * j) {
            for i in blk..blk + j {
                cas(v, i, i + j);
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

    /// The flip whose mask spans every register bit and lane bits `0 ..= hb`: register `r`
    /// against register `R - 1 - r` with lanes mirrored in groups of `2^(hb + 1)`; lanes with bit
    /// `hb` clear are the lower keys of register `r`.
    #[inline(always)]
    unsafe fn flip_lanes<const R: usize>(v: &mut [__m256i; R], hb: u32) {
        for r in 0..R / 2 {
            // SAFETY: AVX2 is enabled in every caller.
            unsafe {
                let (a, b) = (v[r], mirror(v[R - 1 - r], hb));
                let (mn, mx) = (_mm256_min_epu32(a, b), _mm256_max_epu32(a, b));
                v[r] = blend_upper(mn, mx, hb);
                v[R - 1 - r] = mirror(blend_upper(mx, mn, hb), hb);
            }
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
