//! GPU scans: device-buffer functions (`*_device`) and host-slice conveniences, over the kernels
//! in `cuda-kernels/prefix/scan_*.cu`.
//!
//! Every kernel combines in a fixed order, so float results are identical from run to run and
//! equal to [`super::emulate`] bit for bit. Without a GPU every function returns
//! [`Error::Gpu`] (never panics).
//!
//! ```no_run
//! use prefix_ops::scan::{gpu, Add};
//! let dev = cuda_kernels::Gpu::new(0)?;
//! let mut xs = vec![1.0f32; 1 << 20];
//! gpu::inclusive(&dev, &mut xs, Add)?;
//! assert_eq!(xs[1023], 1024.0);
//! # Ok::<(), prefix_ops::Error>(())
//! ```

use std::sync::Arc;

use cuda_kernels::{CudaFunction, DeviceBuffer, Gpu, GpuScalar, LaunchConfig, PushKernelArg};
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::dispatch::{Kernel, ScanOptions, resolve};
use super::emulate::{Network, Shape};
pub use super::gpu_tuning::{GpuScanTuning, KERNEL as TUNING_KERNEL};
use super::op::{Add, BuiltinOp};
use crate::error::{Error, Result};
use crate::segments::{check_offsets, check_rows};
use hetero_sched::tune::Fingerprint;
use hetero_sched::tune::dispatch::{self as tuned_dispatch, Tunable};

const THREADS: u32 = 256;

/// How the elements of a buffer form independent scans.
#[derive(Debug, Clone, Copy)]
pub enum Layout<'a> {
    /// One array.
    Array,
    /// Rows of `row_len`, one after another.
    Rows {
        /// Elements per row.
        row_len: usize,
    },
    /// Segments by CSR offsets, given on the host as everywhere in this crate (the convention
    /// of [`crate::segments`]): validated, then uploaded for the kernel.
    Segments(&'a [usize]),
}

/// Element types with a C name, for the NVRTC path (every [`GpuScalar`] has one).
pub use cuda_kernels::GpuScalar as CudaType;

/// Bytes of one look-back tile value for elements of `elem_bytes` bytes: the element, or for
/// the kernels with heads the kernel's `Flagged<V> { V v; int f; }` (size rounded up to the
/// alignment of `V`: 8 bytes for 4-byte and 16 for 8-byte elements).
fn tile_value_bytes(elem_bytes: usize, heads: bool) -> usize {
    let align = elem_bytes.max(4);
    if heads { (elem_bytes + 4).div_ceil(align) * align } else { elem_bytes }
}

/// Scratch sizes of one look-back launch over `n` elements in tiles of `tile` elements, as the
/// kernel indexes it: `(tiles, status words, value bytes)`. Status: the tile counter, then for
/// 4-byte values without heads (status and value packed in one 8-byte word per tile, from word
/// 2) two words per tile, else one flag per tile. Values (none when packed): the aggregates of
/// all tiles, then their inclusive prefixes.
fn lookback_scratch(n: usize, tile: usize, elem_bytes: usize, heads: bool) -> (usize, usize, usize) {
    let tiles = n.div_ceil(tile);
    if elem_bytes == 4 && !heads {
        return (tiles, 2 + 2 * tiles, 0);
    }
    (tiles, 1 + tiles, 2 * tiles * tile_value_bytes(elem_bytes, heads))
}

/// Tile status and value scratch for one look-back launch: the status words zeroed on the
/// launch's stream (a tile waits on them), the values left uninitialised (a tile publishes its
/// value before its status, and nothing reads a value whose status is unset).
struct Scratch {
    status: DeviceBuffer<u32>,
    values: DeviceBuffer<u64>,
}

fn scratch(gpu: &Gpu, status_words: usize, value_bytes: usize) -> Result<Scratch> {
    let words = value_bytes.div_ceil(8).max(1);
    // SAFETY: the kernel reads a tile's value only after reading the status the tile set after
    // writing it (see `publish` in scan_lookback.cuh).
    let values = unsafe { gpu.stream().alloc::<u64>(words) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, words * 8))?;
    Ok(Scratch { status: gpu.zeros::<u32>(status_words)?, values })
}

/// Module and entry-point name of `kernel` for the operator/type. The built-in scans are
/// compiled one module per element type and kernel family (`cuda-kernels/prefix/scan_*_<type>.cu`:
/// a first scan compiles its type's four operators, not every type's), the network study
/// variants of the f32 sum in `prefix/scan_networks`.
fn builtin_kernel_name<T: GpuScalar, M: BuiltinOp<T>>(
    kernel: Kernel,
    layout: Layout<'_>,
    net: Network,
) -> (String, String) {
    let (op, ty) = (M::NAME, T::SUFFIX);
    let (family, name) = match (kernel, layout) {
        (_, Layout::Segments(_)) => ("scan_segmented", format!("scan_lookback_seg_{op}_{ty}")),
        (Kernel::Lookback, _) if net != Network::KoggeStone => {
            return (NETWORKS_MODULE.to_string(), format!("scan_lookback_add_f32_{}", net.suffix()));
        }
        (Kernel::Lookback, _) => ("scan_lookback", format!("scan_lookback_{op}_{ty}")),
        (Kernel::LookbackRows, _) => ("scan_lookback_rows", format!("scan_lookback_rows_{op}_{ty}")),
        (Kernel::RowsWarpLarge, _) if net != Network::KoggeStone => {
            return (NETWORKS_MODULE.to_string(), format!("scan_rows_warp_l_add_f32_{}", net.suffix()));
        }
        (Kernel::RowsWarpSmall, _) => ("scan_batched", format!("scan_rows_warp_s_{op}_{ty}")),
        (Kernel::RowsWarpLarge, _) => ("scan_batched", format!("scan_rows_warp_l_{op}_{ty}")),
        (Kernel::RowsBlock, _) => ("scan_batched", format!("scan_rows_block_{op}_{ty}")),
    };
    (format!("prefix/{family}_{ty}"), name)
}

