//! Segmented reorderings on the GPU: `reverse` (workers swap mirrored pairs) and the stable
//! k-way splits behind `partition`, `split3` and `compact`.
//!
//! A split takes one class per element (0 .. K) and runs three kernels at the chosen
//! granularity: class counts per segment (or per part of a segment, for several blocks), the
//! write bases of every (segment, part, class) with the new descriptor (a thread per
//! segment), and a scatter in which every chunk ranks its elements per class by ballots, so
//! each class keeps its input order. The scatter writes a second buffer, which then takes the
//! input's place (no copy back).

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar, PushKernelArg};
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::launch::{self, Typed, lanes_suffix, launch, ops_fn, read_back, typed_fn};
use super::{DeviceSegments, GpuOp, Granularity, parts_for, pick, workers};
use crate::error::{Error, Result};
use crate::segmented::Segments;

/// The kernels move 4- or 8-byte elements as raw bits.
fn bytes_suffix<T>() -> Result<&'static str> {
    match size_of::<T>() {
        4 => Ok("b4"),
        8 => Ok("b8"),
        b => Err(Error::Invalid(format!("segmented GPU reorderings take 4- or 8-byte elements, not {b}"))),
    }
}

/// Reverses every segment of `xs` in place on the device, at `gran` or the selector's choice.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn reverse_device<T: GpuScalar>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    gran: Option<Granularity>,
) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    if segs.len == 0 {
        return Ok(());
    }
    let gran = pick::<T>(gpu, GpuOp::Reverse, segs, gran);
    let func = ops_fn(gpu, &format!("seg_reverse_{}", bytes_suffix::<T>()?))?;
    let (w, cfg) = worker_grid(gpu, gran, segs.nseg);
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    let (p, _gx) = xs.device_ptr_mut(gpu.stream());
    // SAFETY: seg_reverse_bN(x, off, seg_len, nseg, W) over the descriptor's elements, with a
    // grid whose thread count is a multiple of W.
    unsafe {
        launch(gpu, &func, cfg, |a| {
            a.arg(&p).arg(&off).arg(&seg_len).arg(&nseg).arg(&w);
        })
    }
}

/// Workers per segment and a grid whose thread count is a multiple of them.
pub(super) fn worker_grid(gpu: &Gpu, gran: Granularity, nseg: usize) -> (u64, cudarc::driver::LaunchConfig) {
    if gran == Granularity::MultiBlock {
        let parts = parts_for(gpu, nseg);
        let cap = u64::from(gpu.props().sm_count.max(1)) * 32;
        let per_pass = (nseg as u64).min((cap / parts).max(1));
        let mut cfg = launch::blocks(gpu, 1);
        cfg.grid_dim.0 = (per_pass * parts) as u32;
        (workers(gran, parts), cfg)
    } else {
        let w = workers(gran, 1);
        (w, launch::cover(gpu, nseg.saturating_mul(w as usize)))
    }
}

/// A device pointer argument that may be absent (0).
fn opt_ptr<'a>(
    gpu: &'a Gpu,
    b: Option<&'a DeviceBuffer<u64>>,
) -> (u64, Option<cudarc::driver::SyncOnDrop<'a>>) {
    match b {
        Some(b) => {
            let (p, g) = b.device_ptr(gpu.stream());
            (p, Some(g))
        }
        None => (0, None),
    }
}

/// Turns the counts of every (segment, part, class) into write bases in place: from the
/// segments' own starts, or from `out_start` (compaction). `new_off` receives the `k * nseg +
/// 1` offsets of the parts.
fn to_bases(
    gpu: &Gpu,
    counts: &mut DeviceBuffer<u64>,
    segs: &DeviceSegments,
    (parts, k): (u64, u32),
    out_start: Option<&DeviceBuffer<u64>>,
    new_off: Option<&mut DeviceBuffer<u64>>,
) -> Result<()> {
    let func = ops_fn(gpu, "seg_split_bases_k")?;
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    let (start, _gs) = opt_ptr(gpu, out_start);
    let (no, _gn) = match new_off {
        Some(b) => {
            let (p, g) = b.device_ptr_mut(gpu.stream());
            (p, Some(g))
        }
        None => (0, None),
    };
    // SAFETY: seg_split_bases_k(counts, off, seg_len, nseg, parts, K, out_start, new_off):
    // counts of nseg * parts * K, out_start of nseg (or 0), new_off of K * nseg + 1 (or 0).
    unsafe {
        launch(gpu, &func, launch::cover(gpu, segs.nseg), |a| {
            a.arg(counts).arg(&off).arg(&seg_len).arg(&nseg).arg(&parts).arg(&k).arg(&start).arg(&no);
        })
    }
}

