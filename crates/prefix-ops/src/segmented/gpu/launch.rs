//! Launches and read-backs of the segmented GPU module, counted per thread, and the launch
//! shapes of its two kernel families (lanes per segment, blocks per segment part).

use std::cell::Cell;
use std::ops::Range;

use cuda_kernels::{CudaFunction, DeviceBuffer, Gpu, GpuScalar, LaunchArgs};
use cudarc::driver::LaunchConfig;

use crate::error::Result;

/// Threads per block of every segmented kernel.
pub(crate) const THREADS: u32 = 256;

/// The module of the catalogue's kernels that do not depend on the element type (reverse by
/// element width, the splits' counts, bases and scatters, the rebuild, the quicksort's round).
pub(crate) const OPS: &str = "prefix/segmented_ops";

/// The segmented modules compiled once per element type (`cuda-kernels/prefix/<family>_<type>.cu`),
/// so that a first call compiles its own type's kernels only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Typed {
    /// `seg_reduce_<granularity>_<op>_<type>` (`segmented_reduce_<type>`: 20 kernels).
    Reduce,
    /// `seg_scan_<granularity>_<op>_<type>` (`segmented_scan_<type>`: 20 kernels).
    Scan,
    /// The device quicksort's and split3's `qs_pivots`, `seg_classify3`, `seg_count_unordered`
    /// (`segmented_ops_<type>`: 3 kernels).
    Ops,
}

impl Typed {
    /// The module of this family for `T`.
    pub(crate) fn module<T: GpuScalar>(self) -> String {
        let family = match self {
            Typed::Reduce => "prefix/segmented_reduce",
            Typed::Scan => "prefix/segmented_scan",
            Typed::Ops => OPS,
        };
        format!("{family}_{}", T::SUFFIX)
    }
}

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

/// A kernel of the catalogue's module of kernels for every element type.
pub(crate) fn ops_fn(gpu: &Gpu, name: &str) -> Result<CudaFunction> {
    Ok(gpu.function(OPS, name)?)
}

/// Kernel `<stem>_<type>` of `T`'s module of `family`: the name's type and the module's agree
/// by construction.
pub(crate) fn typed_fn<T: GpuScalar>(gpu: &Gpu, family: Typed, stem: &str) -> Result<CudaFunction> {
    Ok(gpu.function(&family.module::<T>(), &format!("{stem}_{}", T::SUFFIX))?)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry points of embedded module `name`, from its source (no compiler needed).
    fn entries(name: &str) -> Vec<String> {
        let module = cuda_kernels::embedded_modules().iter().find(|m| m.name == name);
        let module = module.unwrap_or_else(|| panic!("no embedded module `{name}`"));
        module.entry_points().unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Every name `typed_fn` can be asked for is in its type's module, which holds exactly the
    /// family's kernels of that type.
    fn check_typed<T: GpuScalar>() {
        let ops = ["add", "mul", "min", "max"];
        let grans = ["t1", "l4", "l8", "w32", "blocks"];
        let families: [(Typed, Vec<String>); 3] = [
            (Typed::Reduce, ops.iter().flat_map(|o| grans.map(|g| format!("seg_reduce_{g}_{o}"))).collect()),
            (Typed::Scan, ops.iter().flat_map(|o| grans.map(|g| format!("seg_scan_{g}_{o}"))).collect()),
            (Typed::Ops, ["qs_pivots", "seg_classify3", "seg_count_unordered"].map(String::from).to_vec()),
        ];
        for (family, stems) in families {
            let module = family.module::<T>();
            let mut want: Vec<String> = stems.iter().map(|s| format!("{s}_{}", T::SUFFIX)).collect();
            let mut have = entries(&module);
            want.sort();
            have.sort();
            assert_eq!(have, want, "{module}");
        }
    }

    #[test]
    fn each_type_has_its_own_modules_and_the_shared_one_holds_the_rest() {
        check_typed::<i32>();
        check_typed::<u32>();
        check_typed::<f32>();
        check_typed::<i64>();
        check_typed::<u64>();
        check_typed::<f64>();
        // The names the host asks `ops_fn` for (reorder.rs, rebuild.rs, quicksort.rs).
        let mut want: Vec<String> = [
            "seg_reverse_b4",
            "seg_reverse_b8",
            "seg_fill_ids",
            "seg_count_blocks_k",
            "seg_split_bases_k",
            "seg_class0_totals_k",
            "seg_scatter_blocks_b4",
            "seg_scatter_blocks_b8",
            "seg_heads_to_counts",
            "seg_heads_to_offsets",
            "qs_heads",
            "qs_next",
            "seg_flags_to_classes",
        ]
        .map(String::from)
        .to_vec();
        for lanes in [1, 4, 8, 32] {
            let l = lanes_suffix(lanes);
            want.extend([
                format!("seg_count_{l}"),
                format!("seg_scatter_{l}_b4"),
                format!("seg_scatter_{l}_b8"),
            ]);
        }
        let mut have = entries(OPS);
        want.sort();
        have.sort();
        assert_eq!(have, want);
    }
}
