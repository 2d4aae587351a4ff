//! The segmented catalogue on the GPU, each operation at six granularities, and a segment
//! descriptor that stays on the device across calls.
//!
//! | [`Granularity`] | who works on one segment | suits |
//! |---|---|---|
//! | `Thread` | one thread | very many tiny segments |
//! | `Lanes4`, `Lanes8` | 4 or 8 consecutive lanes of a warp | short segments |
//! | `Warp` | a warp | from about a hundred elements (HiDP's Fig. 6.1) |
//! | `Block` | a block of 256 threads | thousands of elements |
//! | `MultiBlock` | several blocks, combined by further passes | few, very long segments |
//!
//! | operation | device form | host form |
//! |---|---|---|
//! | reduce | [`reduce_device`] | [`reduce`] |
//! | inclusive / exclusive scan | [`scan_device`] | [`inclusive_scan`], [`exclusive_scan`] |
//! | reverse | [`reverse_device`] | [`reverse`] |
//! | partition, split3 | [`partition_device`], [`split3_device`] | [`partition`], [`split3`] |
//! | compact | [`compact_device`] | [`compact`] |
//! | sort | [`sort_device`], [`sort_by_key_device`] | [`sort`], [`sort_by_key`] |
//! | descriptor rebuild | [`DeviceSegments::from_head_flags`], [`DeviceSegments::segment_ids`] | |
//! | quicksort | [`quicksort_device`] | [`quicksort`] |
//!
//! Every call takes a granularity or `None` for the selector's: [`choose`] over the thresholds
//! [`thresholds`] looks up ([`GpuThresholds`], tuned per device, operation, element type and
//! shape, else provisional defaults until measured on a GPU). Results equal the CPU catalogue:
//! bit for bit for integers, Min/Max, the reorderings and sorts; within rounding for float sums
//! and products, whose combination order depends on the granularity. Sorting reuses prefix-ops'
//! GPU sorts ([`crate::sort::gpu`]). Kernels: `cuda-kernels/prefix/segmented_reduce.cuh` and
//! `segmented_ops.cuh`, compiled one module per element type (`segmented_reduce_<type>`,
//! `segmented_scan_<type>`, `segmented_ops_<type>`: a first call compiles its own type's
//! kernels only) beside `segmented_ops.cu` for the kernels that do not depend on the type.
//! [`counters`] counts this module's launches and read-backs per thread (what the quicksort's
//! report is made of).

mod launch;
mod quicksort;
mod rebuild;
mod reorder;
mod scan;
mod sort;

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar, PushKernelArg};
use cudarc::driver::{DevicePtr, LaunchConfig, SyncOnDrop};
use hetero_sched::tune::Fingerprint;
use hetero_sched::tune::dispatch::{self as tuned_dispatch, Tunable};

use super::descriptor::{Form, Segments};
pub use super::tuning::{GPU_KERNEL as TUNING_KERNEL, GpuOp, GpuThresholds};
use crate::error::{Error, Result};
use crate::scan::BuiltinOp;
pub use launch::{GpuCounters, counters};
use launch::{THREADS, Typed, launch, typed_fn};
pub use quicksort::{
    GpuQuicksortReport, MAX_LAUNCHES_PER_ROUND, quicksort, quicksort_device, quicksort_device_with,
};
pub use reorder::{
    compact, compact_device, partition, partition_device, reverse, reverse_device, split3, split3_device,
};
pub use scan::{exclusive_scan, inclusive_scan, scan_device};
pub use sort::{sort, sort_by_key, sort_by_key_device, sort_device};

/// Who reduces one segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Granularity {
    /// One thread per segment.
    Thread,
    /// Four lanes per segment.
    Lanes4,
    /// Eight lanes per segment.
    Lanes8,
    /// A warp per segment.
    Warp,
    /// A block per segment.
    Block,
    /// Several blocks per segment, combined by a second pass.
    MultiBlock,
}

impl Granularity {
    /// All six, finest first.
    pub const ALL: [Granularity; 6] = [
        Granularity::Thread,
        Granularity::Lanes4,
        Granularity::Lanes8,
        Granularity::Warp,
        Granularity::Block,
        Granularity::MultiBlock,
    ];

    fn lanes_kernel(self) -> Option<&'static str> {
        match self {
            Granularity::Thread => Some("t1"),
            Granularity::Lanes4 => Some("l4"),
            Granularity::Lanes8 => Some("l8"),
            Granularity::Warp => Some("w32"),
            Granularity::Block | Granularity::MultiBlock => None,
        }
    }
}

