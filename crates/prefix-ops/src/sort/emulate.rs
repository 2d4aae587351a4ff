//! A CPU model of the GPU kernel's compare-exchange schedule (`bmcs_sort_smem` in
//! `cuda-kernels/prefix/bitonic_network.cuh`), step for step: four consecutive keys per
//! virtual thread, a row's threads taking their virtual threads chunk by chunk, stages 1-2 and
//! the last two steps of each stage in registers, steps with high bit 2..6 as warp shuffles
//! (lane `t` exchanges with lane `t ^ m` of the same chunk, slots reversed for a flip),
//! steps with high bit >= 7 in shared memory, fused two at a time (radix 4) on the orbit of a
//! base index, an odd count starting with one radix-2 step.
//!
//! It exists so the tests can check the GPU schedule without a GPU: the 0-1 principle over all
//! 2^16 binary inputs, and random rows up to 2^15 keys. Any change to the kernel's schedule
//! must be mirrored here.

use super::key::SortBits;

/// A key and its tag (position in the row); tagged rows compare `(key, tag)`.
type Item<U> = (U, u32);

#[inline]
fn gt<U: SortBits>(a: Item<U>, b: Item<U>, tagged: bool) -> bool {
    if tagged { a > b } else { a.0 > b.0 }
}

#[inline]
fn cas<U: SortBits>(r: &mut [Item<U>], a: usize, b: usize, tagged: bool) {
    if gt(r[a], r[b], tagged) {
        r.swap(a, b);
    }
}

/// Compare-exchanges of one row through the kernel's schedule ([`bmcs_work`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BmcsWork {
    /// Compare-exchanges the kernel runs: groups wholly in the padding are skipped.
    pub executed: u64,
    /// Compare-exchanges of the whole padded network.
    pub network: u64,
}

/// What the model needs beside the keys: the real length (keys from it are padding, skipped
/// as the kernel skips them) and the work counter.
struct Run {
    len: usize,
    np: usize,
    tagged: bool,
    work: BmcsWork,
}

impl Run {
    /// Whether the warp of virtual thread `v` skips its register steps: the kernel's
    /// `__all_sync(4 v >= len)` over the warp, whose first lane has the smallest `v`. Per row:
    /// a kernel warp holding several short rows skips only when all of them are padding there.
    fn warp_idle(&self, v: usize) -> bool {
        let tp = v % self.np;
        4 * (v - tp % 32) >= self.len
    }

    /// Counts `count` compare-exchanges of the network, run or skipped.
    fn count(&mut self, count: u64, run: bool) {
        self.work.network += count;
        if run {
            self.work.executed += count;
        }
    }
}

fn registers_first<U: SortBits>(r: &mut [Item<U>], tagged: bool) {
    for (a, b) in [(0, 1), (2, 3), (0, 3), (1, 2), (0, 1), (2, 3)] {
        cas(r, a, b, tagged);
    }
}

fn registers_last<U: SortBits>(r: &mut [Item<U>], tagged: bool) {
    for (a, b) in [(0, 2), (1, 3), (0, 1), (2, 3)] {
        cas(r, a, b, tagged);
    }
}

/// `bmcs_shuffle_step` for the virtual threads `tp + c * np` (`tp = 0..np`) of one chunk `c`
/// at once (a warp's lanes all read before any writes, as `__shfl_xor_sync` does). The partner
/// is the physical lane `tp ^ m`'s virtual thread of the same chunk, exactly what the kernel's
/// shuffle reaches, so a schedule whose partner is not `v ^ m` would fail the tests.
fn shuffle_step<U: SortBits>(regs: &mut [[Item<U>; 4]], chunk: usize, m: usize, flip: bool, run: &mut Run) {
    let (np, tagged) = (run.np, run.tagged);
    let high = 1usize << (usize::BITS - 1 - m.leading_zeros());
    let old: Vec<[Item<U>; 4]> = regs[chunk * np..(chunk + 1) * np].to_vec();
    for tp in 0..np {
        let v = tp + chunk * np;
        // Two lanes make four compare-exchanges: count them at the lower one.
        let idle = run.warp_idle(v);
        if v & high == 0 {
            run.count(4, !idle);
        }
        if idle {
            continue;
        }
        let lower = v & high == 0;
        let r = &mut regs[v];
        for q in 0..4 {
            let other = old[tp ^ m][if flip { 3 - q } else { q }];
            let take = lower == gt(r[q], other, tagged);
            if take {
                r[q] = other;
            }
        }
    }
}