/// The module of the prefix-network study variants (f32 Add only).
const NETWORKS_MODULE: &str = "prefix/scan_networks";

fn check_network<T: GpuScalar, M: BuiltinOp<T>>(net: Network, kernel: Kernel) -> Result<()> {
    let study =
        matches!(kernel, Kernel::Lookback | Kernel::RowsWarpLarge) && T::SUFFIX == "f32" && M::NAME == "add";
    if net != Network::KoggeStone && !study {
        return Err(Error::Invalid(format!(
            "network {net:?} is instantiated only for f32 Add with the Lookback and RowsWarpLarge kernels"
        )));
    }
    Ok(())
}

/// Where a scan reads and writes: raw device pointers (the same for in-place scans).
#[derive(Clone, Copy)]
struct Io {
    src: u64,
    dst: u64,
    n: usize,
}

/// Launches `func` (a look-back kernel or a rows kernel, per `kernel`) on `io`, with the
/// embedded kernels' block shape. `seg_offsets` holds the uploaded offsets of a
/// [`Layout::Segments`] layout.
fn launch(
    gpu: &Gpu,
    func: &CudaFunction,
    kernel: Kernel,
    io: Io,
    elem_bytes: usize,
    layout: Layout<'_>,
    seg_offsets: Option<&DeviceBuffer<u64>>,
    exclusive: bool,
) -> Result<()> {
    let shape = Shape::lookback(elem_bytes);
    launch_shaped(gpu, func, kernel, io, elem_bytes, shape, layout, seg_offsets, exclusive)
}

/// [`launch`] for a kernel compiled with block shape `shape` (look-back kernels size their
/// grid and scratch by its tile).
#[allow(clippy::too_many_arguments)]
fn launch_shaped(
    gpu: &Gpu,
    func: &CudaFunction,
    kernel: Kernel,
    io: Io,
    elem_bytes: usize,
    shape: Shape,
    layout: Layout<'_>,
    seg_offsets: Option<&DeviceBuffer<u64>>,
    exclusive: bool,
) -> Result<()> {
    let n = io.n as u64;
    let excl = exclusive as i32;
    let sm = gpu.props().sm_count.max(1);
    match kernel {
        Kernel::Lookback | Kernel::LookbackRows => {
            // The row/segment kernels scan (value, head) pairs whatever the layout (a forced
            // `LookbackRows` on one array included): size the values by the kernel, not the layout.
            let heads = kernel == Kernel::LookbackRows;
            let (tiles, status_words, value_bytes) = lookback_scratch(io.n, shape.tile(), elem_bytes, heads);
            let grid = u32::try_from(tiles)
                .map_err(|_| Error::Invalid(format!("scan of {} elements: too many tiles", io.n)))?;
            let mut s = scratch(gpu, status_words, value_bytes)?;
            let (row_len, off_ptr, n_off, _guard) = match (layout, seg_offsets) {
                (Layout::Rows { row_len }, _) => (row_len as u64, 0, 0, None),
                (Layout::Segments(_), Some(off)) => {
                    let (p, g) = off.device_ptr(gpu.stream());
                    (n.max(1), p, off.len() as u64, Some(g))
                }
                _ => (n.max(1), 0u64, 0u64, None),
            };
            let threads = u32::try_from(shape.threads)
                .map_err(|_| Error::Invalid(format!("scan: {} threads per block", shape.threads)))?;
            let cfg =
                LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 };
            let (status, _gs) = s.status.device_ptr_mut(gpu.stream());
            let (values, _gv) = s.values.device_ptr_mut(gpu.stream());
            // SAFETY: matches scan_lookback_tile's parameters (in, out, n, row_len, offsets,
            // n_offsets, status, values, exclusive); src/dst hold n elements, status 1 + tiles
            // zeroed words, values 2 * tiles status values; offsets n_offsets u64.
            unsafe {
                gpu.launch(func, cfg, |a| {
                    a.arg(&io.src).arg(&io.dst).arg(&n).arg(&row_len).arg(&off_ptr).arg(&n_off);
                    a.arg(&status).arg(&values).arg(&excl);
                })
            }?;
            Ok(())
        }
        Kernel::RowsWarpSmall | Kernel::RowsWarpLarge | Kernel::RowsBlock => {
            let row_len = match layout {
                Layout::Rows { row_len } => row_len,
                _ => io.n,
            };
            let rows = io.n / row_len.max(1);
            let per_block = if kernel == Kernel::RowsBlock { 1 } else { THREADS as usize / 32 };
            let grid = rows.div_ceil(per_block).min(sm as usize * 32).max(1) as u32;
            let cfg =
                LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
            let (rows, row_len) = (rows as u64, row_len as u64);
            // SAFETY: matches scan_rows_*(in, out, rows, row_len, exclusive); src/dst hold
            // rows * row_len elements.
            unsafe {
                gpu.launch(func, cfg, |a| {
                    a.arg(&io.src).arg(&io.dst).arg(&rows).arg(&row_len).arg(&excl);
                })
            }?;
            Ok(())
        }
    }
}

