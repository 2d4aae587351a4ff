//! Segmented inclusive and exclusive scans on the GPU, in place. Lanes granularities scan
//! chunks of 1, 4, 8 or 32 elements by shuffles and carry each chunk's total; a block scans
//! chunks of 256; several blocks per segment first reduce their parts
//! ([`super::reduce_blocks`]), scan those totals per segment (exclusive, a thread per
//! segment), then scan their parts from that carry.

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar, PushKernelArg};
use cudarc::driver::DevicePtrMut;

use super::launch::{self, Typed, lanes_suffix, launch, typed_fn};
use super::{DeviceSegments, GpuOp, Granularity, parts_for, pick, reduce_blocks, workers};
use crate::error::Result;
use crate::scan::BuiltinOp;
use crate::segmented::Segments;

/// Scans every segment of `xs` in place on the device (exclusive: each segment starts from
/// the identity), at `gran` or the selector's choice.
///
/// Errors: [`crate::Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn scan_device<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    op: M,
    exclusive: bool,
    gran: Option<Granularity>,
) -> Result<()> {
    let _ = op;
    segs.check_len("xs", xs.len())?;
    if segs.len == 0 {
        return Ok(());
    }
    let gran = pick::<T>(gpu, GpuOp::Scan, segs, gran);
    match gran {
        Granularity::Block => scan_parts::<T, M>(gpu, xs, segs, 1, None, exclusive),
        Granularity::MultiBlock => {
            let parts = parts_for(gpu, segs.nseg);
            let mut carry = gpu.zeros::<T>(segs.nseg * parts as usize)?;
            reduce_blocks::<T, M>(gpu, xs, segs, parts, &mut carry)?;
            // The parts' totals form regular segments of `parts`: their exclusive scan is
            // where each part starts.
            let per_seg = DeviceSegments::regular_raw(segs.nseg, parts);
            scan_lanes::<T, M>(gpu, &mut carry, &per_seg, 1, true)?;
            scan_parts::<T, M>(gpu, xs, segs, parts, Some(&carry), exclusive)
        }
        _ => scan_lanes::<T, M>(gpu, xs, segs, workers(gran, 1), exclusive),
    }
}

fn scan_lanes<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    lanes: u64,
    exclusive: bool,
) -> Result<()> {
    let func = typed_fn::<T>(gpu, Typed::Scan, &format!("seg_scan_{}_{}", lanes_suffix(lanes), M::NAME))?;
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    let excl = i32::from(exclusive);
    let cfg = launch::cover(gpu, segs.nseg.saturating_mul(lanes as usize));
    let (p, _gx) = xs.device_ptr_mut(gpu.stream());
    // SAFETY: seg_scan_<lanes>(x, y, off, seg_len, nseg, exclusive) in place (x = y) over the
    // descriptor's elements; off has nseg + 1 entries or is 0 for regular segments.
    unsafe {
        launch(gpu, &func, cfg, |a| {
            a.arg(&p).arg(&p).arg(&off).arg(&seg_len).arg(&nseg).arg(&excl);
        })
    }
}

fn scan_parts<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut DeviceBuffer<T>,
    segs: &DeviceSegments,
    parts: u64,
    carry: Option<&DeviceBuffer<T>>,
    exclusive: bool,
) -> Result<()> {
    let func = typed_fn::<T>(gpu, Typed::Scan, &format!("seg_scan_blocks_{}", M::NAME))?;
    let (off, _g, seg_len) = segs.view(gpu);
    let nseg = segs.nseg as u64;
    let excl = i32::from(exclusive);
    let cfg = launch::blocks(gpu, nseg * parts);
    let (p, _gx) = xs.device_ptr_mut(gpu.stream());
    let (c, _gc) = match carry {
        Some(b) => {
            let (c, g) = cudarc::driver::DevicePtr::device_ptr(b, gpu.stream());
            (c, Some(g))
        }
        None => (0u64, None),
    };
    // SAFETY: seg_scan_blocks(x, y, off, seg_len, nseg, parts, carry_in, exclusive) in place;
    // carry_in holds nseg * parts values or is 0.
    unsafe {
        launch(gpu, &func, cfg, |a| {
            a.arg(&p).arg(&p).arg(&off).arg(&seg_len).arg(&nseg).arg(&parts).arg(&c).arg(&excl);
        })
    }
}

fn host_scan<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    op: M,
    exclusive: bool,
    gran: Option<Granularity>,
) -> Result<()> {
    segs.check_len("xs", xs.len())?;
    if xs.is_empty() {
        return Ok(());
    }
    let d = DeviceSegments::upload(gpu, segs)?;
    let mut dx = gpu.upload(xs)?;
    scan_device(gpu, &mut dx, &d, op, exclusive, gran)?;
    xs.copy_from_slice(&gpu.download(&dx)?);
    Ok(())
}

/// Host convenience for [`scan_device`], inclusive: uploads, scans, downloads.
///
/// Errors: [`crate::Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn inclusive_scan<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    op: M,
    gran: Option<Granularity>,
) -> Result<()> {
    host_scan(gpu, xs, segs, op, false, gran)
}

/// Host convenience for [`scan_device`], exclusive.
///
/// Errors: as [`inclusive_scan`].
pub fn exclusive_scan<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &mut [T],
    segs: &Segments,
    op: M,
    gran: Option<Granularity>,
) -> Result<()> {
    host_scan(gpu, xs, segs, op, true, gran)
}
