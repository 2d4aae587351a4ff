//! Vectorised quicksort of 32-bit ordered bits: partitions eight keys at a time (AVX2) or
//! sixteen (AVX-512F, [`super::avx512`]), hands parts of at most 256 keys to a register network
//! ([`super::regnet`], or with AVX-512F the networks of [`super::avx512`]).
//!
//! A partition compares a register of keys with the pivot, turns the comparison into an 8-bit
//! mask and permutes the register through a 256-entry table so that the keys `<= pivot` come
//! first; the register is then stored twice, at the left end of the destination (the small
//! keys count) and ending at the right end (the large ones count), the way vqsort and
//! x86-simd-sort do. Partitions go from one buffer to the other and back (the row and a scratch
//! row), so no pass copies. The part of all keys `<= pivot` cannot happen twice in a row (the
//! second partition splits off the keys equal to the maximum), a part whose keys are all equal
//! stops at once, and past a depth of `2 log2 n` the part falls back to `sort_unstable`, so the
//! worst case stays `O(n log n)`.

use super::key::{SortBits, SortKey};

use super::isa::{Isa, isa};

/// True when [`sort`] runs for keys `K`: 32-bit keys on a CPU with AVX2 (see [`super::isa`]).
pub(super) fn available<K: SortKey>() -> bool {
    K::Bits::BITS == 32 && isa() >= Isa::Avx2
}

/// Sorts `keys` ascending with the widest instructions [`isa`] allows; `tmp` is scratch, at
/// least as long. Parts of at least `wide_net_min` keys (up to 256) take the AVX-512 network
/// where the CPU has one ([`super::SortTuning::wide_net_min`]).
///
/// # Panics
/// When [`available`] is false for 32-bit keys (no AVX2), or `tmp` is too short.
pub(super) fn sort(keys: &mut [u32], tmp: &mut [u32], wide_net_min: usize) {
    sort_with(keys, tmp, isa(), wide_net_min);
}

