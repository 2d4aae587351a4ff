//! AVX-512 kernels on 32-bit ordered bits: the comb network on up to 64, 128 or 256 keys in 4, 8
//! or 16 registers of 16 lanes, and the quicksort's partition by compress.
//!
//! **Network.** With `R` registers, key `i` sits in lane `i / R` of register `i % R`, the layout
//! of [`super::regnet`] with twice the lanes: of the 36 layers of the 256-key comb network, the 26
//! whose comparators differ in a register bit are a `vpminud` and a `vpmaxud` of whole registers;
//! the 10 that differ in a lane bit take a lane shuffle and a masked min or max. 16 registers
//! hold all 256 keys with 16 of the 32 architectural registers to spare (the AVX2 network spills
//! half of its 32). Keys past the row's end load as `u32::MAX` under a lane mask (the padding;
//! masked-off lanes never fault), and one 16 x 16 transpose stores the keys in order.
//!
//! **Partition.** Sixteen keys at a time: one unsigned compare gives the mask of keys above the
//! pivot, two register compresses pack the small and the large keys, and two masked stores put
//! them at the left end and ending at the right end of the destination, as x86-simd-sort does.

#[cfg(target_arch = "x86_64")]
pub(super) use x86::*;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Lanes of a register.
    const LANES: usize = 16;
    /// The most registers of a network.
    const REGS: usize = 16;
    /// The most keys one network sorts.
    pub(crate) const NET_KEYS: usize = LANES * REGS;

    /// Sorts `keys` (at most [`NET_KEYS`]) ascending into `out` (as long), in the smallest
    /// network that holds them (64, 128 or 256 keys).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn net_sort_into(keys: &[u32], out: &mut [u32]) {
        let n = keys.len();
        assert!(n <= NET_KEYS && out.len() == n, "the AVX-512 network sorts at most 256 keys");
        match n {
            0..=64 => store(&sort_regs::<4>(keys), out),
            65..=128 => store(&sort_regs::<8>(keys), out),
            _ => store(&sort_regs::<16>(keys), out),
        }
    }

    /// [`net_sort_into`] with the output over the input.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn net_sort_in_place(keys: &mut [u32]) {
        let n = keys.len();
        assert!(n <= NET_KEYS, "the AVX-512 network sorts at most 256 keys");
        match n {
            0..=64 => store(&sort_regs::<4>(keys), keys),
            65..=128 => store(&sort_regs::<8>(keys), keys),
            _ => store(&sort_regs::<16>(keys), keys),
        }
    }

    /// The keys (at most `16 R`) sorted in `R` registers, in the module's layout.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn sort_regs<const R: usize>(keys: &[u32]) -> [__m512i; R] {
        let mut v = load::<R>(keys);
        network(&mut v);
        v
    }

    /// The mask of the first `n.min(16)` lanes.
    #[inline(always)]
    fn first_lanes(n: usize) -> __mmask16 {
        if n >= LANES { 0xFFFF } else { ((1u32 << n) - 1) as __mmask16 }
    }

    /// Register `r` gets keys `16 r ..`, lanes past the end `u32::MAX`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load<const R: usize>(keys: &[u32]) -> [__m512i; R] {
        let pad = _mm512_set1_epi32(-1);
        std::array::from_fn(|r| {
            let m = first_lanes(keys.len().saturating_sub(r * LANES));
            // SAFETY: the mask enables only lanes r * 16 + l < keys.len(); masked-off lanes are
            // not read (AVX-512 suppresses their faults), so the pointer may pass the end.
            unsafe { _mm512_mask_loadu_epi32(pad, m, keys.as_ptr().wrapping_add(r * LANES).cast()) }
        })
    }

    /// The sorted keys out: lane `l` of the `R` registers holds keys `R l .. R l + R`, which
    /// the transpose gathers into the low `R` lanes of its register `l` (the registers past `R`
    /// are filler).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store<const R: usize>(v: &[__m512i; R], out: &mut [u32]) {
        let mut full = [_mm512_setzero_si512(); REGS];
        full[..R].copy_from_slice(v);
        let t = transpose(&full);
        for (l, x) in t.iter().enumerate() {
            let m = first_lanes(out.len().saturating_sub(l * R).min(R));
            // SAFETY: as in `load`, only lanes inside `out` are written.
            unsafe { _mm512_mask_storeu_epi32(out.as_mut_ptr().wrapping_add(l * R).cast(), m, *x) };
        }
    }

    /// The comb network on `16 R` keys in the module's layout (register bits below `log2 R`,
    /// lane bits above), written out stage by stage with constant parameters so that it compiles
    /// to straight-line code on registers: loops over runtime layer sizes would index the
    /// register array at run time and keep it in memory.
    #[inline(always)]
    fn network<const R: usize>(v: &mut [__m512i; R]) {
        flip_regs::<R, 2>(v);
        flip_regs::<R, 4>(v);
        clean_regs::<R, 1>(v);
        if R >= 8 {
            flip_regs::<R, 8>(v);
            clean_regs::<R, 2>(v);
            clean_regs::<R, 1>(v);
        }
        if R >= 16 {
            flip_regs::<R, 16>(v);
            clean_regs::<R, 4>(v);
            clean_regs::<R, 2>(v);
            clean_regs::<R, 1>(v);
        }
        lane_stage::<R, 0>(v);
        lane_stage::<R, 1>(v);
        lane_stage::<R, 2>(v);
        lane_stage::<R, 3>(v);
    }

    /// A stage whose flip's high bit is lane bit `HB`: the flip, the half-cleaners on lane bits
    /// `HB - 1 ..= 0` (each inside one register), then on the register bits.
    #[inline(always)]
    fn lane_stage<const R: usize, const HB: u32>(v: &mut [__m512i; R]) {
        // SAFETY: AVX-512F is enabled in every caller, here and below.
        unsafe { flip_lanes::<R, HB>(v) };
        for x in v.iter_mut() {
            // SAFETY: as above.
            unsafe {
                if HB >= 3 {
                    *x = clean_lanes::<2>(*x);
                }
                if HB >= 2 {
                    *x = clean_lanes::<1>(*x);
                }
                if HB >= 1 {
                    *x = clean_lanes::<0>(*x);
                }
            }
        }
        clean_regs::<R, 8>(v);
        clean_regs::<R, 4>(v);
        clean_regs::<R, 2>(v);
        clean_regs::<R, 1>(v);
    }

    /// The flip of blocks of `SIZE` registers: register `i` against its mirror in the block
    /// (nothing when `SIZE > R`).
    #[inline(always)]
    fn flip_regs<const R: usize, const SIZE: usize>(v: &mut [__m512i; R]) {
        for blk in 0..R / SIZE {
            for i in 0..SIZE / 2 {
                cas(v, blk * SIZE + i, blk * SIZE + SIZE - 1 - i);
            }
        }
    }

    /// The half-cleaner pairing register `i` with `i + J` (nothing when `2 J > R`).
    #[inline(always)]
    fn clean_regs<const R: usize, const J: usize>(v: &mut [__m512i; R]) {
        for blk in 0..R / (2 * J) {
            for i in 0..J {
                cas(v, blk * 2 * J + i, blk * 2 * J + i + J);
            }
        }
    }

    #[inline(always)]
    fn cas<const R: usize>(v: &mut [__m512i; R], i: usize, j: usize) {
        let (x, y) = (v[i], v[j]);
        // SAFETY: AVX-512F is enabled in every caller.
        unsafe {
            v[i] = _mm512_min_epu32(x, y);
            v[j] = _mm512_max_epu32(x, y);
        }
    }

    /// Lanes whose bit `hb` is set: the upper key of each lane comparator.
    #[inline(always)]
    fn upper(hb: u32) -> __mmask16 {
        [0xAAAA, 0xCCCC, 0xF0F0, 0xFF00][hb as usize]
    }

    /// The flip spanning every register bit and lane bits `0 ..= HB`: register `r` against
    /// register `R - 1 - r` with lanes mirrored in groups of `2^(HB + 1)`.
    #[inline(always)]
    unsafe fn flip_lanes<const R: usize, const HB: u32>(v: &mut [__m512i; R]) {
        let k = upper(HB);
        for r in 0..R / 2 {
            // SAFETY: AVX-512F is enabled in every caller.
            unsafe {
                let (a, b) = (v[r], mirror::<HB>(v[R - 1 - r]));
                let lo = _mm512_mask_max_epu32(_mm512_min_epu32(a, b), k, a, b);
                let hi = _mm512_mask_min_epu32(_mm512_max_epu32(a, b), k, a, b);
                v[r] = lo;
                v[R - 1 - r] = mirror::<HB>(hi);
            }
        }
    }

    /// The half-cleaner inside a register: lane `l` against lane `l ^ 2^hb`.
    #[inline(always)]
    unsafe fn clean_lanes<const HB: u32>(x: __m512i) -> __m512i {
        // SAFETY: AVX-512F is enabled in every caller.
        unsafe {
            let y = match HB {
                0 => _mm512_shuffle_epi32::<0b10_11_00_01>(x),
                1 => _mm512_shuffle_epi32::<0b01_00_11_10>(x),
                2 => _mm512_shuffle_i32x4::<0b10_11_00_01>(x, x),
                _ => _mm512_shuffle_i32x4::<0b01_00_11_10>(x, x),
            };
            _mm512_mask_max_epu32(_mm512_min_epu32(x, y), upper(HB), x, y)
        }
    }

    /// Lanes mirrored within groups of `2^(hb + 1)`: lane `l` from lane `l ^ (2^(hb + 1) - 1)`.
    #[inline(always)]
    unsafe fn mirror<const HB: u32>(x: __m512i) -> __m512i {
        // SAFETY: AVX-512F is enabled in every caller.
        unsafe {
            match HB {
                0 => _mm512_shuffle_epi32::<0b10_11_00_01>(x),
                1 => _mm512_shuffle_epi32::<0b00_01_10_11>(x),
                2 => _mm512_permutexvar_epi32(
                    _mm512_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8),
                    x,
                ),
                _ => _mm512_permutexvar_epi32(
                    _mm512_setr_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                    x,
                ),
            }
        }
    }

    /// The 16 x 16 transpose of 32-bit lanes: register `j` of the result holds lane `j` of
    /// every input register, in register order.
    #[inline(always)]
    pub(crate) fn transpose(r: &[__m512i; REGS]) -> [__m512i; REGS] {
        // SAFETY: AVX-512F is enabled in every caller.
        unsafe {
            // Per 128-bit lane k: t[2i] = (a0 b0 a1 b1), t[2i+1] = (a2 b2 a3 b3) of rows 2i, 2i+1.
            let t: [__m512i; 16] = std::array::from_fn(|i| {
                let (a, b) = (r[i & !1], r[i | 1]);
                if i.is_multiple_of(2) { _mm512_unpacklo_epi32(a, b) } else { _mm512_unpackhi_epi32(a, b) }
            });
            // u[4g + e], lane k: element 4k + e of rows 4g .. 4g + 4.
            let u: [__m512i; 16] = std::array::from_fn(|i| {
                let (g, e) = (i / 4, i % 4);
                let (a, b) = (t[4 * g + e / 2], t[4 * g + 2 + e / 2]);
                if e.is_multiple_of(2) { _mm512_unpacklo_epi64(a, b) } else { _mm512_unpackhi_epi64(a, b) }
            });
            // w[8 p + 4 h + e]: 128-bit lanes (2h, 2h + 1) of u[8p + e] then of u[8p + 4 + e].
            let w: [__m512i; 16] = std::array::from_fn(|i| {
                let (p, h, e) = (i / 8, (i / 4) % 2, i % 4);
                let (a, b) = (u[8 * p + e], u[8 * p + 4 + e]);
                if h == 0 { _mm512_shuffle_i32x4::<0x44>(a, b) } else { _mm512_shuffle_i32x4::<0xEE>(a, b) }
            });
            // Column 4k + e: lane k of u[e], u[4 + e], u[8 + e], u[12 + e].
            std::array::from_fn(|j| {
                let (k, e) = (j / 4, j % 4);
                let h = k / 2;
                let (a, b) = (w[4 * h + e], w[8 + 4 * h + e]);
                if k.is_multiple_of(2) {
                    _mm512_shuffle_i32x4::<0x88>(a, b)
                } else {
                    _mm512_shuffle_i32x4::<0xDD>(a, b)
                }
            })
        }
    }

    /// Writes the keys of `src` that are `<= pivot` to the front of `dst` and the others to the
    /// back; returns how many went to the front, and the minimum and maximum key.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(crate) unsafe fn partition(src: &[u32], dst: &mut [u32], pivot: u32) -> (usize, u32, u32) {
        let n = src.len();
        assert_eq!(dst.len(), n, "partition: destination length");
        let whole = n - n % LANES;
        let (mut l, mut r, lo, hi) = super::super::quick::partition_tail(&src[whole..], dst, pivot);
        let p = _mm512_set1_epi32(pivot as i32);
        let (mut vlo, mut vhi) = (_mm512_set1_epi32(-1), _mm512_setzero_si512());
        let out = dst.as_mut_ptr();
        for c in src[..whole].chunks_exact(LANES) {
            // SAFETY: c holds sixteen keys.
            let v = unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
            vlo = _mm512_min_epu32(vlo, v);
            vhi = _mm512_max_epu32(vhi, v);
            let gt = _mm512_cmpgt_epu32_mask(v, p);
            let big = gt.count_ones() as usize;
            let small = _mm512_maskz_compress_epi32(!gt, v);
            let large = _mm512_maskz_compress_epi32(gt, v);
            // SAFETY: r - l >= 16 (the slots of the keys not yet placed, a multiple of 16), so
            // the 16 - big lanes written at l and the big lanes written ending at r stay inside
            // dst[l .. r] and do not overlap.
            unsafe {
                _mm512_mask_storeu_epi32(out.add(l).cast(), first_lanes(LANES - big), small);
                _mm512_mask_storeu_epi32(out.add(r - big).cast(), first_lanes(big), large);
            }
            l += LANES - big;
            r -= big;
        }
        debug_assert_eq!(l, r);
        (l, lo.min(_mm512_reduce_min_epu32(vlo)), hi.max(_mm512_reduce_max_epu32(vhi)))
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    fn has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
    }

    use crate::sort::quick::test_bits as bits;

    #[test]
    fn the_transpose_moves_lane_j_of_register_i_to_lane_i_of_register_j() {
        if !has_avx512() {
            return;
        }
        let m: Vec<u32> = (0..256).collect();
        let mut out = vec![0u32; 256];
        // SAFETY: AVX-512F checked above; the buffers hold 256 keys.
        unsafe {
            use std::arch::x86_64::*;
            let r: [__m512i; 16] = std::array::from_fn(|i| _mm512_loadu_si512(m[16 * i..].as_ptr().cast()));
            for (j, x) in x86::transpose(&r).iter().enumerate() {
                _mm512_storeu_si512(out[16 * j..].as_mut_ptr().cast(), *x);
            }
        }
        for i in 0..16 {
            for j in 0..16 {
                assert_eq!(out[16 * j + i], m[16 * i + j], "lane {j} of register {i}");
            }
        }
    }

    #[test]
    fn the_network_sorts_every_length_up_to_256() {
        if !has_avx512() {
            return;
        }
        for n in 0..=NET_KEYS {
            for (seed, modulus) in [(n as u64, u32::MAX), (7 * n as u64 + 1, 3), (n as u64 + 99, 1)] {
                let input = bits(seed, n, modulus);
                let mut want = input.clone();
                want.sort_unstable();
                let mut got = vec![0; n];
                // SAFETY: AVX-512F checked above.
                unsafe { net_sort_into(&input, &mut got) };
                assert_eq!(got, want, "n = {n}, modulus {modulus}");
                let mut inplace = input;
                // SAFETY: as above.
                unsafe { net_sort_in_place(&mut inplace) };
                assert_eq!(inplace, want, "in place, n = {n}");
            }
        }
        let mut v: Vec<u32> = (0..256u32).map(|i| if i % 3 == 0 { u32::MAX } else { 256 - i }).collect();
        let mut want = v.clone();
        want.sort_unstable();
        // SAFETY: AVX-512F checked above.
        unsafe { net_sort_in_place(&mut v) };
        assert_eq!(v, want, "the maximum key survives the padding");
    }

    #[test]
    fn the_partition_places_every_key_once() {
        if !has_avx512() {
            return;
        }
        for n in [0, 1, 15, 16, 17, 64, 77, 1000] {
            for pivot in [0, 50, 99, u32::MAX] {
                let input = bits(3 * n as u64, n, 100);
                let mut dst = vec![0; n];
                // SAFETY: AVX-512F checked above.
                let (left, lo, hi) = unsafe { x86::partition(&input, &mut dst, pivot) };
                assert!(dst[..left].iter().all(|&x| x <= pivot) && dst[left..].iter().all(|&x| x > pivot));
                let (mut a, mut b) = (input.clone(), dst);
                a.sort_unstable();
                b.sort_unstable();
                assert_eq!(a, b, "n = {n}, pivot {pivot}");
                if n > 0 {
                    assert_eq!((lo, hi), (a[0], a[n - 1]));
                }
            }
        }
    }
}
