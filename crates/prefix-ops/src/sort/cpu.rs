//! The CPU paths: bitonic networks for short rows (in AVX2 registers where the CPU has them),
//! for 32-bit keys on AVX2 CPUs the register network and the vectorised quicksort up to
//! [`QUICK_MAX_LEN`], otherwise the standard library's sort for rows up to [`RADIX_ROW_MIN`] and
//! one-thread LSD radix sorts for longer rows; whole arrays by an MSD scatter into cache-sized
//! buckets sorted one per thread; and the dispatcher choosing.

use rayon::prelude::*;

use super::Order;
use super::key::{SortBits, SortKey};
use super::tuning::SortTuning;

use super::network::{sort_bits, sort_tagged};

/// Rows up to this length sort through the bitonic network (padded to a power of two): in AVX2
/// registers for 32-bit keys when the CPU has AVX2 (eight rows at a time in column registers), else the scalar network.
/// A tuning parameter. Measured on the 2-vCPU development VM, 2^20 f32 keys: at 32 keys a row
/// the scalar network takes 3.9 ms against 4.2 ms for `sort_unstable` on the ordered bits; at
/// 64 it loses, 10.5 ms against 6.2 ms (its 21 layers of 32 comparators no longer fit the
/// registers).
pub const NETWORK_MAX_LEN: usize = 32;

/// Rows (and segments) at least this long sort by the one-thread LSD radix sort, shorter ones
/// above [`NETWORK_MAX_LEN`] by `sort_unstable` on the ordered bits. A tuning parameter: the
/// radix sort's cost per key is flat (one counting pass, then one scatter per non-constant
/// byte) while the comparison sort's grows with `log n`; the fixed cost of the 256-bucket
/// prefix sums per digit is what keeps short rows on the comparison sort.
pub const RADIX_ROW_MIN: usize = 256;

/// Arrays at least this long, and rows this long when there are too few of them to occupy
/// every thread, sort with the parallel LSD radix sort ([`PAR_DIGIT_BITS`]-bit digits, one
/// chunk per thread). A tuning parameter: below it the passes' fork-join and the 2^11-bucket
/// prefix sums cost more than they share out.
pub const RADIX_PAR_MIN: usize = 1 << 16;

pub use super::radix::{
    HUGE_PAGE_MIN_BYTES, MSD_COARSE_BITS, MSD_DIGIT_BITS, MSD_FINE_BITS, PAR_DIGIT_BITS, SEQ_DIGIT_BITS,
};

/// Rows (and segments, and arrays below [`RADIX_PAR_MIN`]) of 32-bit keys longer than the
/// network's and at most this long sort by the vectorised quicksort when the CPU has AVX2,
/// whatever the radix threshold says.
pub const QUICK_MAX_LEN: usize = 1 << 16;

/// On AVX-512 CPUs, parts of the vectorised quicksort (and rows) of 32-bit keys from this
/// length up to 256 sort in the AVX-512 networks (64, 128 or 256 keys in 4, 8 or 16 registers),
/// shorter ones in the AVX2 networks (64 or 128 keys in 8 or 16 registers). A tuning parameter;
/// the default sends every part to AVX-512, whose networks hold their keys in half the registers
/// and compile to straight-line code.
pub const WIDE_NET_MIN: usize = 2;

/// Keys per rayon task when rows are short, so a task amortises its scheduling cost.
const KEYS_PER_TASK: usize = 1 << 14;

/// How the CPU sorts a batch of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPlan {
    /// Each row through the bitonic network, padded to `2^log_n` keys; rayon over rows.
    Network {
        /// log2 of the padded row length.
        log_n: u32,
    },
    /// Each row by `sort_unstable` (keys) or a tagged sort (pairs) on one thread; rayon over rows.
    PerRow,
    /// Each row by the one-thread LSD radix sort; rayon over rows.
    RadixPerRow,
    /// Rows one after another, each by the parallel LSD radix sort.
    WithinRow,
}