fn rows_of(layout: Layout<'_>, n: usize) -> Result<(usize, usize)> {
    match layout {
        Layout::Array => Ok((1, n)),
        Layout::Rows { row_len } => {
            check_rows(n, row_len)?;
            Ok((n / row_len.max(1), row_len))
        }
        Layout::Segments(offsets) => {
            check_offsets(n, offsets)?;
            Ok((2, n))
        }
    }
}

/// The offsets of a segmented layout on the device, as the kernels read them (`u64`).
fn upload_offsets(gpu: &Gpu, layout: Layout<'_>) -> Result<Option<DeviceBuffer<u64>>> {
    let Layout::Segments(offsets) = layout else { return Ok(None) };
    let mut wide = crate::alloc::try_with_capacity::<u64>(offsets.len(), "scan offsets")?;
    wide.extend(offsets.iter().map(|&o| o as u64));
    Ok(Some(gpu.upload(&wide)?))
}

fn kernel_for<T: GpuScalar>(gpu: &Gpu, layout: Layout<'_>, n: usize, opts: &ScanOptions) -> Result<Kernel> {
    let (rows, row_len) = rows_of(layout, n)?;
    let k = match layout {
        Layout::Segments(_) => Kernel::LookbackRows,
        _ => resolve(rows, row_len, size_of::<T>(), gpu.props().sm_count, opts),
    };
    // The plain look-back kernel has no heads: several rows need the row variant.
    Ok(if k == Kernel::Lookback && !matches!(layout, Layout::Array) && rows > 1 {
        Kernel::LookbackRows
    } else {
        k
    })
}

fn run_builtin<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    io: Io,
    layout: Layout<'_>,
    exclusive: bool,
    opts: &ScanOptions,
) -> Result<()> {
    let kernel = kernel_for::<T>(gpu, layout, io.n, opts)?;
    if io.n == 0 {
        return Ok(());
    }
    if let Some(tuning) = tuned_plan::<T>(gpu, kernel, layout, io.n, opts) {
        return run_tuned::<T, M>(gpu, io, exclusive, &tuning);
    }
    check_network::<T, M>(opts.network, kernel)?;
    let (module, name) = builtin_kernel_name::<T, M>(kernel, layout, opts.network);
    let func = gpu.function(&module, &name)?;
    let seg = upload_offsets(gpu, layout)?;
    launch(gpu, &func, kernel, io, size_of::<T>(), layout, seg.as_ref(), exclusive)
}

/// The tuned configuration dispatch runs a look-back scan of one array with (`None`: the
/// embedded kernel). Only the dispatcher's own choice is tuned: options that force a kernel or
/// a network keep the embedded kernels.
fn tuned_plan<T: GpuScalar>(
    gpu: &Gpu,
    kernel: Kernel,
    layout: Layout<'_>,
    n: usize,
    opts: &ScanOptions,
) -> Option<GpuScanTuning> {
    if kernel != Kernel::Lookback || !matches!(layout, Layout::Array) || opts.network != Network::KoggeStone {
        return None;
    }
    let tuning = scan_tuning::<T>(gpu, n);
    (tuning != GpuScanTuning::default_for(size_of::<T>())).then_some(tuning)
}

/// The parameters dispatch uses for a look-back scan of an array of `n` elements of `T` on
/// `gpu`: the configuration tuned for this device, type and length bucket in the tuning cache
/// (read once per process), else the embedded kernels' shape.
pub fn scan_tuning<T: GpuScalar>(gpu: &Gpu, n: usize) -> GpuScanTuning {
    GpuScanTuning::tuned_on::<T>(tuned_dispatch::global(), &Fingerprint::gpu(gpu), (n, size_of::<T>()))
}

/// The C functor of a built-in operator in `scan_ops.cuh`.
fn functor<T, M: BuiltinOp<T>>() -> Result<&'static str> {
    Ok(match M::NAME {
        "add" => "AddOp",
        "mul" => "MulOp",
        "min" => "MinOp",
        "max" => "MaxOp",
        other => return Err(Error::Invalid(format!("scan: no CUDA functor for operator `{other}`"))),
    })
}