fn parts_of(gpu: &Gpu, gran: Granularity, nseg: usize) -> u64 {
    if gran == Granularity::MultiBlock { parts_for(gpu, nseg) } else { 1 }
}

/// Class counts of every (segment, part, class).
fn class_counts(
    gpu: &Gpu,
    cls: &DeviceBuffer<u32>,
    segs: &DeviceSegments,
    k: u32,
    gran: Granularity,
    parts: u64,
) -> Result<DeviceBuffer<u64>> {
    let mut counts = gpu.zeros::<u64>(segs.nseg * parts as usize * k as usize)?;
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    if matches!(gran, Granularity::Block | Granularity::MultiBlock) {
        let func = ops_fn(gpu, "seg_count_blocks_k")?;
        let cfg = launch::blocks(gpu, nseg * parts);
        // SAFETY: seg_count_blocks_k(cls, off, seg_len, nseg, parts, K, counts), cls of the
        // descriptor's elements, counts of nseg * parts * K.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(cls).arg(&off).arg(&seg_len).arg(&nseg).arg(&parts).arg(&k).arg(&mut counts);
            })
        }?;
    } else {
        let lanes = workers(gran, 1);
        let func = ops_fn(gpu, &format!("seg_count_{}", lanes_suffix(lanes)))?;
        let cfg = launch::cover(gpu, segs.nseg.saturating_mul(lanes as usize));
        // SAFETY: seg_count_<lanes>(cls, off, seg_len, nseg, K, counts), counts of nseg * K.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(cls).arg(&off).arg(&seg_len).arg(&nseg).arg(&k).arg(&mut counts);
            })
        }?;
    }
    Ok(counts)
}

/// Scatters the classes below `keep` of `xs` into `ys` at the bases.
#[allow(clippy::too_many_arguments)]
fn scatter<T: GpuScalar>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    cls: &DeviceBuffer<u32>,
    segs: &DeviceSegments,
    k: u32,
    keep: u32,
    gran: Granularity,
    (bases, parts): (&DeviceBuffer<u64>, u64),
    ys: &mut DeviceBuffer<T>,
) -> Result<()> {
    let b = bytes_suffix::<T>()?;
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    if matches!(gran, Granularity::Block | Granularity::MultiBlock) {
        let func = ops_fn(gpu, &format!("seg_scatter_blocks_{b}"))?;
        let cfg = launch::blocks(gpu, nseg * parts);
        // SAFETY: seg_scatter_blocks_bN(x, cls, off, seg_len, nseg, parts, K, keep, bases, y):
        // bases of nseg * parts * K from to_bases, y large enough for the kept classes.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(xs)
                    .arg(cls)
                    .arg(&off)
                    .arg(&seg_len)
                    .arg(&nseg)
                    .arg(&parts)
                    .arg(&k)
                    .arg(&keep)
                    .arg(bases)
                    .arg(ys);
            })
        }
    } else {
        let lanes = workers(gran, 1);
        let func = ops_fn(gpu, &format!("seg_scatter_{}_{b}", lanes_suffix(lanes)))?;
        let cfg = launch::cover(gpu, segs.nseg.saturating_mul(lanes as usize));
        // SAFETY: seg_scatter_<lanes>_bN(x, cls, off, seg_len, nseg, K, keep, bases, y) as above
        // with one part per segment.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(xs).arg(cls).arg(&off).arg(&seg_len).arg(&nseg).arg(&k).arg(&keep).arg(bases).arg(ys);
            })
        }
    }
}

/// Splits every segment of `xs` stably by the classes `cls` (0 .. k) and returns the `k *
/// nseg` parts. `xs` is replaced by the rearranged buffer.
pub(super) fn split_classes<T: GpuScalar>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    cls: &DeviceBuffer<u32>,
    segs: &DeviceSegments,
    k: u32,
    gran: Granularity,
) -> Result<DeviceSegments> {
    let mut new_off = gpu.zeros::<u64>(segs.nseg * k as usize + 1)?;
    if segs.len > 0 {
        let parts = parts_of(gpu, gran, segs.nseg);
        let mut bases = class_counts(gpu, cls, segs, k, gran, parts)?;
        to_bases(gpu, &mut bases, segs, (parts, k), None, Some(&mut new_off))?;
        let mut ys = gpu.zeros::<T>(segs.len)?;
        scatter(gpu, xs, cls, segs, k, k, gran, (&bases, parts), &mut ys)?;
        std::mem::swap(xs, &mut ys);
    }
    Ok(DeviceSegments::from_device_offsets(segs.nseg * k as usize, segs.len, new_off))
}

