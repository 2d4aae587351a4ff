//! Segmented primitives: one catalogue of operations on arrays cut into segments, each
//! segment handled on its own, described by one [`Segments`] descriptor.
//!
//! This is the flattened form of nested data parallelism (NESL, CuNesl, HiDP): a nested
//! sequence `[[2, 3], [8, 3, 9], [7]]` is the flat array `[2, 3, 8, 3, 9, 7]` with segments
//! of lengths 2, 3, 1, and a nested `{sum(a) : a in ...}` is one segmented [`reduce`].
//!
//! | call | does, per segment |
//! |---|---|
//! | [`reduce`] | one value (the operator's identity for an empty segment) |
//! | [`inclusive_scan`], [`exclusive_scan`] | a scan restarting at every segment, in place |
//! | [`reverse`] | reverses it in place |
//! | [`sort`], [`sort_by_key`] | sorts it (with values, stable) |
//! | [`partition`] | stable split by a predicate into 2 segments |
//! | [`split3`] | stable split into `< pivot`, `== pivot`, `> pivot`: 3 segments |
//! | [`compact`] | keeps flagged elements, segment structure kept |
//!
//! Lengths that disagree (the data against the descriptor, pivots against the segments, flags
//! against the data) are errors ([`Error::LengthMismatch`]); a rejected call leaves the data
//! as it was. The operators ([`Add`], [`Mul`], [`Min`], [`Max`], any [`Monoid`]) and the
//! sort's [`Order`] are re-exported here.
//!
//! ```
//! use prefix_ops::segmented::{self, Add, Max, Segments};
//! let xs = [2, 3, 8, 3, 9, 7];
//! let segs = Segments::from_lengths(&[2, 3, 0, 1])?;
//! assert_eq!(segmented::reduce(&xs, &segs, Add)?, [5, 20, 0, 7]);
//! assert_eq!(segmented::reduce(&xs, &segs, Max)?, [3, 9, i32::MIN, 7]);
//!
//! let mut ys = xs;
//! let parts = segmented::partition(&mut ys, &segs, |&x| x % 2 == 1)?;
//! assert_eq!(ys, [3, 2, 3, 9, 8, 7]);
//! assert_eq!(parts.lengths(), [1, 1, 2, 1, 0, 0, 1, 0]);
//! # Ok::<(), prefix_ops::Error>(())
//! ```
//!
//! **Paths.** On the CPU, short segments are whole tasks (groups of consecutive segments of
//! about [`SegmentedTuning::task_elems`] elements, found by binary search, so one huge segment
//! and millions of tiny ones balance alike), a segment at least `reduce_split` or
//! `reorder_split` long is worked on by all threads, and `regular` segments skip offsets
//! altogether. Those thresholds are the selector's parameters ([`SegmentedTuning`]), tuned per
//! machine through `hetero_sched::tune`. The scans and sorts are prefix-ops' own segmented
//! scans and sorts ([`crate::scan`], [`crate::sort`]) behind this descriptor.
//!
//! **GPU** ([`gpu`]): the same catalogue on a CUDA device at six granularities (a thread, 4 or
//! 8 lanes, a warp, a block or several blocks per segment) chosen by per-device thresholds
//! ([`gpu::GpuThresholds`]), a descriptor that stays on the device, and the quicksort with its
//! rounds on the device.
//!
//! **Applications** ([`apps`]): the recursion-free quicksort (CuNesl), Batcher's bitonic sort
//! in its NESL form, and CSR sparse matrix-vector products as segmented reductions.

pub mod apps;
mod classify;
mod descriptor;
pub mod gpu;
pub(crate) mod plan;
mod reduce;
mod reverse;
mod scan;
#[cfg(target_arch = "x86_64")]
mod scan_avx512;
mod tuning;

pub use crate::scan::{Add, Max, Min, Monoid, Mul};
pub use crate::sort::{Order, SortKey};
use descriptor::Form;
pub use descriptor::Segments;
pub use tuning::{KERNEL as TUNING_KERNEL, SegmentedTuning};

use crate::error::{Error, Result};
use hetero_sched::tune::dispatch::Tunable;

/// One value per segment: `xs[a] ⊕ … ⊕ xs[b - 1]` for segment `a..b`, the identity of `op`
/// for an empty segment.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; [`Error::Alloc`] when the
/// result cannot be allocated.
pub fn reduce<T: Copy + Send + Sync, M: Monoid<T>>(xs: &[T], segs: &Segments, op: M) -> Result<Vec<T>> {
    reduce_with(xs, segs, op, &SegmentedTuning::tuned::<T>(xs.len()))
}

/// [`reduce`] under explicit selector parameters instead of the tuned or default ones.
pub fn reduce_with<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &[T],
    segs: &Segments,
    op: M,
    tuning: &SegmentedTuning,
) -> Result<Vec<T>> {
    segs.check_len("xs", xs.len())?;
    let _span = tracing::debug_span!("segmented::reduce", n = xs.len(), nseg = segs.num_segments()).entered();
    reduce::reduce(xs, segs, op, tuning)
}

/// In-place inclusive scan of every segment: `xs[i] <- xs[a] ⊕ … ⊕ xs[i]` for `i` in segment
/// `a..b`.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`.
pub fn inclusive_scan<T: Copy + Send + Sync + 'static, M: Monoid<T> + 'static>(
    xs: &mut [T],
    segs: &Segments,
    op: M,
) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    let _span = tracing::debug_span!("segmented::inclusive_scan", n = xs.len()).entered();
    scan::scan(xs, segs, op, false)
}