/// The granularity for `nseg` segments covering `n` elements on a GPU with `sm_count` SMs.
pub fn choose(n: usize, nseg: usize, sm_count: u32, t: &GpuThresholds) -> Granularity {
    let avg = n / nseg.max(1);
    if avg >= t.multi_block && nseg < t.multi_block_max_segments_per_sm * sm_count as usize {
        Granularity::MultiBlock
    } else if avg >= t.block {
        Granularity::Block
    } else if avg >= t.warp {
        Granularity::Warp
    } else if avg >= t.lanes8 {
        Granularity::Lanes8
    } else if avg >= t.lanes4 {
        Granularity::Lanes4
    } else {
        Granularity::Thread
    }
}

/// The thresholds the selector uses for `op` over `n` elements in `nseg` segments of `T` on
/// `gpu`: the configuration tuned for this device in the tuning cache, else the defaults.
pub fn thresholds<T: ?Sized>(gpu: &Gpu, op: GpuOp, n: usize, nseg: usize) -> GpuThresholds {
    GpuThresholds::tuned_on::<T>(tuned_dispatch::global(), &Fingerprint::gpu(gpu), (op, n, nseg))
}

/// The selector's granularity for `op` on `segs`, or `gran` when given.
fn pick<T: ?Sized>(gpu: &Gpu, op: GpuOp, segs: &DeviceSegments, gran: Option<Granularity>) -> Granularity {
    gran.unwrap_or_else(|| {
        let t = thresholds::<T>(gpu, op, segs.len, segs.nseg);
        choose(segs.len, segs.nseg, gpu.props().sm_count, &t)
    })
}

/// Blocks per segment of the multi-block granularity: enough blocks in all to fill the GPU
/// twice over, at least 2 per segment.
fn parts_for(gpu: &Gpu, nseg: usize) -> u64 {
    let sm = gpu.props().sm_count.max(1) as u64;
    (2 * sm * 8).div_ceil(nseg.max(1) as u64).clamp(2, 1024)
}

/// Workers (threads) per segment at `gran` (`parts` blocks for `MultiBlock`).
fn workers(gran: Granularity, parts: u64) -> u64 {
    match gran {
        Granularity::Thread => 1,
        Granularity::Lanes4 => 4,
        Granularity::Lanes8 => 8,
        Granularity::Warp => 32,
        Granularity::Block => u64::from(THREADS),
        Granularity::MultiBlock => u64::from(THREADS) * parts,
    }
}

/// A [`Segments`] on the device: the offsets uploaded once (as `u64`), or the two numbers of
/// regular segments. Reuse it across calls to keep the descriptor on the GPU.
#[derive(Debug)]
pub struct DeviceSegments {
    nseg: usize,
    len: usize,
    seg_len: u64,
    offsets: Option<DeviceBuffer<u64>>,
}

impl DeviceSegments {
    /// Uploads `segs` (nothing for regular segments).
    pub fn upload(gpu: &Gpu, segs: &Segments) -> Result<DeviceSegments> {
        if segs.is_oversized() {
            return Err(segs.oversized_error());
        }
        let (seg_len, offsets) = match segs.form() {
            Form::Regular(l) => (l as u64, None),
            Form::Offsets(o) => {
                let o64: Vec<u64> = o.iter().map(|&x| x as u64).collect();
                (0, Some(gpu.upload(&o64)?))
            }
        };
        Ok(DeviceSegments { nseg: segs.num_segments(), len: segs.len(), seg_len, offsets })
    }

    /// Number of segments.
    pub fn num_segments(&self) -> usize {
        self.nseg
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the segments cover no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `nseg` regular segments of `seg_len`.
    pub(crate) fn regular_raw(nseg: usize, seg_len: u64) -> DeviceSegments {
        DeviceSegments { nseg, len: nseg * seg_len as usize, seg_len, offsets: None }
    }

    /// `nseg` segments covering `len` elements by device offsets (at least `nseg + 1` entries,
    /// as the kernels that built them wrote them).
    pub(crate) fn from_device_offsets(nseg: usize, len: usize, offsets: DeviceBuffer<u64>) -> DeviceSegments {
        DeviceSegments { nseg, len, seg_len: 0, offsets: Some(offsets) }
    }

    /// The host descriptor (reads the offsets back; nothing for regular segments).
    pub fn to_host(&self, gpu: &Gpu) -> Result<Segments> {
        match &self.offsets {
            None => Ok(Segments::regular(self.seg_len as usize, self.nseg)),
            Some(o) => {
                let o = launch::read_back(gpu, o, 0..self.nseg + 1)?;
                Segments::from_offsets(&o.iter().map(|&x| x as usize).collect::<Vec<_>>())
            }
        }
    }

    /// The kernels' view: the offsets' device pointer (0 for regular segments, with the guard
    /// that orders it on the stream) and the regular length.
    fn view<'a>(&'a self, gpu: &'a Gpu) -> (u64, Option<SyncOnDrop<'a>>, u64) {
        match &self.offsets {
            Some(o) => {
                let (p, g) = o.device_ptr(gpu.stream());
                (p, Some(g), 0)
            }
            None => (0, None, self.seg_len),
        }
    }