/// The steps of stage `s` with high bit `h` down to 2 as shuffles (the first the stage's flip
/// when `flip`), then the two register half-cleaners: `bmcs_warp_steps` on one chunk.
fn warp_steps<U: SortBits>(
    regs: &mut [[Item<U>; 4]],
    chunk: usize,
    s: usize,
    mut h: isize,
    mut flip: bool,
    run: &mut Run,
) {
    while h >= 2 {
        let m = if flip { (1 << (s - 2)) - 1 } else { 1 << (h - 2) };
        shuffle_step(regs, chunk, m, flip, run);
        flip = false;
        h -= 1;
    }
    let np = run.np;
    for (tp, r) in regs[chunk * np..(chunk + 1) * np].iter_mut().enumerate() {
        let idle = run.warp_idle(tp + chunk * np);
        run.count(4, !idle);
        if !idle {
            registers_last(r, run.tagged);
        }
    }
}

fn insert_zero(x: usize, h: usize) -> usize {
    ((x >> h) << (h + 1)) | (x & ((1 << h) - 1))
}

fn smem_radix2<U: SortBits>(sm: &mut [Item<U>], nt: usize, m: usize, h: usize, run: &mut Run) {
    for vt in 0..nt {
        for c in 0..2 {
            let b = insert_zero(vt + c * nt, h);
            run.count(1, b < run.len);
            if b < run.len {
                cas(sm, b, b ^ m, run.tagged);
            }
        }
    }
}

fn smem_radix4<U: SortBits>(sm: &mut [Item<U>], nt: usize, ma: usize, ha: usize, flip: bool, run: &mut Run) {
    let (hb, tagged) = (ha - 1, run.tagged);
    let mb = 1 << hb;
    for vt in 0..nt {
        let b = insert_zero(insert_zero(vt, hb), ha);
        run.count(4, b < run.len);
        if b >= run.len {
            continue;
        }
        let e = [b, b ^ mb, b ^ ma, b ^ ma ^ mb];
        let mut r = [sm[e[0]], sm[e[1]], sm[e[2]], sm[e[3]]];
        cas(&mut r, 0, 2, tagged);
        cas(&mut r, 1, 3, tagged);
        cas(&mut r, 0, 1, tagged);
        if flip {
            cas(&mut r, 3, 2, tagged);
        } else {
            cas(&mut r, 2, 3, tagged);
        }
        for q in 0..4 {
            sm[e[q]] = r[q];
        }
    }
}

/// Sorts `row` (length a power of two, at least 4) ascending by `(key, tag)` when `tagged`, by
/// key otherwise, through exactly the kernel's schedule with the block plan's threads per row,
/// `min(n / 4, 1024)`.
///
/// # Panics
/// When `row.len()` is not a power of two of at least 4 (a test-only model).
pub fn bmcs_row<U: SortBits>(row: &mut [(U, u32)], tagged: bool) {
    let np = (row.len() / 4).clamp(1, 1024);
    bmcs_row_threads(row, np, tagged);
}

/// `bmcs_sort_smem` of `row` with `np` threads per row, step for step: each thread takes its
/// virtual threads `tp + c * np` in turn (chunk `c`), the row lives in shared memory between
/// stages, stages 1..7 and the warp steps of every later stage run chunk by chunk.
///
/// # Panics
/// When `row.len()` is not a power of two of at least 4, or `np` is not a power of two that
/// divides `row.len() / 4` and is either `row.len() / 4` or a multiple of 32 (what the kernel
/// is launched with).
pub fn bmcs_row_threads<U: SortBits>(row: &mut [(U, u32)], np: usize, tagged: bool) {
    bmcs_row_len(row, np, row.len(), tagged);
}