/// The dispatcher with the default parameters ([`SortTuning::DEFAULT`]): picks the CPU path by
/// row length, number of rows and key width. Dispatch itself uses [`plan_cpu_with`] and the
/// tuned parameters.
///
/// ```
/// use prefix_ops::sort::{plan_cpu, CpuPlan};
/// assert_eq!(plan_cpu(17, 1000, 4), CpuPlan::Network { log_n: 5 });
/// assert_eq!(plan_cpu(33, 1000, 4), CpuPlan::PerRow);
/// assert_eq!(plan_cpu(1000, 1000, 8), CpuPlan::RadixPerRow);
/// assert_eq!(plan_cpu(1 << 20, 1, 4), CpuPlan::WithinRow);
/// ```
pub fn plan_cpu(row_len: usize, rows: usize, key_bytes: usize) -> CpuPlan {
    plan_cpu_with(row_len, rows, key_bytes, &SortTuning::DEFAULT)
}

/// The dispatcher under explicit parameters.
pub fn plan_cpu_with(row_len: usize, rows: usize, key_bytes: usize, t: &SortTuning) -> CpuPlan {
    // The crossovers are tuned per key type (the cache key), so key_bytes only documents the
    // intent of a per-width table.
    let _ = key_bytes;
    if row_len <= t.network_len() {
        CpuPlan::Network { log_n: row_len.next_power_of_two().trailing_zeros().max(1) }
    } else if row_len >= t.radix_par_min && rows < 2 * rayon::current_num_threads() {
        CpuPlan::WithinRow
    } else if row_len >= t.radix_row_min {
        CpuPlan::RadixPerRow
    } else {
        CpuPlan::PerRow
    }
}

/// The radix key of a sort key: its ordered bits, flipped for descending sorts.
#[inline(always)]
fn radix_key<K: SortKey>(k: &K, flip: K::Bits) -> u64 {
    k.to_bits_ordered().xor(flip).to_u64()
}

pub(super) fn rows<K: SortKey>(keys: &mut [K], row_len: usize, order: Order, t: &SortTuning) {
    if keys.is_empty() || row_len <= 1 {
        return;
    }
    let flip = order.flip::<K::Bits>();
    let per_task = (KEYS_PER_TASK / row_len).max(1);
    match plan_cpu_with(row_len, keys.len() / row_len, size_of::<K>(), t) {
        CpuPlan::Network { .. } => network_rows(keys, row_len, flip, per_task),
        CpuPlan::PerRow | CpuPlan::RadixPerRow => keys
            .par_chunks_mut(row_len)
            .with_min_len(per_task)
            .for_each_init(RowScratch::default, |s, r| row_keys(r, flip, s, t)),
        CpuPlan::WithinRow => keys.chunks_mut(row_len).for_each(|r| whole(r, order, t)),
    }
}

/// Rows of at most `network_max_len` keys: whole tasks of rows through the AVX2 network where
/// it applies, else row by row through the scalar one.
fn network_rows<K: SortKey>(keys: &mut [K], row_len: usize, flip: K::Bits, per_task: usize) {
    keys.par_chunks_mut(row_len * per_task).for_each(|task| {
        if !super::simd::sort_rows(task, row_len, flip) {
            task.chunks_mut(row_len).for_each(|r| network_keys(r, flip));
        }
    })
}

pub(super) fn rows_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    row_len: usize,
    order: Order,
    t: &SortTuning,
) {
    if keys.is_empty() || row_len <= 1 {
        return;
    }
    let flip = order.flip::<K::Bits>();
    let per_task = (KEYS_PER_TASK / row_len).max(1);
    match plan_cpu_with(row_len, keys.len() / row_len, size_of::<K>(), t) {
        CpuPlan::WithinRow => keys
            .chunks_mut(row_len)
            .zip(values.chunks_mut(row_len))
            .for_each(|(k, v)| whole_by_key(k, v, order, t)),
        _ => keys
            .par_chunks_mut(row_len)
            .zip(values.par_chunks_mut(row_len))
            .with_min_len(per_task)
            .for_each_init(Scratch::default, |s, (k, v)| row_pairs(k, v, flip, s, t)),
    }
}

