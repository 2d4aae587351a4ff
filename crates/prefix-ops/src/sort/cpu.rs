//! The CPU paths: bitonic networks for short rows, the standard library's sorts for longer
//! ones, rayon over rows and segments or within one large row, and the dispatcher choosing.

use rayon::prelude::*;

use super::Order;
use super::key::{SortBits, SortKey};
use super::network::{sort_bits, sort_tagged};

/// Rows up to this length sort through the bitonic network (padded to a power of two).
/// Measured on the 2-vCPU development VM, 2^20 f32 keys: at 32 keys a row the network takes
/// 3.9 ms against 4.2 ms for `sort_unstable` on the ordered bits; at 64 it loses, 10.5 ms
/// against 6.2 ms (its 21 layers of 32 comparators no longer fit the registers).
pub const NETWORK_MAX_LEN: usize = 32;

/// Rows at least this long, when there are too few of them to occupy every thread, are each
/// sorted with rayon's parallel sort instead of one thread per row.
const PARALLEL_ROW_MIN: usize = 1 << 15;

/// Rows per rayon task when rows are short, so a task amortises its scheduling cost.
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
    /// Rows one after another, each by rayon's parallel sort.
    WithinRow,
}

/// The dispatcher: picks the CPU path by row length, number of rows and key width.
///
/// ```
/// use prefix_ops::sort::{plan_cpu, CpuPlan};
/// assert_eq!(plan_cpu(17, 1000, 4), CpuPlan::Network { log_n: 5 });
/// assert_eq!(plan_cpu(33, 1000, 4), CpuPlan::PerRow);
/// assert_eq!(plan_cpu(1000, 1000, 8), CpuPlan::PerRow);
/// assert_eq!(plan_cpu(1 << 20, 2, 4), CpuPlan::WithinRow);
/// ```
pub fn plan_cpu(row_len: usize, rows: usize, key_bytes: usize) -> CpuPlan {
    // The network's cost grows as n log^2 n against n log n: the crossover is at the same
    // length for 4- and 8-byte keys on the machines measured so far, so key_bytes only
    // documents the intent of a per-width table.
    let _ = key_bytes;
    if row_len <= NETWORK_MAX_LEN {
        CpuPlan::Network { log_n: row_len.next_power_of_two().trailing_zeros().max(1) }
    } else if row_len >= PARALLEL_ROW_MIN && rows < 2 * rayon::current_num_threads() {
        CpuPlan::WithinRow
    } else {
        CpuPlan::PerRow
    }
}

pub(super) fn rows<K: SortKey>(keys: &mut [K], row_len: usize, order: Order) {
    if keys.is_empty() || row_len <= 1 {
        return;
    }
    let flip = order.flip::<K::Bits>();
    let per_task = (KEYS_PER_TASK / row_len).max(1);
    match plan_cpu(row_len, keys.len() / row_len, size_of::<K>()) {
        CpuPlan::Network { .. } => {
            keys.par_chunks_mut(row_len).with_min_len(per_task).for_each(|r| network_keys(r, flip))
        }
        CpuPlan::PerRow => keys
            .par_chunks_mut(row_len)
            .with_min_len(per_task)
            .for_each_init(Vec::new, |b, r| per_row_keys(r, flip, b)),
        CpuPlan::WithinRow => keys.chunks_mut(row_len).for_each(|r| whole(r, order)),
    }
}

pub(super) fn rows_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    row_len: usize,
    order: Order,
) {
    if keys.is_empty() || row_len <= 1 {
        return;
    }
    let flip = order.flip::<K::Bits>();
    let per_task = (KEYS_PER_TASK / row_len).max(1);
    match plan_cpu(row_len, keys.len() / row_len, size_of::<K>()) {
        CpuPlan::WithinRow => keys
            .chunks_mut(row_len)
            .zip(values.chunks_mut(row_len))
            .for_each(|(k, v)| whole_by_key(k, v, order)),
        _ => keys
            .par_chunks_mut(row_len)
            .zip(values.par_chunks_mut(row_len))
            .with_min_len(per_task)
            .for_each_init(Scratch::default, |s, (k, v)| row_pairs(k, v, flip, s)),
    }
}