/// Classes from 0/1 flags: flagged elements are class 0.
fn flag_classes(gpu: &Gpu, flags: &DeviceBuffer<u32>) -> Result<DeviceBuffer<u32>> {
    let n = flags.len();
    let mut cls = gpu.zeros::<u32>(n)?;
    if n > 0 {
        let func = ops_fn(gpu, "seg_flags_to_classes")?;
        let n64 = n as u64;
        // SAFETY: seg_flags_to_classes(flags, n, cls), both of n.
        unsafe {
            launch(gpu, &func, launch::cover(gpu, n), |a| {
                a.arg(flags).arg(&n64).arg(&mut cls);
            })
        }?;
    }
    Ok(cls)
}

/// Stable partition of every segment on the device: elements whose `first` flag is non-zero
/// first, then the others, each in input order; returns the `2 * nseg` parts (segment `2i`
/// the flagged part of input segment `i`). `xs` is replaced by the rearranged buffer.
///
/// Errors: [`Error::LengthMismatch`] when `xs` or `first` disagree with `segs`; GPU failures.
pub fn partition_device<T: GpuScalar>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    first: &DeviceBuffer<u32>,
    segs: &DeviceSegments,
    gran: Option<Granularity>,
) -> Result<DeviceSegments> {
    segs.check_len("xs", xs.len())?;
    segs.check_len("first", first.len())?;
    bytes_suffix::<T>()?;
    let gran = pick::<T>(gpu, GpuOp::Split, segs, gran);
    let cls = flag_classes(gpu, first)?;
    split_classes(gpu, xs, &cls, segs, 2, gran)
}

/// The classes of `split3`: below, equal to, or else the segment's pivot.
pub(super) fn classify3<T: GpuScalar>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    segs: &DeviceSegments,
    pivots: &DeviceBuffer<T>,
) -> Result<DeviceBuffer<u32>> {
    let mut cls = gpu.zeros::<u32>(segs.len)?;
    if segs.len > 0 {
        let func = typed_fn::<T>(gpu, Typed::Ops, "seg_classify3")?;
        let (off, _g, seg_len) = segs.view(gpu);
        let (nseg, n) = (segs.nseg as u64, segs.len as u64);
        // SAFETY: seg_classify3(x, off, seg_len, nseg, pivots, n, cls): x and cls of n,
        // pivots of nseg.
        unsafe {
            launch(gpu, &func, launch::cover(gpu, segs.len), |a| {
                a.arg(xs).arg(&off).arg(&seg_len).arg(&nseg).arg(pivots).arg(&n).arg(&mut cls);
            })
        }?;
    }
    Ok(cls)
}

/// Stable three-way split of every segment `i` around `pivots[i]` on the device (`<`, `==`,
/// then the rest, NaN included); returns the `3 * nseg` parts. `xs` is replaced by the
/// rearranged buffer.
///
/// Errors: [`Error::LengthMismatch`] when `xs` or `pivots` disagree with `segs`; GPU failures.
pub fn split3_device<T: GpuScalar + PartialOrd>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    pivots: &DeviceBuffer<T>,
    gran: Option<Granularity>,
) -> Result<DeviceSegments> {
    segs.check_len("xs", xs.len())?;
    if pivots.len() != segs.nseg {
        return Err(Error::LengthMismatch { what: "pivots", got: pivots.len(), expected: segs.nseg });
    }
    bytes_suffix::<T>()?;
    let gran = pick::<T>(gpu, GpuOp::Split, segs, gran);
    let cls = classify3(gpu, xs, segs, pivots)?;
    split_classes(gpu, xs, &cls, segs, 3, gran)
}

