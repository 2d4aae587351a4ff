//! CuNesl's recursion-free quicksort (thesis Fig. 5.5): the recursion `qsort(less) ++ equal ++
//! qsort(greater)` becomes a loop over a segmented array. Each round computes every segment's
//! minimum and maximum (two segmented reductions), takes the pivot `(min + max) / 2`, splits
//! every segment three ways around it ([`split3`](crate::segmented::split3)) and marks the
//! `equal` parts, and parts of at most one element, done.
//!
//! Termination: for an active segment `min < max`, so `min <= pivot < max` (integers round
//! down; floats are clamped into `[min, max]`). If the pivot equals `min` the `equal` part is
//! non-empty and done; otherwise `less` holds `min` and `greater` holds `max`. Either way every
//! active child is strictly shorter than its parent, and a segment whose elements are all equal
//! becomes one `equal` part. Once there are [`SegmentedTuning::quicksort_switch`] segments the
//! loop hands over to a segmented sort (HiDP switches at 64; CuNesl instead moves to one thread
//! block per segment at 256).

use super::super::{Max, Min, Monoid, Order, SegmentedTuning, Segments, SortKey, reduce_with, sort, split3};
use crate::error::{Error, Result};
use hetero_sched::tune::dispatch::Tunable;

/// Keys the quicksort can take a pivot of: the midpoint of a segment's minimum and maximum.
pub trait Midpoint: SortKey + PartialOrd {
    /// A value in `[lo, hi]` that halves the range (for `lo <= hi`).
    fn midpoint(lo: Self, hi: Self) -> Self;
    /// True for values that compare with nothing (float NaN), which the quicksort rejects.
    fn is_unordered(&self) -> bool {
        false
    }
}

macro_rules! int_mid {
    ($($t:ty),*) => {$(
        impl Midpoint for $t {
            #[inline]
            fn midpoint(lo: $t, hi: $t) -> $t {
                // Floor of the exact midpoint, in a type wide enough not to overflow.
                (i128::from(lo) + i128::from(hi)).div_euclid(2) as $t
            }
        }
    )*};
}
int_mid!(i32, u32, i64, u64);

macro_rules! float_mid {
    ($($t:ty),*) => {$(
        impl Midpoint for $t {
            #[inline]
            fn midpoint(lo: $t, hi: $t) -> $t {
                // Halve first so that finite extremes cannot overflow; -inf and +inf meet at 0.
                let m = lo * 0.5 + hi * 0.5;
                if m.is_nan() { 0.0 } else { m.clamp(lo, hi) }
            }
            fn is_unordered(&self) -> bool {
                self.is_nan()
            }
        }
    )*};
}
float_mid!(f32, f64);

/// What a quicksort run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QuicksortReport {
    /// Split rounds run over the whole array.
    pub rounds: usize,
    /// The number of segments when the loop handed over to the segmented sort (`None` when the
    /// rounds finished the sort themselves).
    pub switched_at: Option<usize>,
}

/// Sorts `keys` ascending by the flattened quicksort, with the tuned or default switch point.
///
/// Errors: [`Error::Invalid`] when a float key is NaN (it has no place between a minimum and
/// a maximum); [`Error::Alloc`] when scratch space cannot be allocated.
///
/// ```
/// use prefix_ops::segmented::apps::quicksort;
/// let mut keys = vec![5, 3, 8, 1, 9, 2, 7];
/// quicksort(&mut keys)?;
/// assert_eq!(keys, [1, 2, 3, 5, 7, 8, 9]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn quicksort<T: Midpoint>(keys: &mut [T]) -> Result<QuicksortReport>
where
    Min: Monoid<T>,
    Max: Monoid<T>,
{
    quicksort_with(keys, &SegmentedTuning::tuned::<T>(keys.len()))
}

/// [`quicksort`] under explicit parameters; `quicksort_switch = usize::MAX` never hands over.
pub fn quicksort_with<T: Midpoint>(keys: &mut [T], tuning: &SegmentedTuning) -> Result<QuicksortReport>
where
    Min: Monoid<T>,
    Max: Monoid<T>,
{
    if keys.iter().any(Midpoint::is_unordered) {
        return Err(Error::Invalid("quicksort: NaN keys have no order".into()));
    }
    let mut report = QuicksortReport::default();
    let mut segs = Segments::from_lengths(&[keys.len()])?;
    let mut active = vec![keys.len() > 1];
    while active.iter().any(|&a| a) {
        if segs.num_segments() >= tuning.quicksort_switch {
            report.switched_at = Some(segs.num_segments());
            sort(keys, &segs, Order::Ascending)?;
            break;
        }
        let mins = reduce_with(keys, &segs, Min, tuning)?;
        let maxs = reduce_with(keys, &segs, Max, tuning)?;
        // A done segment is sorted: splitting it around its minimum keeps it as it is.
        let pivots: Vec<T> = (0..segs.num_segments())
            .map(|s| if active[s] { T::midpoint(mins[s], maxs[s]) } else { mins[s] })
            .collect();
        let parts = split3(keys, &segs, &pivots)?;
        (segs, active) = next_round(&parts, &active)?;
        report.rounds += 1;
    }
    Ok(report)
}

/// The descriptor of the next round: empty parts dropped, runs of done parts merged into one
/// done segment (so the switch point counts live work), and which segments are still active.
fn next_round(parts: &Segments, active: &[bool]) -> Result<(Segments, Vec<bool>)> {
    let mut lengths = Vec::with_capacity(parts.num_segments());
    let mut next_active: Vec<bool> = Vec::with_capacity(parts.num_segments());
    for (p, len) in parts.lengths().into_iter().enumerate() {
        if len == 0 {
            continue;
        }
        let live = active[p / 3] && p % 3 != 1 && len > 1;
        match (lengths.last_mut(), next_active.last()) {
            (Some(l), Some(false)) if !live => *l += len,
            _ => {
                lengths.push(len);
                next_active.push(live);
            }
        }
    }
    Ok((Segments::from_lengths(&lengths)?, next_active))
}