/// [`bmcs_row_threads`] of a row whose keys from `len` on are padding (the order's maximum,
/// tags above the real ones, as the kernel pads): the groups of compare-exchanges the kernel
/// skips there are skipped here too, so the tests check that skipping them changes nothing.
/// Returns the work done against the whole network's.
///
/// # Panics
/// As [`bmcs_row_threads`].
pub fn bmcs_row_len<U: SortBits>(row: &mut [(U, u32)], np: usize, len: usize, tagged: bool) -> BmcsWork {
    let n = row.len();
    assert!(n >= 4 && n.is_power_of_two(), "bmcs_row models rows of 2^k >= 4 keys");
    let nt = n / 4;
    assert!(
        np.is_power_of_two() && nt.is_multiple_of(np) && (np == nt || np.is_multiple_of(32)),
        "bad threads per row {np}"
    );
    let log_n = n.trailing_zeros() as usize;
    let chunks = nt / np;
    let mut run = Run { len, np, tagged, work: BmcsWork::default() };
    let mut regs: Vec<[Item<U>; 4]> = row.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    for (v, r) in regs.iter_mut().enumerate() {
        let idle = run.warp_idle(v);
        run.count(6, !idle);
        if !idle {
            registers_first(r, tagged);
        }
    }
    for c in 0..chunks {
        for s in 3..=log_n.min(7) {
            warp_steps(&mut regs, c, s, s as isize - 1, true, &mut run);
        }
    }
    let mut sm: Vec<Item<U>> = regs.iter().flatten().copied().collect();
    for s in 8..=log_n {
        let mut h = s as isize - 1;
        let mut flip = true;
        if (h - 6) & 1 != 0 {
            smem_radix2(&mut sm, nt, (1 << s) - 1, h as usize, &mut run);
            h -= 1;
            flip = false;
        }
        while h > 6 {
            let ma = if flip { (1 << s) - 1 } else { 1 << h };
            smem_radix4(&mut sm, nt, ma, h as usize, flip, &mut run);
            flip = false;
            h -= 2;
        }
        for (vt, r) in regs.iter_mut().enumerate() {
            r.copy_from_slice(&sm[4 * vt..4 * vt + 4]);
        }
        for c in 0..chunks {
            warp_steps(&mut regs, c, s, h, false, &mut run);
        }
        for (vt, r) in regs.iter().enumerate() {
            sm[4 * vt..4 * vt + 4].copy_from_slice(r);
        }
    }
    for (vt, r) in regs.iter().enumerate() {
        row[4 * vt..4 * vt + 4].copy_from_slice(r);
    }
    run.work
}

/// The compare-exchanges the kernel runs on one row of `len` keys padded to `2^log_n`, with
/// the block plan's threads per row, against the padded network's: the work the padding still
/// costs (the flips that pair real keys with padding), where the network alone would cost
/// `2^log_n / len`.
///
/// # Panics
/// When `len > 2^log_n` or `log_n < 2`.
pub fn bmcs_work(len: usize, log_n: u32) -> BmcsWork {
    let n = 1usize << log_n;
    assert!(log_n >= 2 && len <= n);
    let mut row: Vec<(u32, u32)> = (0..n).map(|i| (if i < len { 0 } else { u32::MAX }, i as u32)).collect();
    bmcs_row_len(&mut row, (n / 4).clamp(1, 1024), len, true)
}

/// The kernel's whole per-row procedure on `keys` (any length up to `2^log_n`, `log_n >= 2`):
/// map to ordered bits (xor-ed with all ones when `descending`), pad with the maximum to
/// `2^log_n`, run [`bmcs_row`] with tags when `values` is given, map back and gather the values
/// through the tags, as `sort_row_block` does.
///
/// # Panics
/// When `keys` is longer than `2^log_n`, `log_n < 2`, or `values` has another length.
pub fn bmcs_kernel_row<K: super::SortKey, V: Copy>(
    keys: &mut [K],
    values: Option<&mut [V]>,
    log_n: u32,
    descending: bool,
) {
    let n = 1usize << log_n;
    assert!(log_n >= 2 && keys.len() <= n);
    let flip = if descending { K::Bits::MAX } else { K::Bits::ZERO };
    let mut row: Vec<(K::Bits, u32)> = (0..n)
        .map(|i| (keys.get(i).map_or(K::Bits::MAX, |k| k.to_bits_ordered().xor(flip)), i as u32))
        .collect();
    bmcs_row_len(&mut row, (n / 4).clamp(1, 1024), keys.len(), values.is_some());
    for (k, &(b, _)) in keys.iter_mut().zip(&row) {
        *k = K::from_bits_ordered(b.xor(flip));
    }
    if let Some(values) = values {
        assert_eq!(values.len(), keys.len());
        let orig = values.to_vec();
        for (v, &(_, t)) in values.iter_mut().zip(&row) {
            *v = orig[t as usize];
        }
    }
}

/// Threads of a radix block (`HK_RADIX_THREADS`).
const RADIX_THREADS: usize = 256;