pub(super) fn segments<K: SortKey>(keys: &mut [K], offsets: &[usize], order: Order) {
    let flip = order.flip::<K::Bits>();
    let (small, large): (Vec<_>, Vec<_>) =
        split_segments(keys, offsets).into_iter().partition(|s| s.len() < PARALLEL_ROW_MIN);
    small.into_par_iter().with_min_len(64).for_each_init(Vec::new, |b, s| {
        if s.len() <= NETWORK_MAX_LEN { network_keys(s, flip) } else { per_row_keys(s, flip, b) }
    });
    // Large segments run in parallel with each other and within themselves (work stealing).
    large.into_par_iter().for_each(|s| whole(s, order));
}

pub(super) fn segments_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    offsets: &[usize],
    order: Order,
) {
    let flip = order.flip::<K::Bits>();
    let pairs: Vec<_> =
        split_segments(keys, offsets).into_iter().zip(split_segments(values, offsets)).collect();
    let (small, large): (Vec<_>, Vec<_>) = pairs.into_iter().partition(|(k, _)| k.len() < PARALLEL_ROW_MIN);
    small
        .into_par_iter()
        .with_min_len(64)
        .for_each_init(Scratch::default, |s, (k, v)| row_pairs(k, v, flip, s));
    large.into_par_iter().for_each(|(k, v)| whole_by_key(k, v, order));
}

pub(super) fn whole<K: SortKey>(keys: &mut [K], order: Order) {
    let flip = order.flip::<K::Bits>();
    if keys.len() < PARALLEL_ROW_MIN {
        if keys.len() <= NETWORK_MAX_LEN {
            network_keys(keys, flip)
        } else {
            per_row_keys(keys, flip, &mut Vec::new())
        }
    } else {
        keys.par_sort_unstable_by_key(|k| k.to_bits_ordered().xor(flip));
    }
}

pub(super) fn whole_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    order: Order,
) {
    let flip = order.flip::<K::Bits>();
    if keys.len() < PARALLEL_ROW_MIN {
        row_pairs(keys, values, flip, &mut Scratch::default());
        return;
    }
    // (key, position) pairs are distinct, so the unstable parallel sort gives the stable order.
    let mut tagged: Vec<(K::Bits, u32)> = Vec::new();
    let mut wide: Vec<(K::Bits, usize)> = Vec::new();
    let order_of = |k: &K| k.to_bits_ordered().xor(flip);
    if keys.len() <= u32::MAX as usize {
        tagged = keys.par_iter().enumerate().map(|(i, k)| (order_of(k), i as u32)).collect();
        tagged.par_sort_unstable();
    } else {
        wide = keys.par_iter().enumerate().map(|(i, k)| (order_of(k), i)).collect();
        wide.par_sort_unstable();
    }
    let old: Vec<V> = values.to_vec();
    let src = |i: usize| -> (K::Bits, usize) {
        if wide.is_empty() { (tagged[i].0, tagged[i].1 as usize) } else { wide[i] }
    };
    keys.par_iter_mut().zip(values.par_iter_mut()).enumerate().for_each(|(i, (k, v))| {
        let (b, from) = src(i);
        *k = K::from_bits_ordered(b.xor(flip));
        *v = old[from];
    });
}

/// Per-thread buffers the key-value paths reuse across rows.
struct Scratch<U, V> {
    tagged: Vec<(U, u32)>,
    values: Vec<V>,
}

impl<U, V> Default for Scratch<U, V> {
    fn default() -> Self {
        Scratch { tagged: Vec::new(), values: Vec::new() }
    }
}

/// One short row through the network: ordered bits on the stack, padded with the maximum.
fn network_keys<K: SortKey>(row: &mut [K], flip: K::Bits) {
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

/// One row of pairs: sort `(ordered key, position)` (the network for short rows), then gather
/// keys and values by position. Distinct positions make the order strict, hence stable.
fn row_pairs<K: SortKey, V: Copy>(
    keys: &mut [K],
    values: &mut [V],
    flip: K::Bits,
    s: &mut Scratch<K::Bits, V>,
) {
    let len = keys.len();
    if len <= 1 {
        return;
    }
    s.tagged.clear();
    s.tagged.extend(keys.iter().enumerate().map(|(i, k)| (k.to_bits_ordered().xor(flip), i as u32)));
    if len <= NETWORK_MAX_LEN {
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