/// `prefix/scan_tuned.cu` compiled by NVRTC for `tuning` (once per configuration, type,
/// operator and device: the runtime caches generated modules by source, in memory and on disk).
fn tuned_kernel<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    tuning: &GpuScanTuning,
) -> Result<cuda_kernels::Kernel> {
    const NAME: &str = "prefix/scan_tuned";
    let base = cuda_kernels::embedded_modules()
        .iter()
        .find(|m| m.name == NAME)
        .ok_or_else(|| cuda_kernels::Error::UnknownModule(NAME.to_string()))?;
    let source = format!("{}{}", tuning.defines(T::C_NAME, functor::<T, M>()?), base.source);
    let label = format!("{NAME} ({} {}, {:?})", M::NAME, T::C_NAME, tuning.shape);
    Ok(gpu.module_from_source(&label, &source)?.kernel("scan_tuned_lookback")?)
}

fn run_tuned<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    io: Io,
    exclusive: bool,
    tuning: &GpuScanTuning,
) -> Result<()> {
    let func = tuned_kernel::<T, M>(gpu, tuning)?;
    let shape = tuning.shape;
    launch_shaped(gpu, &func, Kernel::Lookback, io, size_of::<T>(), shape, Layout::Array, None, exclusive)
}

/// Scans `buf` (one array) in place with the look-back kernel compiled for `tuning`, whatever
/// the tuning cache holds: what the autotuner measures. Results equal
/// [`emulate::lookback`](super::emulate::lookback) with `tuning.shape` bit for bit.
pub fn scan_device_tuned<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    buf: &mut DeviceBuffer<T>,
    _op: M,
    exclusive: bool,
    tuning: &GpuScanTuning,
) -> Result<()> {
    let n = buf.len();
    if n == 0 {
        return Ok(());
    }
    if GpuScanTuning::from_config(&tuning.to_config()).is_none() {
        return Err(Error::Invalid(format!("scan: unusable GPU tuning {:?}", tuning.shape)));
    }
    let (p, _g) = buf.device_ptr_mut(gpu.stream());
    run_tuned::<T, M>(gpu, Io { src: p, dst: p, n }, exclusive, tuning)
}

/// Scans `src` into `dst` on the device (out of place) with a built-in operator.
///
/// `layout` says whether the buffer is one array, rows or segments (validated first, as in
/// [`crate::segments`]); `opts` may force a kernel or a warp network (see [`super::dispatch`]).
pub fn scan_into_device<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    src: &DeviceBuffer<T>,
    dst: &mut DeviceBuffer<T>,
    layout: Layout<'_>,
    _op: M,
    exclusive: bool,
    opts: &ScanOptions,
) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::LengthMismatch { what: "dst", got: dst.len(), expected: src.len() });
    }
    let _span = tracing::debug_span!("scan::gpu::scan_into_device", n = src.len()).entered();
    let (s, _gs) = src.device_ptr(gpu.stream());
    let (d, _gd) = dst.device_ptr_mut(gpu.stream());
    run_builtin::<T, M>(gpu, Io { src: s, dst: d, n: src.len() }, layout, exclusive, opts)
}

/// Scans `buf` in place on the device with a built-in operator (see [`scan_into_device`]).
pub fn scan_device<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    buf: &mut DeviceBuffer<T>,
    layout: Layout<'_>,
    _op: M,
    exclusive: bool,
    opts: &ScanOptions,
) -> Result<()> {
    let n = buf.len();
    let (p, _g) = buf.device_ptr_mut(gpu.stream());
    run_builtin::<T, M>(gpu, Io { src: p, dst: p, n }, layout, exclusive, opts)
}

fn host_roundtrip<T: GpuScalar>(
    gpu: &Gpu,
    data: &mut [T],
    f: impl FnOnce(&mut DeviceBuffer<T>) -> Result<()>,
) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let mut buf = gpu.upload(data)?;
    f(&mut buf)?;
    let out = gpu.download(&buf)?;
    data.copy_from_slice(&out);
    Ok(())
}

/// In-place inclusive scan of a host slice on the GPU (upload, scan, download).
pub fn inclusive<T: GpuScalar, M: BuiltinOp<T>>(gpu: &Gpu, data: &mut [T], op: M) -> Result<()> {
    host_roundtrip(gpu, data, |b| scan_device(gpu, b, Layout::Array, op, false, &ScanOptions::default()))
}

/// In-place exclusive scan of a host slice on the GPU.
pub fn exclusive<T: GpuScalar, M: BuiltinOp<T>>(gpu: &Gpu, data: &mut [T], op: M) -> Result<()> {
    host_roundtrip(gpu, data, |b| scan_device(gpu, b, Layout::Array, op, true, &ScanOptions::default()))
}

/// Batched inclusive scan of rows of `row_len` on the GPU (errors as [`super::inclusive_rows`]).
pub fn inclusive_rows<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    data: &mut [T],
    row_len: usize,
    op: M,
) -> Result<()> {
    check_rows(data.len(), row_len)?;
    host_roundtrip(gpu, data, |b| {
        scan_device(gpu, b, Layout::Rows { row_len }, op, false, &ScanOptions::default())
    })
}

/// Batched exclusive scan of rows of `row_len` on the GPU.
pub fn exclusive_rows<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    data: &mut [T],
    row_len: usize,
    op: M,
) -> Result<()> {
    check_rows(data.len(), row_len)?;
    host_roundtrip(gpu, data, |b| {
        scan_device(gpu, b, Layout::Rows { row_len }, op, true, &ScanOptions::default())
    })
}

