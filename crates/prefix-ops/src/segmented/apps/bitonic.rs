//! Batcher's bitonic sort in the NESL formulation (thesis Fig. 5.9), recursion removed the way
//! CuNesl does it, on regular segments:
//!
//! ```text
//! bitonic_sort(a) = if #a == 1 then a else
//!     let mins = {min(b, t) : b in bot(a); t in top(a)}; maxs = {max(...)}
//!     in flatten({bitonic_sort(x) : x in [mins, maxs]})
//! batcher_sort(a) = if #a == 1 then a else
//!     let b = {batcher_sort(x) : x in bottop(a)} in bitonic_sort(b[0] ++ reverse(b[1]))
//! ```
//!
//! Bottom-up: for widths `w = 1, 2, 4, …`, every regular segment of `2w` holds two sorted
//! halves; reversing the top half makes it bitonic, and the bitonic merge is rounds of
//! "min/max of the two halves of every segment, then halve the segments" (`bottop`) down to
//! length 1. Keys compare in [`crate::sort`]'s total order.

use rayon::prelude::*;

use super::super::{Order, SortKey};
use crate::error::{Error, Result};
use crate::sort::SortBits;

/// Segments shorter than this many elements are whole tasks; longer ones are split.
const TASK: usize = 1 << 13;

fn check_pow2(n: usize, what: &str) -> Result<()> {
    if n > 1 && !n.is_power_of_two() {
        return Err(Error::Invalid(format!("{what}: bitonic sort needs a power-of-two length, got {n}")));
    }
    Ok(())
}

/// Runs `step(lo, hi)` on the bottom and top halves of every regular segment of `len`
/// elements, in parallel over segments, and within a segment when it is long.
fn on_halves<T: Send>(xs: &mut [T], len: usize, step: &(impl Fn(&mut [T], &mut [T]) + Sync)) {
    let half = len / 2;
    if len <= TASK {
        xs.par_chunks_mut(TASK.max(len)).for_each(|c| {
            c.chunks_exact_mut(len).for_each(|seg| {
                let (lo, hi) = seg.split_at_mut(half);
                step(lo, hi);
            })
        });
    } else {
        xs.chunks_exact_mut(len).for_each(|seg| {
            let (lo, hi) = seg.split_at_mut(half);
            lo.par_chunks_mut(TASK / 2).zip(hi.par_chunks_mut(TASK / 2)).for_each(|(a, b)| step(a, b));
        });
    }
}

/// Reverses the top half of every regular segment of `len` elements.
fn reverse_tops<T: Send>(xs: &mut [T], len: usize) {
    let half = len / 2;
    if len <= TASK {
        xs.par_chunks_mut(TASK.max(len))
            .for_each(|c| c.chunks_exact_mut(len).for_each(|seg| seg[half..].reverse()));
    } else {
        xs.chunks_exact_mut(len)
            .for_each(|seg| crate::segmented::reverse::reverse_par(&mut seg[half..], TASK));
    }
}

/// The merge levels `len, len / 2, …, 2` on every segment of `len` in `c`, on this thread.
fn merge_local<T>(c: &mut [T], len: usize, exchange: &impl Fn(&mut [T], &mut [T])) {
    let mut l = len;
    while l >= 2 {
        c.chunks_exact_mut(l).for_each(|seg| {
            let (lo, hi) = seg.split_at_mut(l / 2);
            exchange(lo, hi);
        });
        l /= 2;
    }
}

/// The whole schedule on an abstract compare-exchange `exchange(lo, hi)`. Widths below the
/// task size run inside each task's chunk from start to end (the thesis's shared-memory phase:
/// one pass over memory instead of one per level); wider ones go level by level over the
/// array until the segments fit a task again.
fn schedule<T: Send>(xs: &mut [T], exchange: impl Fn(&mut [T], &mut [T]) + Sync) {
    let n = xs.len();
    let local = TASK.min(n).max(1);
    xs.par_chunks_mut(local).for_each(|c| {
        let mut w = 1;
        while w < c.len() {
            c.chunks_exact_mut(2 * w).for_each(|seg| seg[w..].reverse());
            merge_local(c, 2 * w, &exchange);
            w *= 2;
        }
    });
    let mut w = local;
    while w < n {
        // b[0] ++ reverse(b[1]) for every segment of 2w.
        reverse_tops(xs, 2 * w);
        let mut len = 2 * w;
        while len > local {
            on_halves(xs, len, &exchange);
            len /= 2;
        }
        xs.par_chunks_mut(local).for_each(|c| merge_local(c, local, &exchange));
        w *= 2;
    }
}

/// Sorts `keys` (length 0 or a power of two) by Batcher's bitonic sort.
///
/// Errors: [`Error::Invalid`] for a length that is not a power of two.
///
/// ```
/// use prefix_ops::segmented::{apps::bitonic_sort, Order};
/// let mut k = vec![3.5f32, -1.0, 2.0, 0.0];
/// bitonic_sort(&mut k, Order::Ascending)?;
/// assert_eq!(k, [-1.0, 0.0, 2.0, 3.5]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn bitonic_sort<K: SortKey>(keys: &mut [K], order: Order) -> Result<()> {
    check_pow2(keys.len(), "keys")?;
    let flip = order.flip::<K::Bits>();
    let rank = move |k: K| k.to_bits_ordered().xor(flip);
    schedule(keys, |lo, hi| {
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            if rank(*b) < rank(*a) {
                std::mem::swap(a, b);
            }
        }
    });
    Ok(())
}

/// Sorts `keys` (length 0 or a power of two) by Batcher's bitonic sort, moving `values` with
/// them. Not stable: equal keys may exchange their values.
///
/// Errors: [`Error::Invalid`] for a length that is not a power of two;
/// [`Error::LengthMismatch`] when `values.len() != keys.len()`.
pub fn bitonic_sort_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    order: Order,
) -> Result<()> {
    check_pow2(keys.len(), "keys")?;
    if values.len() != keys.len() {
        return Err(Error::LengthMismatch { what: "values", got: values.len(), expected: keys.len() });
    }
    let flip = order.flip::<K::Bits>();
    let mut pairs: Vec<(K, V)> = keys.iter().copied().zip(values.iter().copied()).collect();
    schedule(&mut pairs, |lo, hi| {
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            if b.0.to_bits_ordered().xor(flip) < a.0.to_bits_ordered().xor(flip) {
                std::mem::swap(a, b);
            }
        }
    });
    for ((k, v), (pk, pv)) in keys.iter_mut().zip(values.iter_mut()).zip(pairs) {
        *k = pk;
        *v = pv;
    }
    Ok(())
}
