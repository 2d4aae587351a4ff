//! Sorting: bitonic merge comb sort (BMCS) for batches of rows and segments, on CPU and GPU.
//!
//! The entry points read like the operation they perform:
//!
//! | call | sorts |
//! |---|---|
//! | [`rows`]`(&mut keys, row_len, order)` | every row of `row_len` consecutive keys |
//! | [`segments`]`(&mut keys, &offsets, order)` | every segment `keys[offsets[i]..offsets[i+1]]` |
//! | [`whole`]`(&mut keys, order)` | the whole slice |
//! | [`rows_by_key`], [`segments_by_key`], [`whole_by_key`] | the same, moving `values` with their keys |
//! | [`rows_2d`], [`rows_by_key_2d`] | the rows of 2-D `ndarray` arrays (rows along the last axis, any layout) |
//!
//! Rows and offsets follow the crate's one convention ([`crate::segments`]): offsets are
//! `usize`, start at 0, never decrease and end at `keys.len()`, on the CPU and the GPU.
//!
//! Keys are `u32`, `i32`, `f32`, `u64`, `i64`, `f64` ([`SortKey`]). Floats follow a total order:
//! `-inf < ... < -0.0 < +0.0 < ... < +inf < NaN`, NaNs last; [`Order::Descending`] is the exact
//! reverse (NaNs first). Every key-value sort is **stable**: keys compare as `(key, position)`,
//! so equal keys keep their values in input order. (For keys alone stability is invisible: the
//! order is total on bit patterns, so equal keys are identical.)
//!
//! On the CPU, short rows go through a branch-free bitonic network ([`network`], in AVX2
//! registers where available); longer rows of 32-bit keys on AVX2 CPUs through the comb network
//! on one row in registers (up to 256 keys; in AVX-512 registers where the CPU has them, from
//! [`WIDE_NET_MIN`] keys) or a vectorised quicksort down to it (up to [`QUICK_MAX_LEN`]; sixteen
//! keys a step with AVX-512; `HETKIT_SORT_ISA=avx2` or `scalar` caps the instruction set); other medium rows through `sort_unstable`, longer ones through a
//! one-thread LSD radix sort each; whole arrays through one parallel MSD scatter into
//! cache-sized buckets, each then sorted on one thread. [`plan_cpu`] is the dispatcher. The GPU versions live in [`gpu`]; [`emulate`] is a CPU model
//! of the GPU kernel's schedule.
//!
//! ```
//! use prefix_ops::sort::{self, Order};
//! let mut keys = vec![3.0f32, f32::NAN, -0.0, 0.0, /* row 2 */ 2.0, 1.0, -5.0, 1.0];
//! sort::rows(&mut keys, 4, Order::Ascending)?;
//! assert_eq!(&keys[4..], &[-5.0, 1.0, 1.0, 2.0]);
//! assert!(keys[0].to_bits() == (-0.0f32).to_bits() && keys[1].to_bits() == 0.0f32.to_bits());
//! assert!(keys[3].is_nan());
//!
//! let mut k = vec![2u32, 1, 2, 1];
//! let mut v = vec![10u64, 11, 12, 13];
//! sort::segments_by_key(&mut k, &mut v, &[0, 4], Order::Descending)?;
//! assert_eq!((k, v), (vec![2, 2, 1, 1], vec![10, 12, 11, 13]));
//! # Ok::<(), prefix_ops::Error>(())
//! ```

mod avx512;
mod cpu;
pub mod emulate;
pub mod gpu;
pub(crate) mod isa;
mod key;
pub mod network;
mod quick;
mod radix;
mod regnet;
mod simd;
mod tuning;

pub use cpu::{
    COARSE_MAX_LEN, COARSE_MIN_LEN, CpuPlan, HUGE_PAGE_MIN_BYTES, L2_BUCKET_MAX, MSD_COARSE_BITS,
    MSD_DIGIT_BITS, MSD_FINE_BITS, NETWORK_MAX_LEN, PAR_DIGIT_BITS, QUICK_MAX_LEN, RADIX_PAR_MIN,
    RADIX_ROW_MIN, SEQ_DIGIT_BITS, SUB_DIGIT_BITS, WIDE_NET_MIN, plan_cpu, plan_cpu_with,
};
pub use key::{SortBits, SortKey, SortValue};
pub use tuning::{KERNEL as TUNING_KERNEL, SortTuning};

use ndarray::ArrayViewMut2;

use crate::error::{Error, Result};
pub(crate) use crate::segments::{check_offsets, check_rows};
use hetero_sched::tune::dispatch::Tunable;

/// The direction of a sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// Smallest key first (NaNs last).
    #[default]
    Ascending,
    /// Largest key first: the exact reverse of [`Order::Ascending`] (NaNs first).
    Descending,
}

impl Order {
    /// True for [`Order::Descending`].
    pub fn is_descending(self) -> bool {
        self == Order::Descending
    }

    /// The mask keys' ordered bits are xor-ed with so that an ascending sort sorts this way.
    pub(crate) fn flip<U: SortBits>(self) -> U {
        if self.is_descending() { U::MAX } else { U::ZERO }
    }
}

/// Sorts each row of `row_len` consecutive keys.
///
/// Errors: [`Error::InvalidRows`] when `keys.len()` is not a multiple of `row_len` (rows as in
/// [`crate::segments`]).
///
/// ```
/// # use prefix_ops::sort::{self, Order};
/// let mut k = vec![3i64, 1, 2, 9, 8, 7];
/// sort::rows(&mut k, 3, Order::Ascending)?;
/// assert_eq!(k, [1, 2, 3, 7, 8, 9]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn rows<K: SortKey>(keys: &mut [K], row_len: usize, order: Order) -> Result<()> {
    rows_with(keys, row_len, order, &SortTuning::tuned::<K>(row_len))
}

