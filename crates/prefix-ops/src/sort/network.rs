//! Bitonic sorting networks on the CPU, in the comb (flip) form the GPU kernels use.
//!
//! Stage `s` of `n = log2 N` sorts blocks of `2^s` keys: a flip step compares key `i` with its
//! mirror `i ^ (2^s - 1)` in the block, then half-cleaners compare `i` with `i ^ j` for
//! `j = 2^(s-2), ..., 1`. Every comparator sends the minimum to the lower index, so a layer is
//! a pair of `min`/`max` over two runs of the array: branch-free, and the compiler vectorises
//! the runs of length >= 4 (for a flip the second run is read backwards).
//!
//! [`sort_bits`] sorts keys only; [`sort_tagged`] sorts `(key, tag)` pairs lexicographically,
//! which with distinct tags is a strict order: that is how key-value rows sort stably.

use super::key::SortBits;

/// Sorts `a` ascending with the comb network.
///
/// # Panics
/// When `a.len()` is neither 0 nor a power of two: the network is defined for `2^k` keys only
/// (pad shorter rows with [`SortBits::MAX`]).
#[inline]
pub fn sort_bits<U: SortBits>(a: &mut [U]) {
    comb_network(a, |x, y| {
        let (mn, mx) = ((*x).min(*y), (*x).max(*y));
        *x = mn;
        *y = mx;
    });
}

/// Sorts `(key, tag)` pairs ascending by key, then tag, with the comb network.
///
/// # Panics
/// When `a.len()` is neither 0 nor a power of two.
#[inline]
pub fn sort_tagged<U: SortBits>(a: &mut [(U, u32)]) {
    comb_network(a, cas_pair);
}

/// The comb network's traversal: every comparator calls `cas(lower, upper)`, which must leave
/// the smaller element in `lower`. Flip steps pair `i` with its mirror in the block, half-cleaners
/// `i` with `i + j`.
#[inline(always)]
fn comb_network<E>(a: &mut [E], cas: impl Fn(&mut E, &mut E)) {
    // A wrong length would leave keys unsorted without a sign: refuse it.
    assert!(a.len() <= 1 || a.len().is_power_of_two(), "the comb network sorts 2^k keys, not {}", a.len());
    let n = a.len();
    let mut size = 2;
    while size <= n {
        let half = size / 2;
        for blk in a.chunks_exact_mut(size) {
            let (lo, hi) = blk.split_at_mut(half);
            for (x, y) in lo.iter_mut().zip(hi.iter_mut().rev()) {
                cas(x, y);
            }
        }
        let mut j = size / 4;
        while j >= 1 {
            for blk in a.chunks_exact_mut(2 * j) {
                let (lo, hi) = blk.split_at_mut(j);
                for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
                    cas(x, y);
                }
            }
            j /= 2;
        }
        size *= 2;
    }
}

#[inline(always)]
fn cas_pair<U: SortBits>(x: &mut (U, u32), y: &mut (U, u32)) {
    let swap = *x > *y;
    let (a, b) = (*x, *y);
    *x = if swap { b } else { a };
    *y = if swap { a } else { b };
}

/// The comparator layers of the comb network on `2^log_n` keys, as `(lower, upper)` index
/// pairs: the network [`sort_bits`] runs, written out for tests and for teaching.
///
/// # Panics
/// When `log_n > 24` (the listing alone would take gigabytes).
pub fn comb_layers(log_n: u32) -> Vec<Vec<(usize, usize)>> {
    assert!(log_n <= 24, "comb_layers lists networks of up to 2^24 keys, not 2^{log_n}");
    let n = 1usize << log_n;
    let mut layers = Vec::new();
    for s in 1..=log_n {
        let flip = (1usize << s) - 1;
        layers.push((0..n).filter(|&i| i & (1 << (s - 1)) == 0).map(|i| (i, i ^ flip)).collect());
        for h in (0..s.saturating_sub(1)).rev() {
            let j = 1usize << h;
            layers.push((0..n).filter(|&i| i & j == 0).map(|i| (i, i ^ j)).collect());
        }
    }
    layers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_have_n_half_comparators_and_the_right_count() {
        for log_n in 1..=6u32 {
            let layers = comb_layers(log_n);
            assert_eq!(layers.len() as u32, log_n * (log_n + 1) / 2);
            for l in &layers {
                assert_eq!(l.len(), 1 << (log_n - 1));
            }
        }
    }

    #[test]
    fn network_sorts_small_arrays() {
        let mut a = [5u32, 1, 4, 1, 5, 9, 2, 6];
        sort_bits(&mut a);
        assert_eq!(a, [1, 1, 2, 4, 5, 5, 6, 9]);
        let mut t = [(3u64, 0u32), (1, 1), (3, 2), (1, 3)];
        sort_tagged(&mut t);
        assert_eq!(t, [(1, 1), (1, 3), (3, 0), (3, 2)]);
    }
}
