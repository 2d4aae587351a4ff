//! CuNesl's flattened quicksort on the GPU: the CPU loop of
//! [`apps::quicksort`](crate::segmented::apps::quicksort) with every round on the device.
//!
//! A kernel-level round is a fixed sequence of launches over the whole array: the segments'
//! minima and maxima (two segmented reductions), the pivots, the classes and the stable 3-way
//! split (count, bases, scatter into a second buffer that becomes the keys), then the next
//! round's descriptor (heads of the live parts and of runs of done parts, their scan, their
//! compaction). The only read-back per round is two scalars: the number of segments and of
//! segments still unsorted. Once there are [`GpuThresholds::quicksort_switch`] segments the
//! rounds stop and a block-level segmented sort finishes (prefix-ops' GPU sort, one block per
//! segment up to its block limit): CuNesl's switch from kernel-level to block-level work. Its
//! one read-back is the descriptor's offsets, never the keys.
//!
//! Pivots, splits and merges are those of the CPU loop, so both run the same number of rounds.

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar, PushKernelArg};

use super::launch::{self, GpuCounters, Typed, counters, launch, ops_fn, read_back, typed_fn};
use super::reorder::{classify3, split_classes};
use super::sort::sort_device_segments;
use super::{DeviceSegments, GpuOp, GpuThresholds, choose, reduce_device, scan_device, thresholds};
use crate::error::{Error, Result};
use crate::scan::{Add, BuiltinOp, Max, Min};
use crate::segmented::Order;
use crate::segmented::apps::Midpoint;

/// The most launches one kernel-level round makes: two reductions of at most 2 launches, the
/// pivots, the classes, 3 for the split, the heads, a scan of at most 3, the compaction.
pub const MAX_LAUNCHES_PER_ROUND: u64 = 14;

/// What a device quicksort did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuQuicksortReport {
    /// Kernel-level rounds.
    pub rounds: usize,
    /// The number of segments when the rounds handed over to the block-level sort (`None`
    /// when the rounds finished).
    pub switched_at: Option<usize>,
    /// Launches and read-backs of the whole sort, the block-level sort's own launches excepted
    /// (its offsets read-back is counted).
    pub counters: GpuCounters,
}

/// Sorts the device keys ascending by the flattened quicksort with the selector's thresholds
/// for this device (the switch point among them).
///
/// Errors: [`Error::Invalid`] when a float key is NaN (checked on the device: one scalar
/// read-back); GPU failures.
pub fn quicksort_device<T: Midpoint + GpuScalar>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<T>,
) -> Result<GpuQuicksortReport>
where
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let t = thresholds::<T>(gpu, GpuOp::Quicksort, keys.len(), 1);
    quicksort_device_with(gpu, keys, &t)
}

/// [`quicksort_device`] under explicit thresholds; `quicksort_switch = usize::MAX` never
/// hands over.
pub fn quicksort_device_with<T: Midpoint + GpuScalar>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<T>,
    t: &GpuThresholds,
) -> Result<GpuQuicksortReport>
where
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let start = counters();
    let n = keys.len();
    let mut report = GpuQuicksortReport::default();
    if n <= 1 {
        return Ok(report);
    }
    if matches!(T::SUFFIX, "f32" | "f64") && count_unordered(gpu, keys)? > 0 {
        return Err(Error::Invalid("quicksort: NaN keys have no order".into()));
    }
    let mut segs = DeviceSegments::from_device_offsets(1, n, gpu.upload(&[0u64, n as u64])?);
    let mut active = gpu.upload(&[1u32])?;
    loop {
        if segs.nseg >= t.quicksort_switch {
            report.switched_at = Some(segs.nseg);
            sort_device_segments(gpu, keys, &segs, Order::Ascending)?;
            break;
        }
        let (next, next_active, live) = round(gpu, keys, &segs, &active, t)?;
        report.rounds += 1;
        // Every active segment shrinks every round, so n rounds always suffice.
        if report.rounds > n {
            return Err(Error::Invalid(format!("quicksort: no end after {n} rounds (a device fault?)")));
        }
        (segs, active) = (next, next_active);
        if live == 0 {
            break;
        }
    }
    report.counters = counters().since(&start);
    Ok(report)
}