pub(super) fn segments<K: SortKey>(keys: &mut [K], offsets: &[usize], order: Order, t: &SortTuning) {
    let flip = order.flip::<K::Bits>();
    let (small, large): (Vec<_>, Vec<_>) =
        split_segments(keys, offsets).into_iter().partition(|s| s.len() < t.radix_par_min);
    small.into_par_iter().with_min_len(64).for_each_init(RowScratch::default, |b, s| row_keys(s, flip, b, t));
    // Large segments run in parallel with each other and within themselves (work stealing).
    large.into_par_iter().for_each(|s| whole(s, order, t));
}

pub(super) fn segments_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    offsets: &[usize],
    order: Order,
    t: &SortTuning,
) {
    let flip = order.flip::<K::Bits>();
    let pairs: Vec<_> =
        split_segments(keys, offsets).into_iter().zip(split_segments(values, offsets)).collect();
    let (small, large): (Vec<_>, Vec<_>) = pairs.into_iter().partition(|(k, _)| k.len() < t.radix_par_min);
    small
        .into_par_iter()
        .with_min_len(64)
        .for_each_init(Scratch::default, |s, (k, v)| row_pairs(k, v, flip, s, t));
    large.into_par_iter().for_each(|(k, v)| whole_by_key(k, v, order, t));
}

pub(super) fn whole<K: SortKey>(keys: &mut [K], order: Order, t: &SortTuning) {
    let flip = order.flip::<K::Bits>();
    if keys.len() < t.radix_par_min {
        return row_keys(keys, flip, &mut RowScratch::default(), t);
    }
    let key = |k: &K| radix_key(k, flip);
    if (COARSE_MIN_LEN..=COARSE_MAX_LEN).contains(&keys.len()) && super::quick::available::<K>() {
        let coarse = super::radix::scatter_msd_coarse(keys, K::Bits::BITS, &key, L2_BUCKET_MAX);
        let Some(b) = coarse else { return };
        return sort_coarse_buckets(&b, keys, flip, t);
    }
    let Some(b) = super::radix::scatter_msd(keys, K::Bits::BITS, &key) else { return };
    sort_buckets(&b, keys, flip, t);
}

/// Whole arrays of 32-bit keys (where the vectorised quicksort runs) from this length up to
/// [`COARSE_MAX_LEN`] take the coarse MSD scatter ([`MSD_COARSE_BITS`]-bit digit, its lines in
/// L1) and sort each bucket in L2 by a second digit (`bucket_two_level`). A tuning parameter:
/// below it the coarse buckets are short enough for the quicksort alone (2^13 keys).
pub const COARSE_MIN_LEN: usize = 1 << 21;

/// The longest whole array of the coarse path: 2^[`MSD_COARSE_BITS`] buckets of at most
/// [`L2_BUCKET_MAX`] keys. Past it the 12-bit scatter's buckets stay nearer the cache.
pub const COARSE_MAX_LEN: usize = L2_BUCKET_MAX << MSD_COARSE_BITS;

/// Buckets of the coarse scatter up to this many keys sort on one thread in L2 (a tuning
/// parameter): 2^17 keys of 4 bytes and the scratch of as many are 1 MiB, Zen 4's L2.
pub const L2_BUCKET_MAX: usize = 1 << 17;

/// Digit width of the in-cache second level of `bucket_two_level` (a tuning parameter):
/// 2^8 output streams stay in L1, and a 2^16-key bucket leaves parts of about 256 keys, the
/// largest register network.
pub const SUB_DIGIT_BITS: u32 = 8;

/// Coarse buckets shorter than this go straight to the quicksort (`bucket_keys`): a second
/// digit pays only where it saves partition levels.
const TWO_LEVEL_MIN: usize = 1 << 13;