/// [`sort`] with the instruction set given (at most what the CPU has): how the tests reach
/// the AVX2 path on an AVX-512 CPU.
///
/// # Panics
/// When `with` is below AVX2 or above [`isa`], or `tmp` is too short.
pub(super) fn sort_with(keys: &mut [u32], tmp: &mut [u32], with: Isa, wide_net_min: usize) {
    assert!(Isa::Avx2 <= with && with <= isa(), "the vectorised quicksort needs AVX2");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX2, and AVX-512F where `with` says so (asserted).
    unsafe {
        x86::sort(keys, tmp, x86::Wide { partition: with == Isa::Avx512, net_min: wide_net_min })
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (keys, tmp, wide_net_min);
}

/// Places the keys of `tail` (the last `tail.len()` keys of a partition's source) at the two
/// ends of `dst`, `<= pivot` from the front and the others from the back, before the vector
/// loop fills the middle; returns the next free slot at each end and the tail's minimum and
/// maximum key.
#[cfg(target_arch = "x86_64")]
pub(super) fn partition_tail(tail: &[u32], dst: &mut [u32], pivot: u32) -> (usize, usize, u32, u32) {
    let (mut l, mut r) = (0usize, dst.len());
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    for &x in tail {
        lo = lo.min(x);
        hi = hi.max(x);
        if x > pivot {
            r -= 1;
            dst[r] = x;
        } else {
            dst[l] = x;
            l += 1;
        }
    }
    (l, r, lo, hi)
}

/// splitmix64 bits, so the sort tests need no generator crate.
#[cfg(all(test, target_arch = "x86_64"))]
pub(super) fn test_bits(seed: u64, n: usize, modulus: u32) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) as u32) % modulus
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::super::avx512;
    use super::super::regnet::{self, MAX_KEYS};

    /// Lanes of a register.
    const LANES: usize = 8;

    /// `PERM[m]`: lane indices that put the lanes whose bit in `m` is clear first (in order), then
    /// the others (in order).
    static PERM: [[u32; LANES]; 256] = {
        let mut t = [[0u32; LANES]; 256];
        let mut m = 0;
        while m < 256 {
            let mut k = 0;
            let mut l = 0;
            while l < LANES {
                if m & (1 << l) == 0 {
                    t[m][k] = l as u32;
                    k += 1;
                }
                l += 1;
            }
            l = 0;
            while l < LANES {
                if m & (1 << l) != 0 {
                    t[m][k] = l as u32;
                    k += 1;
                }
                l += 1;
            }
            m += 1;
        }
        t
    };

    /// Sorts `keys` ascending; `tmp` is scratch of at least `keys.len()` elements. `wide`: where
    /// AVX-512F applies.
    ///
    /// # Safety
    /// The CPU must support AVX2, and AVX-512F when `wide.partition`.
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn sort(keys: &mut [u32], tmp: &mut [u32], wide: Wide) {
        let n = keys.len();
        let depth = 2 * (usize::BITS - n.leading_zeros());
        sort_in_place(keys, &mut tmp[..n], depth, wide);
    }

    /// Sorts `a` where it lies, `b` (as long) as scratch.
    #[target_feature(enable = "avx2")]
    fn sort_in_place(a: &mut [u32], b: &mut [u32], depth: u32, wide: Wide) {
        let n = a.len();
        if n <= 1 {
            return;
        }
        if n <= MAX_KEYS {
            return base_in_place(a, wide);
        }
        if depth == 0 {
            return a.sort_unstable();
        }
        let Some(left) = split(a, b, wide) else { return };
        let (al, ar) = a.split_at_mut(left);
        let (bl, br) = b.split_at_mut(left);
        sort_to(bl, al, depth - 1, wide);
        sort_to(br, ar, depth - 1, wide);
    }

    /// Sorts the keys of `a` into `b` (as long); `a` is left as scratch.
    #[target_feature(enable = "avx2")]
    fn sort_to(a: &mut [u32], b: &mut [u32], depth: u32, wide: Wide) {
        let n = a.len();
        if n <= MAX_KEYS {
            return base_into(a, b, wide);
        }
        if depth == 0 {
            b.copy_from_slice(a);
            return b.sort_unstable();
        }
        let Some(left) = split(a, b, wide) else { return b.copy_from_slice(a) };
        let (al, ar) = a.split_at_mut(left);
        let (bl, br) = b.split_at_mut(left);
        sort_in_place(bl, al, depth - 1, wide);
        sort_in_place(br, ar, depth - 1, wide);
    }

    /// Where AVX-512F applies: the partition, and parts of at least `net_min` keys (up to
    /// [`MAX_KEYS`]), which the AVX-512 networks hold in half the registers.
    #[derive(Clone, Copy)]
    pub(crate) struct Wide {
        /// Partition sixteen keys at a time (AVX-512F) instead of eight.
        pub(crate) partition: bool,
        /// The shortest part for the AVX-512 network (only where `partition`, i.e. AVX-512F).
        pub(crate) net_min: usize,
    }

    impl Wide {
        /// Whether a part of `n <= MAX_KEYS` keys goes to the AVX-512 network.
        fn net(self, n: usize) -> bool {
            self.partition && n >= self.net_min
        }
    }

    /// A part of at most [`MAX_KEYS`] keys, sorted where it lies.
    #[target_feature(enable = "avx2")]
    fn base_in_place(a: &mut [u32], wide: Wide) {
        if wide.net(a.len()) {
            // SAFETY: `wide` only where the CPU has AVX-512F (the callers' contract).
            unsafe { avx512::net_sort_in_place(a) }
        } else {
            // SAFETY: AVX2 is enabled here.
            unsafe { regnet::sort_in_place(a) }
        }
    }

    /// A part of at most [`MAX_KEYS`] keys of `a`, sorted into `b`.
    #[target_feature(enable = "avx2")]
    fn base_into(a: &[u32], b: &mut [u32], wide: Wide) {
        if wide.net(a.len()) {
            // SAFETY: as in `base_in_place`.
            unsafe { avx512::net_sort_into(a, b) }
        } else {
            // SAFETY: AVX2 is enabled here.
            unsafe { regnet::sort_into(a, b) }
        }
    }

    /// Partitions `src` into `dst` around a sampled pivot: `dst[..left] <= dst[left..]`, both
    /// parts non-empty. `None` when every key of `src` is the same (nothing written).
    #[target_feature(enable = "avx2")]
    fn split(src: &[u32], dst: &mut [u32], wide: Wide) -> Option<usize> {
        let mut part = |pivot| {
            if wide.partition {
                // SAFETY: as in `base_in_place`.
                unsafe { avx512::partition(src, dst, pivot) }
            } else {
                partition(src, dst, pivot)
            }
        };
        let pivot = sample_pivot(src);
        let (left, min, max) = part(pivot);
        if min == max {
            return None;
        }
        if left < src.len() {
            return Some(left);
        }
        // Every key was <= the pivot, a sampled key, so the pivot is the maximum and above the
        // minimum: splitting off the keys equal to it leaves two non-empty parts.
        Some(part(pivot - 1).0)
    }

    /// The median of nine keys spread over `src` (at least nine keys long).
    fn sample_pivot(src: &[u32]) -> u32 {
        let step = src.len() / 9;
        let mut s: [u32; 9] = std::array::from_fn(|i| src[i * step + step / 2]);
        s.sort_unstable();
        s[4]
    }

    /// Writes the keys of `src` that are `<= pivot` to the front of `dst` and the others to the
    /// back; returns how many went to the front, and the minimum and maximum key.
    #[target_feature(enable = "avx2")]
    pub(super) fn partition(src: &[u32], dst: &mut [u32], pivot: u32) -> (usize, u32, u32) {
        let n = src.len();
        assert_eq!(dst.len(), n, "partition: destination length");
        let whole = n - n % LANES;
        // The tail first, so that the vector loop always has a multiple of eight slots left.
        let (mut l, mut r, lo, hi) = super::partition_tail(&src[whole..], dst, pivot);
        let bias = _mm256_set1_epi32(i32::MIN);
        let p = _mm256_xor_si256(_mm256_set1_epi32(pivot as i32), bias);
        let (mut vlo, mut vhi) = (_mm256_set1_epi32(-1), _mm256_setzero_si256());
        let out = dst.as_mut_ptr();
        for c in src[..whole].chunks_exact(LANES) {
            // SAFETY: c holds eight keys.
            let v = unsafe { _mm256_loadu_si256(c.as_ptr().cast()) };
            vlo = _mm256_min_epu32(vlo, v);
            vhi = _mm256_max_epu32(vhi, v);
            let gt = _mm256_cmpgt_epi32(_mm256_xor_si256(v, bias), p);
            let mask = _mm256_movemask_ps(_mm256_castsi256_ps(gt)) as usize;
            // SAFETY: mask < 256 (eight sign bits); PERM's rows are eight lanes.
            let perm = unsafe { _mm256_loadu_si256(PERM.get_unchecked(mask).as_ptr().cast()) };
            let v = _mm256_permutevar8x32_epi32(v, perm);
            let big = mask.count_ones() as usize;
            // SAFETY: r - l is a multiple of eight and at least eight (the slots of the keys not
            // yet placed), so both stores stay inside dst[l .. r]. The right store goes first:
            // the left one may overwrite its low lanes (keys already stored on the left) but
            // never its high ones unless r - l == 8, where both stores write the same.
            unsafe {
                _mm256_storeu_si256(out.add(r - LANES).cast(), v);
                _mm256_storeu_si256(out.add(l).cast(), v);
            }
            l += LANES - big;
            r -= big;
        }
        debug_assert_eq!(l, r);
        (l, lo.min(hmin(vlo)), hi.max(hmax(vhi)))
    }

    /// The smallest lane.
    #[target_feature(enable = "avx2")]
    fn hmin(v: __m256i) -> u32 {
        let mut a = [0u32; LANES];
        // SAFETY: a has eight lanes.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
        a.into_iter().min().unwrap_or(u32::MAX)
    }

    /// The largest lane.
    #[target_feature(enable = "avx2")]
    fn hmax(v: __m256i) -> u32 {
        let mut a = [0u32; LANES];
        // SAFETY: a has eight lanes.
        unsafe { _mm256_storeu_si256(a.as_mut_ptr().cast(), v) };
        a.into_iter().max().unwrap_or(0)
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    use super::test_bits as bits;

    /// Inputs that stress the pivot: random, few distinct, all equal, sorted, reversed, organ
    /// pipe, one distinct maximum, runs of the maximum.
    fn shapes(n: usize) -> Vec<(&'static str, Vec<u32>)> {
        let i = 0..n as u32;
        vec![
            ("random", bits(n as u64, n, u32::MAX)),
            ("few", bits(n as u64 + 1, n, 4)),
            ("equal", vec![42; n]),
            ("sorted", i.clone().collect()),
            ("reversed", i.clone().rev().collect()),
            ("pipe", i.clone().map(|x| x.min(n as u32 - x)).collect()),
            ("one max", i.clone().map(|x| if x == 5 { u32::MAX } else { 7 }).collect()),
            ("max runs", i.map(|x| if x % 3 == 0 { u32::MAX } else { x % 5 }).collect()),
        ]
    }

    /// Every instruction set the CPU offers the quicksort: AVX2, and AVX-512F where present.
    fn levels() -> Vec<Isa> {
        [Isa::Avx2, Isa::Avx512].into_iter().filter(|&l| l <= isa()).collect()
    }

    #[test]
    fn awkward_lengths_and_shapes_against_std() {
        for level in levels() {
            for n in [0, 1, 9, 128, 129, 200, 255, 256, 257, 263, 511, 512, 1000, 4096, 4099, 10007] {
                for (what, input) in shapes(n) {
                    let mut want = input.clone();
                    want.sort_unstable();
                    let mut got = input;
                    sort_with(&mut got, &mut vec![0; n], level, crate::sort::WIDE_NET_MIN);
                    assert_eq!(got, want, "{what}, n = {n}, {level:?}");
                }
            }
        }
    }

    #[test]
    fn partition_places_every_key_once() {
        if !available::<u32>() {
            return;
        }
        for n in [8, 13, 64, 77] {
            let input = bits(3 * n as u64, n, 100);
            let mut dst = vec![0; n];
            // SAFETY: AVX2 checked above.
            let (left, lo, hi) = unsafe { x86::partition(&input, &mut dst, 50) };
            assert!(dst[..left].iter().all(|&x| x <= 50) && dst[left..].iter().all(|&x| x > 50));
            let (mut a, mut b) = (input.clone(), dst);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
            assert_eq!((lo, hi), (a[0], a[n - 1]));
        }
    }
}