/// One kernel-level round; returns the next descriptor, its activity flags and the number of
/// active segments.
fn round<T: Midpoint + GpuScalar>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    active: &DeviceBuffer<u32>,
    t: &GpuThresholds,
) -> Result<(DeviceSegments, DeviceBuffer<u32>, u64)>
where
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let gran = choose(segs.len, segs.nseg, gpu.props().sm_count, t);
    let mins = reduce_device(gpu, keys, segs, Min, Some(gran))?;
    let maxs = reduce_device(gpu, keys, segs, Max, Some(gran))?;
    let nseg = segs.nseg as u64;
    let mut pivots = gpu.zeros::<T>(segs.nseg)?;
    let func = typed_fn::<T>(gpu, Typed::Ops, "qs_pivots")?;
    // SAFETY: qs_pivots(mins, maxs, active, nseg, pivots), all of nseg.
    unsafe {
        launch(gpu, &func, launch::cover(gpu, segs.nseg), |a| {
            a.arg(&mins).arg(&maxs).arg(active).arg(&nseg).arg(&mut pivots);
        })
    }?;
    let cls = classify3(gpu, keys, segs, &pivots)?;
    let parts = split_classes(gpu, keys, &cls, segs, 3, gran)?;
    next_descriptor(gpu, &parts, active)
}

/// The next round's descriptor from the 3-way parts: empty parts dropped, runs of done parts
/// merged into one done segment (as the CPU loop does), live parts kept.
fn next_descriptor(
    gpu: &Gpu,
    parts: &DeviceSegments,
    active: &DeviceBuffer<u32>,
) -> Result<(DeviceSegments, DeviceBuffer<u32>, u64)> {
    let nparts = parts.nseg;
    let np = nparts as u64;
    let poff =
        parts.offsets.as_ref().ok_or_else(|| Error::Invalid("quicksort: parts need offsets".into()))?;
    let mut pos = gpu.zeros::<u64>(nparts + 1)?;
    let heads = ops_fn(gpu, "qs_heads")?;
    // SAFETY: qs_heads(poff, nparts, active, head): poff of nparts + 1, active of nparts / 3,
    // head of nparts + 1.
    unsafe {
        launch(gpu, &heads, launch::cover(gpu, nparts), |a| {
            a.arg(poff).arg(&np).arg(active).arg(&mut pos);
        })
    }?;
    scan_device(gpu, &mut pos, &DeviceSegments::regular_raw(1, np + 1), Add, true, None)?;
    let mut new_off = gpu.zeros::<u64>(nparts + 1)?;
    let mut new_active = gpu.zeros::<u32>(nparts)?;
    let mut summary = gpu.zeros::<u64>(2)?;
    let next = ops_fn(gpu, "qs_next")?;
    // SAFETY: qs_next(poff, nparts, active, pos, new_off, new_active, summary): pos of
    // nparts + 1 (the heads' exclusive scan), new_off of nparts + 1, new_active of nparts,
    // summary of 2.
    unsafe {
        launch(gpu, &next, launch::cover(gpu, nparts), |a| {
            a.arg(poff)
                .arg(&np)
                .arg(active)
                .arg(&pos)
                .arg(&mut new_off)
                .arg(&mut new_active)
                .arg(&mut summary);
        })
    }?;
    let s = read_back(gpu, &summary, 0..2)?;
    Ok((DeviceSegments::from_device_offsets(s[0] as usize, parts.len, new_off), new_active, s[1]))
}

/// How many keys compare unequal to themselves (NaN).
fn count_unordered<T: GpuScalar>(gpu: &Gpu, keys: &DeviceBuffer<T>) -> Result<u64> {
    let mut count = gpu.zeros::<u64>(1)?;
    let func = typed_fn::<T>(gpu, Typed::Ops, "seg_count_unordered")?;
    let n = keys.len() as u64;
    // SAFETY: seg_count_unordered(x, n, count): x of n, count of 1.
    unsafe {
        launch(gpu, &func, launch::cover(gpu, keys.len()), |a| {
            a.arg(keys).arg(&n).arg(&mut count);
        })
    }?;
    Ok(read_back(gpu, &count, 0..1)?[0])
}

/// Host convenience: checks for NaN on the host, uploads, sorts on the device, downloads.
///
/// Errors: [`Error::Invalid`] for NaN keys; GPU failures.
///
/// ```no_run
/// use prefix_ops::segmented::gpu;
/// let dev = cuda_kernels::Gpu::new(0)?;
/// let mut keys = vec![5, 3, 8, 1, 9, 2, 7];
/// gpu::quicksort(&dev, &mut keys)?;
/// assert_eq!(keys, [1, 2, 3, 5, 7, 8, 9]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn quicksort<T: Midpoint + GpuScalar>(gpu: &Gpu, keys: &mut [T]) -> Result<GpuQuicksortReport>
where
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    if keys.iter().any(Midpoint::is_unordered) {
        return Err(Error::Invalid("quicksort: NaN keys have no order".into()));
    }
    if keys.len() <= 1 {
        return Ok(GpuQuicksortReport::default());
    }
    let mut d = gpu.upload(keys)?;
    let report = quicksort_device(gpu, &mut d)?;
    keys.copy_from_slice(&gpu.download(&d)?);
    Ok(report)
}