/// Segmented scan with CSR offsets on the GPU (errors as [`super::inclusive_segments`]).
pub fn scan_segments<T: GpuScalar, M: BuiltinOp<T>>(
    gpu: &Gpu,
    data: &mut [T],
    offsets: &[usize],
    op: M,
    exclusive: bool,
) -> Result<()> {
    check_offsets(data.len(), offsets)?;
    host_roundtrip(gpu, data, |b| {
        scan_device(gpu, b, Layout::Segments(offsets), op, exclusive, &ScanOptions::default())
    })
}

/// Stream compaction / stable partition on the device: `flags` holds 0 or 1 per element.
/// Kept elements (flag 1) go to the front of `dst` in order; with `partition` the others follow
/// in order. Returns the number kept. Needs `n < 2^32`.
pub fn select_device<T: GpuScalar>(
    gpu: &Gpu,
    src: &DeviceBuffer<T>,
    flags: &DeviceBuffer<u32>,
    dst: &mut DeviceBuffer<T>,
    partition: bool,
) -> Result<usize> {
    let n = src.len();
    if flags.len() != n {
        return Err(Error::LengthMismatch { what: "flags", got: flags.len(), expected: n });
    }
    if dst.len() != n {
        return Err(Error::LengthMismatch { what: "dst", got: dst.len(), expected: n });
    }
    if n == 0 {
        return Ok(0);
    }
    if n > u32::MAX as usize {
        return Err(Error::Invalid(format!("select: {n} elements, at most 2^32 - 1")));
    }
    // The inclusive scan writes every position: no zeroing.
    // SAFETY: `pos` is written in full by the scan before the scatter reads it.
    let mut pos = unsafe { gpu.stream().alloc::<u32>(n) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, n * size_of::<u32>()))?;
    scan_into_device(gpu, flags, &mut pos, Layout::Array, Add, false, &ScanOptions::default())?;
    let func = gpu.function("prefix/scan_compact", &format!("scan_scatter_{}", T::SUFFIX))?;
    let cfg = LaunchConfig {
        grid_dim: (gpu.grid_for(n, THREADS), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (n64, part) = (n as u64, partition as i32);
    // SAFETY: scan_scatter_T(x, pos, n, out, partition) with x, pos, out of n.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(src).arg(&pos).arg(&n64).arg(dst).arg(&part);
        })?;
    }
    // The one blocking read: the inclusive scan's last word is the number kept.
    let kept = gpu.stream().clone_dtoh(&pos.slice(n - 1..)).map_err(cuda_kernels::Error::from)?[0] as usize;
    // Flags above 1 are counted by the scan; the kernel kept its writes in range.
    if kept > n {
        return Err(Error::Invalid(format!(
            "select: flags must be 0 or 1 (they count {kept} for {n} elements)"
        )));
    }
    Ok(kept)
}

/// Host convenience for [`select_device`]: the kept elements, in order.
pub fn compact<T: GpuScalar>(gpu: &Gpu, data: &[T], keep: &[bool]) -> Result<Vec<T>> {
    let (mut all, kept) = partition(gpu, data, keep)?;
    all.truncate(kept);
    Ok(all)
}

/// Host convenience for [`select_device`] with `partition`: kept elements then the others,
/// both in their original order, and the number kept.
pub fn partition<T: GpuScalar>(gpu: &Gpu, data: &[T], keep: &[bool]) -> Result<(Vec<T>, usize)> {
    if keep.len() != data.len() {
        return Err(Error::LengthMismatch { what: "keep", got: keep.len(), expected: data.len() });
    }
    if data.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let src = gpu.upload(data)?;
    let mut flags = crate::alloc::try_with_capacity::<u32>(keep.len(), "partition flags")?;
    flags.extend(keep.iter().map(|&k| k as u32));
    let flags = gpu.upload(&flags)?;
    // SAFETY: with `partition`, select writes every position of dst (kept, then the others).
    let mut dst = unsafe { gpu.stream().alloc::<T>(data.len()) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, std::mem::size_of_val(data)))?;
    let kept = select_device(gpu, &src, &flags, &mut dst, true)?;
    Ok((gpu.download(&dst)?, kept))
}

/// A user-defined operator as CUDA C expressions, compiled by NVRTC at first use (cached per
/// device, type and expressions). `combine` uses `a` (earlier) and `b`; it must be associative
/// and `identity` its identity, or results are undefined. Each expression becomes a one-line
/// macro: a line break or other control character in it is an [`Error::Invalid`], a C error an
/// [`Error::Gpu`] with NVRTC's log.
///
/// ```no_run
/// use prefix_ops::scan::gpu::{self, UserOp};
/// let dev = cuda_kernels::Gpu::new(0)?;
/// // Running maximum of absolute values.
/// let op = UserOp::new("fmaxf(fabsf(a), fabsf(b))", "0.0f");
/// let mut xs = vec![1.0f32, -3.0, 2.0];
/// gpu::user_inclusive(&dev, &mut xs, &op)?;
/// assert_eq!(xs, [1.0, 3.0, 3.0]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserOp {
    /// C expression of `combine(a, b)`.
    pub combine: String,
    /// C expression of the identity.
    pub identity: String,
}

