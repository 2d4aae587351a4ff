//! Segmented reduction on the GPU at six granularities, and a segment descriptor that stays
//! on the device across calls.
//!
//! | [`Granularity`] | who reduces one segment | suits |
//! |---|---|---|
//! | `Thread` | one thread | very many tiny segments |
//! | `Lanes4`, `Lanes8` | 4 or 8 consecutive lanes of a warp | short segments |
//! | `Warp` | a warp | from about a hundred elements (HiDP's Fig. 6.1) |
//! | `Block` | a block of 256 threads | thousands of elements |
//! | `MultiBlock` | several blocks, then a thread per segment over their partials | few, very long segments |
//!
//! [`choose`] picks by average segment length and count with the default thresholds
//! ([`GpuThresholds`]); they are provisional until measured on a GPU (the GPU crossover table
//! belongs to the GPU verification issue). Kernels: `cuda-kernels/prefix/segmented_reduce.cu`.

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar, PushKernelArg};
use cudarc::driver::{DevicePtr, LaunchConfig};

use super::descriptor::{Form, Segments};
use crate::error::{Error, Result};
use crate::scan::BuiltinOp;

/// Threads per block of every segmented kernel.
const THREADS: u32 = 256;

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

/// Average segment lengths at which the selector moves to the next coarser granularity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuThresholds {
    /// From this average length: 4 lanes.
    pub lanes4: usize,
    /// 8 lanes.
    pub lanes8: usize,
    /// A warp.
    pub warp: usize,
    /// A block.
    pub block: usize,
    /// Several blocks, when there are also fewer segments than this many per SM.
    pub multi_block_max_segments_per_sm: usize,
}

impl GpuThresholds {
    /// Provisional defaults after HiDP's Fig. 6.1 (thread for tiny segments, warp from 128):
    /// 4 lanes from 8, 8 lanes from 32, a warp from 128, a block from 4096, several blocks for
    /// segments of at least 2^16 when there are fewer than 2 per SM.
    pub const DEFAULT: GpuThresholds =
        GpuThresholds { lanes4: 8, lanes8: 32, warp: 128, block: 4096, multi_block_max_segments_per_sm: 2 };
}

/// The granularity for `nseg` segments covering `n` elements on a GPU with `sm_count` SMs.
pub fn choose(n: usize, nseg: usize, sm_count: u32, t: &GpuThresholds) -> Granularity {
    let avg = n / nseg.max(1);
    if avg >= 1 << 16 && nseg < t.multi_block_max_segments_per_sm * sm_count as usize {
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
}

/// The kernel's view of a descriptor: (offsets pointer or 0, regular length), with the guard
/// that keeps the pointer's stream ordering.
fn launch_reduce<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &DeviceBuffer<T>,
    segs: &DeviceSegments,
    gran: Granularity,
    out: &mut DeviceBuffer<T>,
) -> Result<()> {
    let nseg = segs.nseg as u64;
    let (off, _guard) = match &segs.offsets {
        Some(o) => {
            let (p, g) = o.device_ptr(gpu.stream());
            (p, Some(g))
        }
        None => (0u64, None),
    };
    let sm = gpu.props().sm_count.max(1) as usize;
    let sfx = T::SUFFIX;
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
        let func = gpu.function("prefix/segmented_reduce", &format!("seg_reduce_{k}_{name}_{sfx}"))?;
        // SAFETY: seg_reduce_<k>(x, offsets, seg_len, nseg, out): x holds the descriptor's
        // elements, offsets nseg + 1 entries (or 0 with regular segments), out nseg values.
        unsafe {
            gpu.launch(&func, cfg, |a| {
                a.arg(xs).arg(&off).arg(&segs.seg_len).arg(&nseg).arg(out);
            })
        }?;
        return Ok(());
    }
    let func = gpu.function("prefix/segmented_reduce", &format!("seg_reduce_blocks_{name}_{sfx}"))?;
    let parts: u64 = if gran == Granularity::MultiBlock {
        // Enough blocks in all to fill the GPU twice over, at least 2 per segment.
        ((2 * sm * 8) as u64).div_ceil(nseg.max(1)).clamp(2, 1024)
    } else {
        1
    };
    let blocks = (segs.nseg as u64 * parts).clamp(1, (sm * 32) as u64) as u32;
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
    if parts == 1 {
        // SAFETY: seg_reduce_blocks(x, offsets, seg_len, nseg, parts = 1, out of nseg).
        unsafe {
            gpu.launch(&func, cfg, |a| {
                a.arg(xs).arg(&off).arg(&segs.seg_len).arg(&nseg).arg(&parts).arg(out);
            })
        }?;
        return Ok(());
    }
    let mut partials = gpu.zeros::<T>(segs.nseg * parts as usize)?;
    // SAFETY: as above with `parts` partials per segment, partials of nseg * parts.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(xs).arg(&off).arg(&segs.seg_len).arg(&nseg).arg(&parts).arg(&mut partials);
        })
    }?;
    // The partials are regular segments of `parts`: one thread per segment combines them in order.
    let second =
        DeviceSegments { nseg: segs.nseg, len: segs.nseg * parts as usize, seg_len: parts, offsets: None };
    launch_reduce::<T, M>(gpu, &partials, &second, Granularity::Thread, out)
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
    if xs.len() != segs.len {
        return Err(Error::LengthMismatch { what: "xs", got: xs.len(), expected: segs.len });
    }
    let gran =
        gran.unwrap_or_else(|| choose(segs.len, segs.nseg, gpu.props().sm_count, &GpuThresholds::DEFAULT));
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