/// Sorts the buckets of the coarse scatter `b` into `dst` in parallel, each by
/// [`bucket_two_level`] on one thread; a bucket past [`L2_BUCKET_MAX`] (skewed keys) goes
/// through the 12-bit scatter as [`sort_buckets`] does.
fn sort_coarse_buckets<K: SortKey>(
    b: &super::radix::Buckets<K>,
    dst: &mut [K],
    flip: K::Bits,
    t: &SortTuning,
) {
    let key = |k: &K| radix_key(k, flip);
    split_segments(dst, &b.starts).into_par_iter().zip(split_buckets(b)).for_each_init(
        RowScratch::default,
        |s, (dst, src)| {
            if src.len() <= L2_BUCKET_MAX {
                bucket_two_level(src, dst, flip, s, t);
            } else if let Some(inner) = super::radix::scatter_msd(src, K::Bits::BITS, &key) {
                sort_buckets(&inner, dst, flip, t);
            } else {
                dst.copy_from_slice(src);
            }
        },
    );
}

/// Sorts one coarse bucket of 32-bit keys `src` into `dst` (as long), in L2: one counting
/// scatter on the bucket's top [`SUB_DIGIT_BITS`] varying bits (direct stores, 2^8 streams),
/// then every part by the vectorised quicksort (about 256 keys: straight to the register
/// networks). `u32` keys ascending scatter into `dst` itself; others into scratch bits, mapped
/// back once. Needs [`super::quick::available`].
fn bucket_two_level<K: SortKey>(
    src: &[K],
    dst: &mut [K],
    flip: K::Bits,
    s: &mut RowScratch<K>,
    t: &SortTuning,
) {
    const PARTS: usize = 1 << SUB_DIGIT_BITS;
    let n = src.len();
    if n < TWO_LEVEL_MIN {
        return bucket_keys(src, dst, flip, s, t);
    }
    let bits = |k: &K| radix_key(k, flip) as u32;
    let k0 = bits(&src[0]);
    let diff = src.iter().fold(0u32, |d, k| d | (bits(k) ^ k0));
    if diff == 0 {
        return dst.copy_from_slice(src);
    }
    let shift = (u32::BITS - diff.leading_zeros()).saturating_sub(SUB_DIGIT_BITS);
    let part = |b: u32| ((b >> shift) as usize) & (PARTS - 1);
    let mut count = [0usize; PARTS];
    for k in src {
        count[part(bits(k))] += 1;
    }
    let mut at = [0usize; PARTS];
    super::radix::exclusive_prefix(&count, &mut at);
    let starts = at;
    let mut scatter = |out: &mut [u32]| {
        for k in src {
            let b = bits(k);
            let p = part(b);
            out[at[p]] = b;
            at[p] += 1;
        }
    };
    s.tmp32.resize(n, 0);
    let sort_parts = |out: &mut [u32], tmp: &mut [u32]| {
        for (&from, &len) in starts.iter().zip(&count) {
            if len > 1 {
                super::quick::sort(&mut out[from..from + len], &mut tmp[..len], t.wide_net_min);
            }
        }
    };
    if let Some(out) = own_bits(dst, flip) {
        scatter(out);
        sort_parts(out, &mut s.tmp32);
    } else {
        let mut sub = std::mem::take(&mut s.sub32);
        sub.resize(n, 0);
        scatter(&mut sub);
        sort_parts(&mut sub, &mut s.tmp32);
        for (k, &b) in dst.iter_mut().zip(&sub) {
            *k = K::from_bits_ordered(K::Bits::from_u64(b as u64).xor(flip));
        }
        s.sub32 = sub;
    }
}