/// In-place exclusive scan of every segment: each segment starts from the identity.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`.
pub fn exclusive_scan<T: Copy + Send + Sync + 'static, M: Monoid<T> + 'static>(
    xs: &mut [T],
    segs: &Segments,
    op: M,
) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    let _span = tracing::debug_span!("segmented::exclusive_scan", n = xs.len()).entered();
    scan::scan(xs, segs, op, true)
}

/// Reverses every segment in place.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`.
pub fn reverse<T: Send>(xs: &mut [T], segs: &Segments) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    reverse::reverse(xs, segs, &SegmentedTuning::tuned::<T>(xs.len()));
    Ok(())
}

/// Sorts every segment of keys (the total order of [`crate::sort`]: floats by IEEE total
/// order, NaNs last ascending).
///
/// Errors: [`Error::LengthMismatch`] when `keys.len() != segs.len()`.
pub fn sort<K: SortKey>(keys: &mut [K], segs: &Segments, order: Order) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    match segs.form() {
        Form::Regular(seg_len) => crate::sort::rows(keys, seg_len, order),
        Form::Offsets(offsets) => crate::sort::segments(keys, offsets, order),
    }
}

/// Sorts every segment of keys and moves `values` with them; stable (equal keys keep their
/// values in input order).
///
/// Errors: [`Error::LengthMismatch`] when `keys.len() != segs.len()` or
/// `values.len() != keys.len()`.
pub fn sort_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    segs: &Segments,
    order: Order,
) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    segs.check_len("values", values.len())?;
    match segs.form() {
        Form::Regular(seg_len) => crate::sort::rows_by_key(keys, values, seg_len, order),
        Form::Offsets(offsets) => crate::sort::segments_by_key(keys, values, offsets, order),
    }
}

/// Stable partition of every segment: the elements satisfying `pred` first, in their order,
/// then the rest, in theirs. Returns `2 * nseg` segments: `2i` is the part of input segment
/// `i` satisfying `pred`, `2i + 1` the rest (either may be empty). `pred` runs once per
/// element; if it panics, the panic propagates and the segments' contents are unspecified.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; [`Error::Alloc`] when
/// scratch space cannot be allocated.
pub fn partition<T: Copy + Send + Sync>(
    xs: &mut [T],
    segs: &Segments,
    pred: impl Fn(&T) -> bool + Sync,
) -> Result<Segments> {
    partition_with(xs, segs, pred, &SegmentedTuning::tuned::<T>(xs.len()))
}

/// [`partition`] under explicit selector parameters (`task_elems`, `reorder_split`) instead of
/// the tuned or default ones: what the crossover bench and the tuner measure.
pub fn partition_with<T: Copy + Send + Sync>(
    xs: &mut [T],
    segs: &Segments,
    pred: impl Fn(&T) -> bool + Sync,
    tuning: &SegmentedTuning,
) -> Result<Segments> {
    segs.check_len("xs", xs.len())?;
    let _span = tracing::debug_span!("segmented::partition", n = xs.len()).entered();
    classify::split_k::<T, 2>(xs, segs, |_, x| usize::from(!pred(x)), tuning)
}

/// Stable three-way split of every segment `i` around `pivots[i]`: the elements `<`, then
/// `==`, then `>` the pivot, each part in input order. Returns `3 * nseg` segments in that
/// order (any may be empty). Elements that compare neither way with the pivot (NaN) go to
/// the third part.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()` or
/// `pivots.len() != segs.num_segments()`.
pub fn split3<T: PartialOrd + Copy + Send + Sync>(
    xs: &mut [T],
    segs: &Segments,
    pivots: &[T],
) -> Result<Segments> {
    segs.check_len("xs", xs.len())?;
    if pivots.len() != segs.num_segments() {
        return Err(Error::LengthMismatch {
            what: "pivots",
            got: pivots.len(),
            expected: segs.num_segments(),
        });
    }
    let _span = tracing::debug_span!("segmented::split3", n = xs.len()).entered();
    let t = SegmentedTuning::tuned::<T>(xs.len());
    classify::split_k::<T, 3>(
        xs,
        segs,
        |s, x| {
            let p = &pivots[s];
            if x < p {
                0
            } else if x == p {
                1
            } else {
                2
            }
        },
        &t,
    )
}

/// The elements with `keep[i]`, in order, and the segments they form: segment `i` of the
/// result holds what was kept of input segment `i` (possibly nothing).
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()` or `keep.len() != xs.len()`;
/// [`Error::Alloc`] when the result cannot be allocated.
pub fn compact<T: Copy + Send + Sync>(
    xs: &[T],
    keep: &[bool],
    segs: &Segments,
) -> Result<(Vec<T>, Segments)> {
    segs.check_len("xs", xs.len())?;
    if keep.len() != xs.len() {
        return Err(Error::LengthMismatch { what: "keep", got: keep.len(), expected: xs.len() });
    }
    let _span = tracing::debug_span!("segmented::compact", n = xs.len()).entered();
    classify::compact(xs, keep, segs, &SegmentedTuning::tuned::<T>(xs.len()))
}