    fn check_len(&self, what: &'static str, n: usize) -> Result<()> {
        if n != self.len {
            return Err(Error::LengthMismatch { what, got: n, expected: self.len });
        }
        Ok(())
    }
}

/// Reduces every segment of `xs` at `gran` into `out` (`nseg` values).
fn launch_reduce<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    segs: &DeviceSegments,
    gran: Granularity,
    out: &mut DeviceBuffer<T>,
) -> Result<()> {
    let nseg = segs.nseg as u64;
    let (off, _guard, seg_len) = segs.view(gpu);
    let name = M::NAME;
    if let Some(k) = gran.lanes_kernel() {
        let lanes = match gran {
            Granularity::Thread => 1,
            Granularity::Lanes4 => 4,
            Granularity::Lanes8 => 8,
            _ => 32,
        };
        let threads = segs.nseg.saturating_mul(lanes).max(1);
        let cfg = LaunchConfig {
            grid_dim: (gpu.grid_for(threads, THREADS), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let func = typed_fn::<T>(gpu, Typed::Reduce, &format!("seg_reduce_{k}_{name}"))?;
        // SAFETY: seg_reduce_<k>(x, offsets, seg_len, nseg, out): x holds the descriptor's
        // elements, offsets nseg + 1 entries (or 0 with regular segments), out nseg values.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(xs).arg(&off).arg(&seg_len).arg(&nseg).arg(out);
            })
        }?;
        return Ok(());
    }
    let parts: u64 = if gran == Granularity::MultiBlock { parts_for(gpu, segs.nseg) } else { 1 };
    if parts == 1 {
        return reduce_blocks::<T, M>(gpu, xs, segs, 1, out);
    }
    let mut partials = gpu.zeros::<T>(segs.nseg * parts as usize)?;
    reduce_blocks::<T, M>(gpu, xs, segs, parts, &mut partials)?;
    // The partials are regular segments of `parts`: one thread per segment combines them in order.
    let second = DeviceSegments::regular_raw(segs.nseg, parts);
    launch_reduce::<T, M>(gpu, &partials, &second, Granularity::Thread, out)
}

/// `parts` blocks per segment, each reducing its part of the segment into `out[s * parts + k]`
/// (the segment cut as the other multi-block kernels cut it).
fn reduce_blocks<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    segs: &DeviceSegments,
    parts: u64,
    out: &mut DeviceBuffer<T>,
) -> Result<()> {
    let func = typed_fn::<T>(gpu, Typed::Reduce, &format!("seg_reduce_blocks_{}", M::NAME))?;
    let nseg = segs.nseg as u64;
    let (off, _guard, seg_len) = segs.view(gpu);
    let cfg = launch::blocks(gpu, nseg * parts);
    // SAFETY: seg_reduce_blocks(x, offsets, seg_len, nseg, parts, out) with x of the
    // descriptor's elements, offsets of nseg + 1 (or 0 with regular segments), out of
    // nseg * parts values (the caller sizes it).
    unsafe {
        launch(gpu, &func, cfg, |a| {
            a.arg(xs).arg(&off).arg(&seg_len).arg(&nseg).arg(&parts).arg(out);
        })
    }
}

/// One value per segment of the device array `xs` into a new device buffer, at `gran` or the
/// selector's choice.
///
/// Errors: [`Error::LengthMismatch`] when `xs.len() != segs.len()`; GPU failures.
pub fn reduce_device<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    segs: &DeviceSegments,
    op: M,
    gran: Option<Granularity>,
) -> Result<DeviceBuffer<T>> {
    let _ = op;
    segs.check_len("xs", xs.len())?;
    let gran = pick::<T>(gpu, GpuOp::Reduce, segs, gran);
    let mut out = gpu.zeros::<T>(segs.nseg.max(1))?;
    if segs.nseg > 0 {
        launch_reduce::<T, M>(gpu, xs, segs, gran, &mut out)?;
    }
    Ok(out)
}

/// Host convenience for [`reduce_device`]: uploads, reduces, downloads.
pub fn reduce<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &[T],
    segs: &Segments,
    op: M,
    gran: Option<Granularity>,
) -> Result<Vec<T>> {
    segs.check_len("xs", xs.len())?;
    if xs.is_empty() {
        // Only empty segments: no launch, no zero-byte upload.
        return Ok(vec![op.identity(); segs.num_segments()]);
    }
    let d = DeviceSegments::upload(gpu, segs)?;
    let dx = gpu.upload(xs)?;
    let out = reduce_device(gpu, &dx, &d, op, gran)?;
    let mut v = gpu.download(&out)?;
    v.truncate(segs.num_segments());
    Ok(v)
}
