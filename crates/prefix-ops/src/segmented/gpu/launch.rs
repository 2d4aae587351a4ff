//! Launches and read-backs of the segmented GPU module, counted per thread, and the launch
//! shapes of its two kernel families (lanes per segment, blocks per segment part).

use std::cell::Cell;
use std::ops::Range;

use cuda_kernels::{CudaFunction, DeviceBuffer, Gpu, GpuScalar, LaunchArgs};
use cudarc::driver::LaunchConfig;

use crate::error::Result;

/// Threads per block of every segmented kernel.
pub(crate) const THREADS: u32 = 256;

/// The module of the catalogue's kernels beyond reduction.
pub(crate) const OPS: &str = "prefix/segmented_ops";

/// What this module did on the calling thread since it started: kernel launches, and copies
/// from the device to the host (with their bytes). The device quicksort's report is the
/// difference of two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GpuCounters {
    /// Kernels launched.
    pub launches: u64,
    /// Device-to-host copies.
    pub readbacks: u64,
    /// Bytes those copies moved.
    pub readback_bytes: u64,
}

impl GpuCounters {
    /// The counts from `earlier` to `self`.
    pub fn since(&self, earlier: &GpuCounters) -> GpuCounters {
        GpuCounters {
            launches: self.launches - earlier.launches,
            readbacks: self.readbacks - earlier.readbacks,
            readback_bytes: self.readback_bytes - earlier.readback_bytes,
        }
    }
}

thread_local! {
    static COUNTERS: Cell<GpuCounters> = const { Cell::new(GpuCounters { launches: 0, readbacks: 0, readback_bytes: 0 }) };
}

/// This thread's counters (launches and read-backs made by [`super`]'s functions; launches of
/// prefix-ops' sorts, which the segmented sort calls, are not counted).
pub fn counters() -> GpuCounters {
    COUNTERS.with(Cell::get)
}

fn bump(f: impl FnOnce(&mut GpuCounters)) {
    COUNTERS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    });
}

/// [`Gpu::launch`], counted.
///
/// # Safety
/// As [`Gpu::launch`]: the arguments must match the kernel and the buffers be large enough.
pub(crate) unsafe fn launch<'a>(
    gpu: &'a Gpu,
    func: &'a CudaFunction,
    cfg: LaunchConfig,
    push: impl FnOnce(&mut LaunchArgs<'a>),
) -> Result<()> {
    bump(|c| c.launches += 1);
    // SAFETY: forwarded from the caller.
    unsafe { gpu.launch(func, cfg, push) }?;
    Ok(())
}

/// Elements `range` of `buf` on the host (waits for queued work), counted.
pub(crate) fn read_back<T: GpuScalar>(
    gpu: &Gpu,
    buf: &DeviceBuffer<T>,
    range: Range<usize>,
) -> Result<Vec<T>> {
    if range.is_empty() {
        return Ok(Vec::new());
    }
    bump(|c| {
        c.readbacks += 1;
        c.readback_bytes += (range.len() * size_of::<T>()) as u64;
    });
    let v = gpu.stream().clone_dtoh(&buf.slice(range)).map_err(cuda_kernels::Error::from)?;
    Ok(v)
}

/// A kernel of the catalogue's module.
pub(crate) fn ops_fn(gpu: &Gpu, name: &str) -> Result<CudaFunction> {
    Ok(gpu.function(OPS, name)?)
}

/// Blocks of [`THREADS`] covering `items` threads (grid-stride loops do the rest).
pub(crate) fn cover(gpu: &Gpu, items: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (gpu.grid_for(items, THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Blocks for `work` block-sized work items (segment parts), at most 32 per SM.
pub(crate) fn blocks(gpu: &Gpu, work: u64) -> LaunchConfig {
    let cap = u64::from(gpu.props().sm_count.max(1)) * 32;
    LaunchConfig {
        grid_dim: (work.clamp(1, cap) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The kernel name suffix of a lanes granularity (`t1`, `l4`, `l8`, `w32`).
pub(crate) fn lanes_suffix(lanes: u64) -> &'static str {
    match lanes {
        1 => "t1",
        4 => "l4",
        8 => "l8",
        _ => "w32",
    }
}