/// The radix kernels of `sort_radix.cuh` (histogram, then one pass per 8-bit digit) on the long
/// segments of `plan`, tile by tile with the kernels' arithmetic: tiles of
/// [`super::gpu::radix_tile_keys`] keys read from the plan's words, per-tile stable ranks
/// (rounds of 256 keys, warps of 32, lanes in order), the look-back prefix over the earlier
/// tiles of the segment, and each slot's destination `seg_begin + seg_excl + before -
/// tile_excl + slot`. Passes ping-pong between `keys` and a scratch copy as on the device; the
/// keys outside the long segments stay as they are.
///
/// # Panics
/// When `values` has another length than `keys`, or the plan does not describe `keys` (a
/// test-only model).
pub fn radix_long<K: super::SortKey, V: Copy>(
    keys: &mut [K],
    values: Option<&mut [V]>,
    plan: &super::gpu::SegmentPlan,
    descending: bool,
) {
    let Some(layout) = plan.radix else { return };
    let flip = if descending { K::Bits::MAX } else { K::Bits::ZERO };
    let passes = (K::Bits::BITS / 8) as usize;
    let w = &plan.words;
    let seg = |j: usize| {
        (
            w[layout.segs_at + 3 * j] as usize,
            w[layout.segs_at + 3 * j + 1] as usize,
            w[layout.segs_at + 3 * j + 2] as usize,
        )
    };
    // Histogram kernel: counts per segment, pass and digit.
    let nseg = plan.long.len();
    let digit = |b: u64, p: usize| ((b >> (8 * p)) & 255) as usize;
    let bits = |k: K| k.to_bits_ordered().xor(flip).to_u64();
    let mut hist = vec![0u64; nseg * passes * 256];
    for j in 0..nseg {
        let (b, e, _) = seg(j);
        for &k in &keys[b..e] {
            for p in 0..passes {
                hist[(j * passes + p) * 256 + digit(bits(k), p)] += 1;
            }
        }
    }
    let mut src_k = keys.to_vec();
    let mut src_v: Option<Vec<V>> = values.as_deref().map(<[V]>::to_vec);
    for p in 0..passes {
        let mut dst_k = src_k.clone();
        let mut dst_v = src_v.clone();
        // Inclusive look-back counts per tile and digit of this pass.
        let mut inclusive = vec![[0u64; 256]; layout.tiles];
        for tile in 0..layout.tiles {
            let j = w[layout.tiles_at + tile] as usize;
            let (sb, se, first) = seg(j);
            let begin = sb + (tile - first) * layout.tile_keys;
            let len = (se - begin).min(layout.tile_keys);
            // Stable ranks: round r, warp, lane order is the index order within the tile.
            let mut run = [0u64; 256];
            let mut rank = vec![0u64; len];
            for r in 0..len.div_ceil(RADIX_THREADS) {
                for i in r * RADIX_THREADS..((r + 1) * RADIX_THREADS).min(len) {
                    let d = digit(bits(src_k[begin + i]), p);
                    rank[i] = run[d];
                    run[d] += 1;
                }
            }
            let excl = |v: &[u64]| -> Vec<u64> {
                v.iter()
                    .scan(0u64, |acc, &x| {
                        let e = *acc;
                        *acc += x;
                        Some(e)
                    })
                    .collect()
            };
            let tile_excl = excl(&run);
            let seg_excl = excl(&hist[(j * passes + p) * 256..(j * passes + p + 1) * 256]);
            let before: Vec<u64> =
                (0..256).map(|d| if tile == first { 0 } else { inclusive[tile - 1][d] }).collect();
            for d in 0..256 {
                inclusive[tile][d] = before[d] + run[d];
            }
            let mut slots = vec![(0u64, 0usize); len];
            for i in 0..len {
                let d = digit(bits(src_k[begin + i]), p);
                slots[(tile_excl[d] + rank[i]) as usize] = (bits(src_k[begin + i]), i);
            }
            for (s, &(b, i)) in slots.iter().enumerate() {
                let d = digit(b, p);
                let to =
                    (sb as u64 + seg_excl[d] + before[d]).wrapping_sub(tile_excl[d]).wrapping_add(s as u64);
                dst_k[to as usize] = src_k[begin + i];
                if let (Some(dv), Some(sv)) = (dst_v.as_mut(), src_v.as_ref()) {
                    dv[to as usize] = sv[begin + i];
                }
            }
        }
        src_k = dst_k;
        src_v = dst_v;
    }
    keys.copy_from_slice(&src_k);
    if let (Some(v), Some(sv)) = (values, src_v) {
        v.copy_from_slice(&sv);
    }
}