/// Sorts the buckets of `b` into `dst` (as long), in parallel: each in cache on one thread, or,
/// when one holds more than [`MSD_BUCKET_MAX`] keys (skewed keys: floats in `[0, 1e6)` put half of
/// themselves under one exponent), by another scatter on the digit below. Every key of a bucket
/// shares the bits down to the digit just used, so each level takes new bits and the recursion
/// ends; it costs one read and one write per level where the parallel LSD sort it replaces made
/// three passes over every bit.
fn sort_buckets<K: SortKey>(b: &super::radix::Buckets<K>, dst: &mut [K], flip: K::Bits, t: &SortTuning) {
    let key = |k: &K| radix_key(k, flip);
    split_segments(dst, &b.starts).into_par_iter().zip(split_buckets(b)).for_each_init(
        RowScratch::default,
        |s, (dst, src)| {
            if src.len() <= MSD_BUCKET_MAX {
                bucket_keys(src, dst, flip, s, t);
            } else if let Some(inner) = super::radix::scatter_msd(src, K::Bits::BITS, &key) {
                sort_buckets(&inner, dst, flip, t);
            } else {
                // Every key of the bucket is the same.
                dst.copy_from_slice(src);
            }
        },
    );
}

/// Sorts a large array of elements stably by `key`: the MSD scatter, then every bucket by the
/// one-thread LSD sort in cache.
fn sort_stable<E: Copy + Send + Sync>(data: &mut [E], key_bits: u32, key: &(impl Fn(&E) -> u64 + Sync)) {
    let Some(b) = super::radix::scatter_msd(data, key_bits, key) else { return };
    split_segments(data, &b.starts).into_par_iter().zip(split_buckets(&b)).for_each_init(
        Vec::new,
        |tmp, (dst, src)| {
            dst.copy_from_slice(src);
            if dst.len() > MSD_BUCKET_MAX {
                super::radix::sort_par(dst, key_bits, key);
            } else {
                super::radix::sort_seq(dst, tmp, key_bits, key);
            }
        },
    );
}

/// Buckets of the whole-array sort longer than this (skewed keys) sort by the parallel LSD
/// sort; shorter ones on one thread, in cache.
pub(super) const MSD_BUCKET_MAX: usize = 1 << 16;

/// The buckets of `b` as shared slices.
fn split_buckets<E>(b: &super::radix::Buckets<E>) -> Vec<&[E]> {
    b.starts.windows(2).map(|w| &b.keys[w[0]..w[1]]).collect()
}

/// Sorts the keys of one bucket `src` into `dst` (as long) on the calling thread.
fn bucket_keys<K: SortKey>(src: &[K], dst: &mut [K], flip: K::Bits, s: &mut RowScratch<K>, t: &SortTuning) {
    if src.len() > t.network_len() && super::quick::available::<K>() && own_bits(dst, flip).is_some() {
        // u32 ascending: sort the copy where it lies (the quicksort's first partition could
        // read `src` directly, but the copy is in cache and keeps one entry point).
        dst.copy_from_slice(src);
        return row_keys(dst, flip, s, t);
    }
    if src.len() > t.network_len() && quick_bits(src, flip, s, t) {
        return from_bits(dst, &s.bits, flip);
    }
    dst.copy_from_slice(src);
    row_keys(dst, flip, s, t);
}

pub(super) fn whole_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    order: Order,
    t: &SortTuning,
) {
    let flip = order.flip::<K::Bits>();
    if keys.len() < t.radix_par_min {
        row_pairs(keys, values, flip, &mut Scratch::default(), t);
        return;
    }
    if size_of::<V>() <= size_of::<u64>() || keys.len() > u32::MAX as usize {
        // Small values ride along with their keys: the scatter packs `(key, value)` pairs as it
        // reads both slices, and each bucket's sort writes them back apart, so the data crosses
        // memory twice, as keys alone do (no pass builds or splits pairs).
        let key = |p: &(K, V)| radix_key(&p.0, flip);
        let src = super::radix::Zipped(&*keys, &*values);
        let Some(b) = super::radix::scatter_msd_from(&src, K::Bits::BITS, &key) else { return };
        let dst = split_segments(keys, &b.starts).into_par_iter().zip(split_segments(values, &b.starts));
        dst.zip(split_buckets(&b)).for_each_init(
            || (Vec::new(), Vec::new()),
            |(buf, tmp), ((kd, vd), src)| {
                buf.clear();
                buf.extend_from_slice(src);
                if buf.len() > MSD_BUCKET_MAX {
                    super::radix::sort_par(buf, K::Bits::BITS, key);
                } else {
                    super::radix::sort_seq(buf, tmp, K::Bits::BITS, key);
                }
                for ((k, v), &(pk, pv)) in kd.iter_mut().zip(vd.iter_mut()).zip(buf.iter()) {
                    (*k, *v) = (pk, pv);
                }
            },
        );
    } else {
        // Large values move once: sort (key, position) pairs, then gather.
        let mut tagged: Vec<(K, u32)> = keys.par_iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
        sort_stable(&mut tagged, K::Bits::BITS, &|p: &(K, u32)| radix_key(&p.0, flip));
        let old: Vec<V> = values.to_vec();
        unzip_into(&tagged, keys, values, |&(k, i)| (k, old[i as usize]));
    }
}