/// [`rows`] with explicit tuning parameters instead of the cached or default ones (what the
/// tuner measures). A `network_max_len` past [`NETWORK_MAX_LEN`] acts as [`NETWORK_MAX_LEN`].
pub fn rows_with<K: SortKey>(
    keys: &mut [K],
    row_len: usize,
    order: Order,
    tuning: &SortTuning,
) -> Result<()> {
    check_rows(keys.len(), row_len)?;
    let _span = tracing::debug_span!("sort::rows", n = keys.len(), row_len).entered();
    cpu::rows(keys, row_len, order, tuning);
    Ok(())
}

/// Sorts each row of `row_len` keys and applies the same permutation to `values`; stable.
///
/// Errors: as [`rows`], and `values.len() != keys.len()`.
pub fn rows_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    row_len: usize,
    order: Order,
) -> Result<()> {
    check_values(keys.len(), values.len())?;
    check_rows(keys.len(), row_len)?;
    let _span = tracing::debug_span!("sort::rows_by_key", n = keys.len(), row_len).entered();
    cpu::rows_by_key(keys, values, row_len, order, &SortTuning::tuned::<K>(row_len));
    Ok(())
}

/// Sorts each row of a 2-D array of keys (rows along the last axis), in place. Any layout: a
/// row-major array is sorted where it lies, any other through a row-major copy. Errors only
/// when that copy cannot be allocated ([`Error::Alloc`]).
///
/// ```
/// use prefix_ops::ndarray::array;
/// use prefix_ops::sort::{self, Order};
/// let mut k = array![[3.0f32, 1.0, 2.0], [9.0, 7.0, 8.0]];
/// sort::rows_2d(k.view_mut(), Order::Ascending)?;
/// assert_eq!(k, array![[1.0, 2.0, 3.0], [7.0, 8.0, 9.0]]);
/// // Any view: here the columns of the transpose, i.e. a column-major layout.
/// let mut t = array![[3, 9], [1, 7], [2, 8]];
/// sort::rows_2d(t.view_mut().reversed_axes(), Order::Descending)?;
/// assert_eq!(t, array![[3, 9], [2, 8], [1, 7]]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn rows_2d<K: SortKey>(keys: ArrayViewMut2<'_, K>, order: Order) -> Result<()> {
    crate::nd::on_rows(keys, |flat, row_len| rows(flat, row_len, order))
}

/// Sorts each row of a 2-D array of keys and applies the same permutation to the same row of
/// `values` (same shape, else [`Error::ShapeMismatch`]); stable. Layouts as [`rows_2d`].
pub fn rows_by_key_2d<K: SortKey, V: Copy + Send + Sync>(
    keys: ArrayViewMut2<'_, K>,
    values: ArrayViewMut2<'_, V>,
    order: Order,
) -> Result<()> {
    crate::nd::on_rows_pair(keys, values, |k, v, row_len| rows_by_key(k, v, row_len, order))
}

/// Sorts each segment `keys[offsets[i]..offsets[i + 1]]`.
///
/// Errors: [`Error::InvalidOffsets`] for offsets that break the convention of
/// [`crate::segments`] (start at 0, never decrease, end at `keys.len()`).
pub fn segments<K: SortKey>(keys: &mut [K], offsets: &[usize], order: Order) -> Result<()> {
    check_offsets(keys.len(), offsets)?;
    let _span = tracing::debug_span!("sort::segments", n = keys.len(), segments = offsets.len()).entered();
    cpu::segments(keys, offsets, order, &SortTuning::tuned::<K>(keys.len()));
    Ok(())
}

/// Sorts each segment of keys, moving `values` along; stable.
///
/// Errors: as [`segments`], and `values.len() != keys.len()`.
pub fn segments_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    offsets: &[usize],
    order: Order,
) -> Result<()> {
    check_values(keys.len(), values.len())?;
    check_offsets(keys.len(), offsets)?;
    let _span = tracing::debug_span!("sort::segments_by_key", n = keys.len()).entered();
    cpu::segments_by_key(keys, values, offsets, order, &SortTuning::tuned::<K>(keys.len()));
    Ok(())
}

/// Sorts the whole slice (rayon's parallel sort for large slices).
pub fn whole<K: SortKey>(keys: &mut [K], order: Order) {
    let _span = tracing::debug_span!("sort::whole", n = keys.len()).entered();
    whole_with(keys, order, &SortTuning::tuned::<K>(keys.len()));
}

/// [`whole`] with explicit tuning parameters instead of the cached or default ones.
pub fn whole_with<K: SortKey>(keys: &mut [K], order: Order, tuning: &SortTuning) {
    cpu::whole(keys, order, tuning);
}

/// Sorts the whole slice of keys, moving `values` along; stable.
///
/// Errors: `values.len() != keys.len()`.
pub fn whole_by_key<K: SortKey, V: Copy + Send + Sync>(
    keys: &mut [K],
    values: &mut [V],
    order: Order,
) -> Result<()> {
    check_values(keys.len(), values.len())?;
    let _span = tracing::debug_span!("sort::whole_by_key", n = keys.len()).entered();
    cpu::whole_by_key(keys, values, order, &SortTuning::tuned::<K>(keys.len()));
    Ok(())
}

pub(crate) fn check_values(keys: usize, values: usize) -> Result<()> {
    if keys != values {
        return Err(Error::LengthMismatch { what: "values", got: values, expected: keys });
    }
    Ok(())
}