impl UserOp {
    /// An operator from its two expressions.
    pub fn new(combine: &str, identity: &str) -> UserOp {
        UserOp { combine: combine.to_string(), identity: identity.to_string() }
    }
}

/// The NVRTC source of `scan_user.cu` for operator `op` on the C type `c_name`: the three
/// macros the file expects, then the file. Each expression becomes the body of a one-line
/// `#define`, so a line break (or a NUL) in it is rejected rather than silently cutting the
/// macro; each is parenthesised so that `(HK_USER_T)(...)` casts the whole expression.
fn user_source(c_name: &str, op: &UserOp, base: &str) -> Result<String> {
    for (what, expr) in [("combine", &op.combine), ("identity", &op.identity)] {
        if expr.trim().is_empty() {
            return Err(Error::Invalid(format!("user operator: empty {what} expression")));
        }
        if let Some(c) = expr.chars().find(|c| c.is_control() && *c != '\t') {
            return Err(Error::Invalid(format!(
                "user operator: {what} expression `{expr}` contains the control character {c:?}"
            )));
        }
    }
    Ok(format!(
        "#define HK_USER_T {c_name}\n#define HK_USER_IDENTITY ({})\n#define HK_USER_COMBINE(a, b) ({})\n{base}",
        op.identity, op.combine
    ))
}

/// The module of `op` on `T`, through the runtime's generated modules: compiled once per device
/// and source (NVRTC's cubin for the device first, so no PTX-version mismatch with the driver),
/// kept in the on-disk module cache across processes, its kernels looked up once.
fn user_module<T: CudaType>(gpu: &Gpu, op: &UserOp) -> Result<Arc<cuda_kernels::Module>> {
    const NAME: &str = "prefix/scan_user";
    let base = cuda_kernels::embedded_modules()
        .iter()
        .find(|m| m.name == NAME)
        .ok_or_else(|| cuda_kernels::Error::UnknownModule(NAME.to_string()))?;
    let source = user_source(T::C_NAME, op, base.source)?;
    let label = format!("{NAME} ({} with combine `{}`, identity `{}`)", T::C_NAME, op.combine, op.identity);
    Ok(gpu.module_from_source(&label, &source)?)
}

/// Scans `src` into `dst` with a user-defined operator (look-back kernels; `layout` as for
/// built-in operators).
pub fn user_scan_into_device<T: CudaType>(
    gpu: &Gpu,
    src: &DeviceBuffer<T>,
    dst: &mut DeviceBuffer<T>,
    layout: Layout<'_>,
    op: &UserOp,
    exclusive: bool,
) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::LengthMismatch { what: "dst", got: dst.len(), expected: src.len() });
    }
    let n = src.len();
    rows_of(layout, n)?;
    if n == 0 {
        return Ok(());
    }
    let module = user_module::<T>(gpu, op)?;
    let (name, kernel) = match layout {
        Layout::Array => ("scan_user_lookback", Kernel::Lookback),
        Layout::Rows { .. } => ("scan_user_lookback_rows", Kernel::LookbackRows),
        Layout::Segments(_) => ("scan_user_lookback_seg", Kernel::LookbackRows),
    };
    let func = module.kernel(name)?.function().clone();
    let seg = upload_offsets(gpu, layout)?;
    let (s, _gs) = src.device_ptr(gpu.stream());
    let (d, _gd) = dst.device_ptr_mut(gpu.stream());
    launch(gpu, &func, kernel, Io { src: s, dst: d, n }, size_of::<T>(), layout, seg.as_ref(), exclusive)
}