/// Writes `f(pair)` of every element of `src` into `keys` and `values`, in parallel.
fn unzip_into<P: Sync, K: Send, V: Send>(
    src: &[P],
    keys: &mut [K],
    values: &mut [V],
    f: impl Fn(&P) -> (K, V) + Sync,
) {
    keys.par_iter_mut().zip(values.par_iter_mut()).zip(src.par_iter()).with_min_len(1 << 14).for_each(
        |((k, v), p)| {
            (*k, *v) = f(p);
        },
    );
}

/// Per-thread buffers the key paths reuse across rows.
struct RowScratch<K: SortKey> {
    bits: Vec<K::Bits>,
    tmp: Vec<K>,
    tmp32: Vec<u32>,
    /// The second-level scatter's output (`bucket_two_level`).
    sub32: Vec<u32>,
}

impl<K: SortKey> Default for RowScratch<K> {
    fn default() -> Self {
        RowScratch { bits: Vec::new(), tmp: Vec::new(), tmp32: Vec::new(), sub32: Vec::new() }
    }
}

/// One row (or segment, or small array) of keys on the calling thread, by the path its length
/// calls for.
fn row_keys<K: SortKey>(row: &mut [K], flip: K::Bits, s: &mut RowScratch<K>, t: &SortTuning) {
    let len = row.len();
    if len <= t.network_len() {
        return network_keys(row, flip);
    }
    if len <= QUICK_MAX_LEN && quick_keys(row, flip, s, t) {
        return;
    }
    if len < t.radix_row_min {
        per_row_keys(row, flip, &mut s.bits)
    } else {
        super::radix::sort_seq(row, &mut s.tmp, K::Bits::BITS, |k| radix_key(k, flip))
    }
}

/// Per-thread buffers the key-value paths reuse across rows.
struct Scratch<K: SortKey, V> {
    tagged: Vec<(K::Bits, u32)>,
    values: Vec<V>,
    pairs: Vec<(K, V)>,
    tmp: Vec<(K, V)>,
}

impl<K: SortKey, V> Default for Scratch<K, V> {
    fn default() -> Self {
        Scratch { tagged: Vec::new(), values: Vec::new(), pairs: Vec::new(), tmp: Vec::new() }
    }
}

/// One short row through the network: ordered bits on the stack, padded with the maximum.
pub(super) fn network_keys<K: SortKey>(row: &mut [K], flip: K::Bits) {
    let len = row.len();
    if len <= 1 {
        return;
    }
    let mut buf = [K::Bits::MAX; NETWORK_MAX_LEN];
    for (b, k) in buf.iter_mut().zip(row.iter()) {
        *b = k.to_bits_ordered().xor(flip);
    }
    // Fixed sizes let the compiler unroll and vectorise each layer.
    match len.next_power_of_two() {
        2 => sort_bits(&mut buf[..2]),
        4 => sort_bits(&mut buf[..4]),
        8 => sort_bits(&mut buf[..8]),
        16 => sort_bits(&mut buf[..16]),
        _ => sort_bits(&mut buf[..32]),
    }
    for (k, b) in row.iter_mut().zip(buf.iter()) {
        *k = K::from_bits_ordered(b.xor(flip));
    }
}

