//! Short rows of 32-bit keys through the comb network in AVX2 registers, eight rows at a time.
//!
//! Eight rows are transposed into column registers (lane `r` of register `j` holds key `j` of
//! row `r`), so every comparator of the network is one `vpminud` and one `vpmaxud` on whole
//! registers with no shuffle at all; the only shuffles are the 8 x 8 transposes in and out. The
//! keys travel as their ordered bits (see [`super::key`]), padded with `u32::MAX` to a power of
//! two of at least 8. Rows left over (fewer than eight) and 64-bit keys go through the scalar
//! network ([`super::network`]); CPUs without AVX2 too (runtime detection).

use super::key::{SortBits, SortKey};

/// Sorts every row of `row_len <= 32` keys of `keys` (a whole number of rows) with the AVX2
/// network, xor-ing the ordered bits with `flip` (descending sorts). Returns `false`, touching
/// nothing, when this path does not apply: 64-bit keys, no AVX2, rows longer than 32.
pub(super) fn sort_rows<K: SortKey>(keys: &mut [K], row_len: usize, flip: K::Bits) -> bool {
    #[cfg(target_arch = "x86_64")]
    if size_of::<K::Bits>() == 4 && row_len <= 32 && super::isa::isa() >= super::isa::Isa::Avx2 {
        let flip32 = flip.to_u64() as u32;
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { x86::sort_rows_avx2(keys, row_len, flip32) };
        return true;
    }
    let _ = (keys, row_len, flip);
    false
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{SortBits, SortKey};
    // The 8 x 8 transpose is the register network's (its own inverse).
    use crate::sort::regnet::transpose;

    /// Rows per register group: the lanes of a 256-bit register of `u32`.
    const GROUP: usize = 8;

    /// [`super::sort_rows`] for AVX2 CPUs and 32-bit keys (`K::Bits = u32`).
    ///
    /// # Safety
    /// The CPU must support AVX2, and `K::Bits` must be `u32`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sort_rows_avx2<K: SortKey>(keys: &mut [K], row_len: usize, flip: u32) {
        let p = row_len.next_power_of_two().max(GROUP);
        let mut groups = keys.chunks_exact_mut(row_len * GROUP);
        for g in groups.by_ref() {
            // SAFETY: AVX2 is available (this function's contract).
            unsafe {
                match p {
                    8 => sort_group::<K, 8>(g, row_len, flip),
                    16 => sort_group::<K, 16>(g, row_len, flip),
                    _ => sort_group::<K, 32>(g, row_len, flip),
                }
            }
        }
        let flip_bits = K::Bits::from_u64(flip as u64);
        for row in groups.into_remainder().chunks_mut(row_len) {
            super::super::cpu::network_keys(row, flip_bits);
        }
    }

    /// Eight rows of `row_len <= P` keys: to ordered bits padded to `P` per row, transposed into
    /// `P` column registers, through the network, back.
    #[target_feature(enable = "avx2")]
    unsafe fn sort_group<K: SortKey, const P: usize>(rows: &mut [K], row_len: usize, flip: u32) {
        let mut bits = [[u32::MAX; P]; GROUP];
        let flip_bits = K::Bits::from_u64(flip as u64);
        for (b, row) in bits.iter_mut().zip(rows.chunks_exact(row_len)) {
            for (x, k) in b.iter_mut().zip(row) {
                *x = k.to_bits_ordered().xor(flip_bits).to_u64() as u32;
            }
        }
        let mut cols = [_mm256_setzero_si256(); P];
        for blk in 0..P / GROUP {
            // SAFETY: each row of `bits` has P >= 8 (blk + 1) u32, so the unaligned loads stay inside.
            let r: [__m256i; GROUP] = std::array::from_fn(|i| unsafe {
                _mm256_loadu_si256(bits[i][blk * GROUP..].as_ptr().cast())
            });
            cols[blk * GROUP..(blk + 1) * GROUP].copy_from_slice(&transpose(r));
        }
        comb(&mut cols);
        for blk in 0..P / GROUP {
            let r: [__m256i; GROUP] = std::array::from_fn(|i| cols[blk * GROUP + i]);
            for (i, v) in transpose(r).into_iter().enumerate() {
                // SAFETY: as for the loads.
                unsafe { _mm256_storeu_si256(bits[i][blk * GROUP..].as_mut_ptr().cast(), v) };
            }
        }
        for (b, row) in bits.iter().zip(rows.chunks_exact_mut(row_len)) {
            for (x, k) in b.iter().zip(row) {
                *k = K::from_bits_ordered(K::Bits::from_u64(*x as u64).xor(flip_bits));
            }
        }
    }

    /// The comb network over `P` column registers: every comparator is a min and a max of two
    /// whole registers (eight independent rows).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn comb<const P: usize>(c: &mut [__m256i; P]) {
        let cas = |c: &mut [__m256i; P], i: usize, j: usize| {
            let (x, y) = (c[i], c[j]);
            c[i] = _mm256_min_epu32(x, y);
            c[j] = _mm256_max_epu32(x, y);
        };
        let mut size = 2;
        while size <= P {
            for blk in (0..P).step_by(size) {
                for i in 0..size / 2 {
                    cas(c, blk + i, blk + size - 1 - i);
                }
            }
            let mut j = size / 4;
            while j >= 1 {
                for blk in (0..P).step_by(2 * j) {
                    for i in blk..blk + j {
                        cas(c, i, i + j);
                    }
                }
                j /= 2;
            }
            size *= 2;
        }
    }
}