/// Host convenience: in-place inclusive scan with a user-defined operator.
pub fn user_inclusive<T: CudaType>(gpu: &Gpu, data: &mut [T], op: &UserOp) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let src = gpu.upload(data)?;
    // SAFETY: the scan writes every position of dst before the download reads it.
    let mut dst = unsafe { gpu.stream().alloc::<T>(data.len()) }
        .map_err(|e| cuda_kernels::Error::from_alloc(e, std::mem::size_of_val(data)))?;
    user_scan_into_device(gpu, &src, &mut dst, Layout::Array, op, false)?;
    data.copy_from_slice(&gpu.download(&dst)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    //! CPU-side checks of what the host tells the kernels: scratch sizes against the C layout,
    //! entry-point names and parameter widths against the nvcc PTX, the NVRTC source of user ops.

    use super::*;
    use crate::scan::op::{Max, Min, Mul};

    /// The kernel's `Flagged<V>` as Rust lays out the same C struct.
    #[repr(C)]
    struct Flagged<V> {
        _v: V,
        _f: i32,
    }

    #[test]
    fn tile_values_have_the_kernel_layout() {
        assert_eq!(tile_value_bytes(4, false), 4);
        assert_eq!(tile_value_bytes(8, false), 8);
        assert_eq!(tile_value_bytes(4, true), size_of::<Flagged<f32>>());
        assert_eq!(tile_value_bytes(4, true), size_of::<Flagged<u32>>());
        assert_eq!(tile_value_bytes(8, true), size_of::<Flagged<f64>>());
        assert_eq!(tile_value_bytes(8, true), size_of::<Flagged<i64>>());
    }

    #[test]
    fn lookback_scratch_covers_every_tile() {
        // Tiles of 256 x 16 = 4096 (4-byte) and 256 x 8 = 2048 (8-byte) elements.
        assert_eq!(lookback_scratch(1, 4096, 4, false), (1, 4, 0));
        assert_eq!(lookback_scratch(4096, 4096, 4, false), (1, 4, 0));
        assert_eq!(lookback_scratch(4097, 4096, 4, true), (2, 3, 2 * 2 * 8));
        assert_eq!(lookback_scratch(2049, 2048, 8, false), (2, 3, 2 * 2 * 8));
        // The (value, head) pairs of 8-byte types are 16 bytes: a forced LookbackRows on one
        // f64 array needs twice the scratch of the plain look-back.
        assert_eq!(lookback_scratch(2049, 2048, 8, true), (2, 3, 2 * 2 * 16));
        assert_eq!(lookback_scratch(0, 2048, 8, true), (0, 1, 0));
        // A tuned tile of 128 x 4.
        assert_eq!(lookback_scratch(1025, 512, 4, false), (3, 8, 0));
    }

    /// Byte widths of the parameters of `.entry name(` in `ptx`, or None if there is no entry.
    fn ptx_params(ptx: &str, name: &str) -> Option<Vec<usize>> {
        let start = ptx.find(&format!(".entry {name}("))?;
        let list = &ptx[start..][..ptx[start..].find(')')?];
        Some(
            list.split(".param")
                .skip(1)
                .map(|p| {
                    let ty = p.split_whitespace().next().unwrap();
                    ty.trim_start_matches(|c: char| !c.is_ascii_digit()).parse::<usize>().unwrap() / 8
                })
                .collect(),
        )
    }

    fn module_ptx(name: &str) -> Option<&'static str> {
        cuda_kernels::embedded_modules().iter().find(|m| m.name == name).and_then(|m| m.ptx)
    }

    /// (in, out, n, row_len, offsets, n_offsets, status, values, exclusive) as `launch` pushes them.
    const LOOKBACK_ARGS: [usize; 9] = [8, 8, 8, 8, 8, 8, 8, 8, 4];
    /// (in, out, rows, row_len, exclusive).
    const ROWS_ARGS: [usize; 5] = [8, 8, 8, 8, 4];

    /// Every kernel `run_builtin` can name for `M` on `T` (segments too), against the PTX.
    fn check_entries<T: GpuScalar, M: BuiltinOp<T>>() {
        let layouts = [Layout::Array, Layout::Rows { row_len: 3 }];
        let kernels = [
            Kernel::Lookback,
            Kernel::LookbackRows,
            Kernel::RowsWarpSmall,
            Kernel::RowsWarpLarge,
            Kernel::RowsBlock,
        ];
        for layout in layouts {
            for kernel in kernels {
                let (module, name) = builtin_kernel_name::<T, M>(kernel, layout, Network::KoggeStone);
                let ptx = module_ptx(&module).unwrap();
                let want: &[usize] = if matches!(kernel, Kernel::Lookback | Kernel::LookbackRows) {
                    &LOOKBACK_ARGS
                } else {
                    &ROWS_ARGS
                };
                assert_eq!(ptx_params(ptx, &name).as_deref(), Some(want), "{module}: {name}");
            }
        }
        let name = format!("scan_lookback_seg_{}_{}", M::NAME, T::SUFFIX);
        let ptx = module_ptx(&format!("prefix/scan_segmented_{}", T::SUFFIX)).unwrap();
        assert_eq!(ptx_params(ptx, &name).as_deref(), Some(&LOOKBACK_ARGS[..]), "{name}");
        let name = format!("scan_scatter_{}", T::SUFFIX);
        // (x, pos, n, out, partition) as select_device pushes them.
        let ptx = module_ptx("prefix/scan_compact").unwrap();
        assert_eq!(ptx_params(ptx, &name).as_deref(), Some(&[8, 8, 8, 8, 4][..]), "{name}");
    }

    /// Calls `check::<T, Op>()` for every element type and built-in operator.
    macro_rules! for_every_type_and_op {
        ($check:ident) => {
            for_every_type_and_op!($check: i32, u32, i64, u64, f32, f64)
        };
        ($check:ident: $($t:ty),*) => {$(
            $check::<$t, Add>();
            $check::<$t, Mul>();
            $check::<$t, Min>();
            $check::<$t, Max>();
        )*};
    }

    /// The entry points of embedded module `name`, from its source (no nvcc or NVRTC needed).
    fn source_entries(name: &str) -> Vec<String> {
        let module = cuda_kernels::embedded_modules().iter().find(|m| m.name == name);
        let module = module.unwrap_or_else(|| panic!("no embedded module `{name}`"));
        module.entry_points().unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Every kernel `run_builtin` can name for `M` on `T` is in the module it is asked from,
    /// and that module is `T`'s alone: each of its entry points is a `T` kernel.
    fn check_modules<T: GpuScalar, M: BuiltinOp<T>>() {
        let kernels = [
            Kernel::Lookback,
            Kernel::LookbackRows,
            Kernel::RowsWarpSmall,
            Kernel::RowsWarpLarge,
            Kernel::RowsBlock,
        ];
        let layouts = [Layout::Array, Layout::Rows { row_len: 3 }, Layout::Segments(&[0, 3])];
        for layout in layouts {
            for kernel in kernels {
                let (module, name) = builtin_kernel_name::<T, M>(kernel, layout, Network::KoggeStone);
                let entries = source_entries(&module);
                assert!(entries.contains(&name), "{module} has no {name}: {entries:?}");
                let own = format!("_{}", T::SUFFIX);
                assert!(entries.iter().all(|e| e.ends_with(&own)), "{module} holds other types: {entries:?}");
                // Four operators per module, of three kernels each for the batched rows.
                let per_op = if module.starts_with("prefix/scan_batched_") { 3 } else { 1 };
                assert_eq!(entries.len(), 4 * per_op, "{module}: {entries:?}");
            }
        }
    }

    #[test]
    fn every_kernel_the_host_names_is_in_its_types_module() {
        for_every_type_and_op!(check_modules);
        let study = source_entries(NETWORKS_MODULE);
        for net in [Network::Sklansky, Network::LadnerFischer, Network::KoggeStone] {
            for kernel in [Kernel::Lookback, Kernel::RowsWarpLarge] {
                let (module, name) = builtin_kernel_name::<f32, Add>(kernel, Layout::Array, net);
                if net == Network::KoggeStone {
                    assert!(module.ends_with("_f32") && module != NETWORKS_MODULE, "{module}");
                } else {
                    assert_eq!(module, NETWORKS_MODULE);
                    assert!(study.contains(&name), "{name}: {study:?}");
                }
            }
        }
        assert_eq!(study.len(), 6, "{study:?}");
        let compact = source_entries("prefix/scan_compact");
        for ty in ["i32", "u32", "f32", "i64", "u64", "f64"] {
            assert!(compact.contains(&format!("scan_scatter_{ty}")), "{compact:?}");
        }
    }

    #[test]
    fn every_kernel_the_host_names_exists_with_its_parameter_widths() {
        if !cuda_kernels::nvcc_ptx_embedded() {
            println!("SKIPPED: no nvcc PTX in this build");
            return;
        }
        for_every_type_and_op!(check_entries);
        for net in [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer] {
            for kernel in [Kernel::Lookback, Kernel::RowsWarpLarge] {
                let (module, name) = builtin_kernel_name::<f32, Add>(kernel, Layout::Array, net);
                let want: &[usize] = if kernel == Kernel::Lookback { &LOOKBACK_ARGS } else { &ROWS_ARGS };
                assert_eq!(ptx_params(module_ptx(&module).unwrap(), &name).as_deref(), Some(want), "{name}");
            }
        }
        let user = module_ptx("prefix/scan_user").unwrap();
        for name in ["scan_user_lookback", "scan_user_lookback_rows", "scan_user_lookback_seg"] {
            assert_eq!(ptx_params(user, name).as_deref(), Some(&LOOKBACK_ARGS[..]), "{name}");
        }
    }

    #[test]
    fn user_source_defines_the_operator_and_rejects_broken_expressions() {
        let op = UserOp::new("fmaxf(a, b)", "-1.0f / 0.0f");
        let src = user_source("float", &op, "BODY").unwrap();
        assert_eq!(
            src,
            "#define HK_USER_T float\n#define HK_USER_IDENTITY (-1.0f / 0.0f)\n\
             #define HK_USER_COMBINE(a, b) (fmaxf(a, b))\nBODY"
        );
        for (combine, identity) in
            [("a +\n b", "0"), ("a + b", "0\r"), ("a\0", "0"), ("a + b", " "), ("", "0")]
        {
            let bad = UserOp::new(combine, identity);
            assert!(matches!(user_source("int", &bad, ""), Err(Error::Invalid(_))), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod nvrtc_tests {
    use super::*;

    /// The generated user-operator source compiles with NVRTC for every element type the host
    /// accepts (the C type names, the shuffles and cache-bypassing loads of each width).
    #[test]
    fn user_source_compiles_for_every_type() {
        if !cuda_kernels::nvrtc_present() {
            println!("SKIPPED user_source_compiles_for_every_type: no libnvrtc");
            return;
        }
        let base = cuda_kernels::embedded_modules().iter().find(|m| m.name == "prefix/scan_user").unwrap();
        let op = UserOp::new("b > a ? b : a", "0");
        for c_name in [f32::C_NAME, f64::C_NAME, i32::C_NAME, u32::C_NAME, i64::C_NAME, u64::C_NAME] {
            let src = user_source(c_name, &op, base.source).unwrap();
            let ptx =
                cuda_kernels::nvrtc_compile_ptx("scan_user", &src, (8, 0)).unwrap_or_else(|e| panic!("{e}"));
            let text = ptx.to_src();
            for entry in ["scan_user_lookback", "scan_user_lookback_rows", "scan_user_lookback_seg"] {
                assert!(text.contains(&format!(".entry {entry}(")), "{c_name}: no {entry}");
            }
        }
    }
}