/// One row of 32-bit keys by the vectorised quicksort on the ordered bits (AVX2). Returns
/// `false`, touching nothing, where it does not apply (64-bit keys, no AVX2).
fn quick_keys<K: SortKey>(row: &mut [K], flip: K::Bits, s: &mut RowScratch<K>, t: &SortTuning) -> bool {
    if let Some(bits) = own_bits(row, flip) {
        if !super::quick::available::<K>() {
            return false;
        }
        s.tmp32.resize(bits.len(), 0);
        super::quick::sort(bits, &mut s.tmp32, t.wide_net_min);
        return true;
    }
    let sorted = quick_bits(row, flip, s, t);
    if sorted {
        from_bits(row, &s.bits, flip);
    }
    sorted
}

/// The ordered bits of `src`, sorted by the vectorised quicksort, into `s.bits`; `false`
/// where that sort does not apply (64-bit keys, no AVX2).
fn quick_bits<K: SortKey>(src: &[K], flip: K::Bits, s: &mut RowScratch<K>, t: &SortTuning) -> bool {
    if !super::quick::available::<K>() {
        return false;
    }
    s.bits.clear();
    s.bits.extend(src.iter().map(|k| k.to_bits_ordered().xor(flip)));
    let Some(bits) = (&mut s.bits as &mut dyn std::any::Any).downcast_mut::<Vec<u32>>() else {
        return false;
    };
    s.tmp32.resize(src.len(), 0);
    super::quick::sort(bits, &mut s.tmp32, t.wide_net_min);
    true
}

/// `keys` as their own ordered bits where they are (`u32` keys sorted ascending): the sort then
/// needs no copy in and out.
fn own_bits<K: SortKey>(keys: &mut [K], flip: K::Bits) -> Option<&mut [u32]> {
    if std::any::TypeId::of::<K>() != std::any::TypeId::of::<u32>() || flip.to_u64() != 0 {
        return None;
    }
    // SAFETY: K is u32 (checked), so this is the same slice under its own type.
    Some(unsafe { std::slice::from_raw_parts_mut(keys.as_mut_ptr().cast::<u32>(), keys.len()) })
}

/// Keys back from their ordered bits.
fn from_bits<K: SortKey>(dst: &mut [K], bits: &[K::Bits], flip: K::Bits) {
    for (k, b) in dst.iter_mut().zip(bits) {
        *k = K::from_bits_ordered(b.xor(flip));
    }
}

/// One row by `sort_unstable` on the ordered bits: mapping each key once and sorting plain
/// unsigned integers is faster than mapping inside every comparison.
fn per_row_keys<K: SortKey>(row: &mut [K], flip: K::Bits, buf: &mut Vec<K::Bits>) {
    buf.clear();
    buf.extend(row.iter().map(|k| k.to_bits_ordered().xor(flip)));
    buf.sort_unstable();
    for (k, b) in row.iter_mut().zip(buf.iter()) {
        *k = K::from_bits_ordered(b.xor(flip));
    }
}

/// One row of pairs. Long rows: the one-thread radix sort on `(key, value)` pairs (stable).
/// Shorter ones: sort `(ordered key, position)` (the network for short rows), then gather keys
/// and values by position; distinct positions make the order strict, hence stable.
fn row_pairs<K: SortKey, V: Copy>(
    keys: &mut [K],
    values: &mut [V],
    flip: K::Bits,
    s: &mut Scratch<K, V>,
    t: &SortTuning,
) {
    let len = keys.len();
    if len <= 1 {
        return;
    }
    // Past the network's buffer the comparison path is the only other one below the radix sort.
    if len >= t.radix_row_min && len > t.network_len() {
        s.pairs.clear();
        s.pairs.extend(keys.iter().copied().zip(values.iter().copied()));
        super::radix::sort_seq(&mut s.pairs, &mut s.tmp, K::Bits::BITS, |p| radix_key(&p.0, flip));
        for ((k, v), &(pk, pv)) in keys.iter_mut().zip(values.iter_mut()).zip(s.pairs.iter()) {
            *k = pk;
            *v = pv;
        }
        return;
    }
    s.tagged.clear();
    s.tagged.extend(keys.iter().enumerate().map(|(i, k)| (k.to_bits_ordered().xor(flip), i as u32)));
    if len <= t.network_len() {
        let n = len.next_power_of_two();
        s.tagged.extend((len..n).map(|i| (K::Bits::MAX, i as u32)));
        sort_tagged(&mut s.tagged);
    } else {
        s.tagged.sort_unstable();
    }
    s.values.clear();
    s.values.extend_from_slice(values);
    for ((k, v), &(b, from)) in keys.iter_mut().zip(values.iter_mut()).zip(s.tagged.iter()) {
        *k = K::from_bits_ordered(b.xor(flip));
        *v = s.values[from as usize];
    }
}