/// The elements of `xs` whose `keep` flag is non-zero, in order, and the segments they form
/// (segment `i` what was kept of input segment `i`), on the device.
///
/// Errors: [`Error::LengthMismatch`] when `xs` or `keep` disagree with `segs`; GPU failures.
pub fn compact_device<T: GpuScalar>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    keep: &DeviceBuffer<u32>,
    segs: &DeviceSegments,
    gran: Option<Granularity>,
) -> Result<(DeviceBuffer<T>, DeviceSegments)> {
    segs.check_len("xs", xs.len())?;
    segs.check_len("keep", keep.len())?;
    bytes_suffix::<T>()?;
    let gran = pick::<T>(gpu, GpuOp::Split, segs, gran);
    let nseg = segs.nseg;
    if segs.len == 0 {
        return Ok((
            gpu.zeros::<T>(0)?,
            DeviceSegments::from_device_offsets(nseg, 0, gpu.zeros::<u64>(nseg + 1)?),
        ));
    }
    let cls = flag_classes(gpu, keep)?;
    let parts = parts_of(gpu, gran, nseg);
    let mut counts = class_counts(gpu, &cls, segs, 2, gran, parts)?;
    // Kept per segment and a trailing 0; their exclusive scan is the new offsets.
    let mut new_off = gpu.zeros::<u64>(nseg + 1)?;
    let func = ops_fn(gpu, "seg_class0_totals_k")?;
    let (n64, k) = (nseg as u64, 2u32);
    // SAFETY: seg_class0_totals_k(counts, nseg, parts, K, kept): counts of nseg * parts * K,
    // kept of nseg + 1.
    unsafe {
        launch(gpu, &func, launch::cover(gpu, nseg + 1), |a| {
            a.arg(&counts).arg(&n64).arg(&parts).arg(&k).arg(&mut new_off);
        })
    }?;
    let whole = DeviceSegments::regular_raw(1, (nseg + 1) as u64);
    super::scan_device(gpu, &mut new_off, &whole, crate::scan::Add, true, None)?;
    let total = read_back(gpu, &new_off, nseg..nseg + 1)?[0] as usize;
    let mut ys = gpu.zeros::<T>(total)?;
    if total > 0 {
        to_bases(gpu, &mut counts, segs, (parts, 2), Some(&new_off), None)?;
        scatter(gpu, xs, &cls, segs, 2, 1, gran, (&counts, parts), &mut ys)?;
    }
    Ok((ys, DeviceSegments::from_device_offsets(nseg, total, new_off)))
}

/// Host convenience for [`reverse_device`].
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn reverse<T: GpuScalar>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    gran: Option<Granularity>,
) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    bytes_suffix::<T>()?;
    if xs.is_empty() {
        return Ok(());
    }
    let d = DeviceSegments::upload(gpu, segs)?;
    let mut dx = gpu.upload(xs)?;
    reverse_device(gpu, &mut dx, &d, gran)?;
    xs.copy_from_slice(&gpu.download(&dx)?);
    Ok(())
}

/// Host convenience for [`partition_device`] with the predicate evaluated on the host, once
/// per element: the contract's `partition` on the GPU.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn partition<T: GpuScalar>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    pred: impl Fn(&T) -> bool + Sync,
    gran: Option<Granularity>,
) -> Result<Segments> {
    segs.check_len("xs", xs.len())?;
    bytes_suffix::<T>()?;
    let flags: Vec<u32> = xs.iter().map(|x| u32::from(pred(x))).collect();
    let d = DeviceSegments::upload(gpu, segs)?;
    let mut dx = gpu.upload(xs)?;
    let parts = partition_device(gpu, &mut dx, &gpu.upload(&flags)?, &d, gran)?;
    xs.copy_from_slice(&gpu.download(&dx)?);
    parts.to_host(gpu)
}

/// Host convenience for [`split3_device`].
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()` or
/// `pivots.len() != segs.num_segments()`; GPU failures.
pub fn split3<T: GpuScalar + PartialOrd>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    pivots: &[T],
    gran: Option<Granularity>,
) -> Result<Segments> {
    segs.check_len("xs", xs.len())?;
    if pivots.len() != segs.num_segments() {
        return Err(Error::LengthMismatch {
            what: "pivots",
            got: pivots.len(),
            expected: segs.num_segments(),
        });
    }
    bytes_suffix::<T>()?;
    let d = DeviceSegments::upload(gpu, segs)?;
    let mut dx = gpu.upload(xs)?;
    let parts = split3_device(gpu, &mut dx, &d, &gpu.upload(pivots)?, gran)?;
    xs.copy_from_slice(&gpu.download(&dx)?);
    parts.to_host(gpu)
}

/// Host convenience for [`compact_device`].
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()` or `keep.len() != xs.len()`;
/// GPU failures.
pub fn compact<T: GpuScalar>(
    gpu: &Gpu,
    xs: &[T],
    keep: &[bool],
    segs: &Segments,
    gran: Option<Granularity>,
) -> Result<(Vec<T>, Segments)> {
    segs.check_len("xs", xs.len())?;
    if keep.len() != xs.len() {
        return Err(Error::LengthMismatch { what: "keep", got: keep.len(), expected: xs.len() });
    }
    bytes_suffix::<T>()?;
    let flags: Vec<u32> = keep.iter().map(|&k| u32::from(k)).collect();
    let d = DeviceSegments::upload(gpu, segs)?;
    let (ys, out) = compact_device(gpu, &gpu.upload(xs)?, &gpu.upload(&flags)?, &d, gran)?;
    Ok((gpu.download(&ys)?, out.to_host(gpu)?))
}