/// The segments of `data` as disjoint mutable slices (offsets already validated).
fn split_segments<'a, T>(data: &'a mut [T], offsets: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
    let Some(&first) = offsets.first() else { return out };
    let mut rest = &mut data[first..];
    for w in offsets.windows(2) {
        let (seg, tail) = rest.split_at_mut(w[1] - w[0]);
        out.push(seg);
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// splitmix64, so the test needs no generator crate.
    fn bits(seed: u64, n: usize) -> Vec<u64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let z = (s ^ (s >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^ (z >> 31)
            })
            .collect()
    }

    /// Buckets of 32-bit keys in the shapes the second level must survive: uniform, a narrow
    /// range, few distinct values, all equal, one part holding nearly every key, sorted,
    /// reversed; floats with NaNs of both signs, both zeros and infinities.
    fn buckets(n: usize) -> Vec<(&'static str, Vec<u32>)> {
        let r = bits(n as u64, n);
        vec![
            ("uniform", r.iter().map(|&x| x as u32).collect()),
            ("narrow", r.iter().map(|&x| 0x4000_0000 + (x % 5000) as u32).collect()),
            ("few", r.iter().map(|&x| (x % 3) as u32 * 0x0100_0000).collect()),
            ("equal", vec![77; n]),
            (
                "one part",
                r.iter()
                    .enumerate()
                    .map(|(i, &x)| if i % 1000 == 0 { u32::MAX } else { x as u32 & 0xFFFF })
                    .collect(),
            ),
            ("sorted", (0..n as u32).collect()),
            ("reversed", (0..n as u32).rev().collect()),
        ]
    }

    fn check<K: SortKey>(what: &str, src: &[K], flip: K::Bits) {
        let mut want: Vec<K::Bits> = src.iter().map(|k| k.to_bits_ordered().xor(flip)).collect();
        want.sort_unstable();
        let mut dst = src.to_vec();
        bucket_two_level(src, &mut dst, flip, &mut RowScratch::default(), &SortTuning::DEFAULT);
        let got: Vec<K::Bits> = dst.iter().map(|k| k.to_bits_ordered().xor(flip)).collect();
        assert!(got == want, "{what}: {} keys, flip {flip:?}", src.len());
    }

    #[test]
    fn two_level_bucket_sort_matches_std() {
        if !super::super::quick::available::<u32>() {
            return;
        }
        for n in [TWO_LEVEL_MIN - 1, TWO_LEVEL_MIN, 3 * TWO_LEVEL_MIN + 7, (1 << 16) + 123] {
            for (what, keys) in buckets(n) {
                check::<u32>(what, &keys, 0);
                check::<u32>(what, &keys, u32::MAX);
                let ints: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
                check::<i32>(what, &ints, 0);
                let floats: Vec<f32> = keys.iter().map(|&k| f32::from_bits(k)).collect();
                check::<f32>(what, &floats, 0);
                check::<f32>(what, &floats, u32::MAX);
            }
            let edges = [f32::NAN, -f32::NAN, -0.0, 0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, 2.5];
            let floats: Vec<f32> = bits(3, n).iter().map(|&x| edges[x as usize % edges.len()]).collect();
            check::<f32>("edges", &floats, 0);
            check::<f32>("edges", &floats, u32::MAX);
        }
    }
}
