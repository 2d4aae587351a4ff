//! The GPU sorts: block-level bitonic merge comb sort for rows and short segments, merge-path
//! merges across blocks for long segments and whole arrays.
//!
//! Kernels: `cuda-kernels/prefix/sort_bmcs.cu` over `bitonic_network.cuh` (the schedule is
//! described there and modelled by [`super::emulate`]). A row of up to [`max_block_len`] keys
//! is sorted by one block: four consecutive keys per thread (32 per thread as eight virtual
//! threads above 4096 keys), rows padded to a power of two with the order's maximum key,
//! several rows per block when rows are short. Longer segments are cut into block-sorted runs
//! and merged pairwise by merge path, doubling the run width per pass.
//!
//! Buffers stay on the device; offsets are given on the host (they are validated there and
//! binned by size class, one launch per class).
//!
//! Every key-value sort is stable, as on the CPU.

use cuda_kernels::{DeviceBuffer, DeviceProps, Gpu, LaunchConfig, PushKernelArg};

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{self as tuned_dispatch, Bucket, Tunable};
use hetero_sched::tune::{Config, Fingerprint, Param, Space, Value};

use super::key::{SortKey, SortValue};
use super::{Order, check_offsets, check_rows};
use crate::error::{Error, Result};

/// The GPU row sort's name in the tuning cache.
pub const TUNING_KERNEL: &str = "prefix_ops::sort_gpu";

/// Parameters of the block kernel's launch shape, declared as a [`hetero_sched::tune`] space
/// (a run-time parameter). Tuned per device, key type, row length and row count for [`rows`]
/// (segments and whole arrays keep the default).
///
/// Keys per thread are not in the space: the 32-keys-per-thread kernels (`_vt8`) sort wrongly
/// below 2^13 keys (found by the tuner's verification on the emulator), so each row length has
/// one usable variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuSortTuning {
    /// Threads a block of short rows aims at (rows per block = this / threads per row).
    pub block_threads: u32,
}

impl GpuSortTuning {
    /// The provisional table: blocks of 256 threads.
    pub const DEFAULT: GpuSortTuning = GpuSortTuning { block_threads: TARGET_THREADS };
}

impl Default for GpuSortTuning {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Tuned per device, key type, row length and row count (shape: `(row_len, rows)`).
impl Tunable for GpuSortTuning {
    const KERNEL: &'static str = TUNING_KERNEL;
    type Shape = (usize, usize);

    /// `block_threads` in {64, 128, 256, 512, 1024}.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::ints("block_threads", &[64, 128, 256, 512, 1024]))
                .build()
                .expect("the GPU sort's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![("block_threads".into(), Value::Int(i64::from(self.block_threads)))])
    }

    /// `None` unless `block_threads` is a multiple of 32 up to 1024.
    fn from_config(c: &Config) -> Option<Self> {
        let block_threads = c.int("block_threads").and_then(|v| u32::try_from(v).ok());
        let block_threads = block_threads.filter(|t| t % 32 == 0 && (32..=1024).contains(t))?;
        Some(GpuSortTuning { block_threads })
    }

    fn bucket((row_len, rows): (usize, usize)) -> Option<Bucket> {
        (row_len > 4).then(|| Bucket::batch(row_len as u64, rows as u64))
    }
}

/// What [`rows`] uses for `rows` rows of `row_len` keys of `K` on `gpu`: the configuration
/// tuned for this device, key type and shape in the tuning cache, else the default.
pub fn row_tuning<K: SortKey>(gpu: &Gpu, row_len: usize, rows: usize) -> GpuSortTuning {
    GpuSortTuning::tuned_on::<K>(tuned_dispatch::global(), &Fingerprint::gpu(gpu), (row_len, rows))
}

const MODULE: &str = "prefix/sort_bmcs";
/// Dynamic shared memory a block gets without opting in.
const DEFAULT_SHARED: usize = 48 * 1024;
/// Largest row the kernels are instantiated for (2^15 keys: 1024 threads of 32 keys).
const MAX_LOG_N: u32 = 15;
/// Threads a block of short rows aims at (provisional, to be measured on an H100).
const TARGET_THREADS: u32 = 256;
/// Outputs per thread of the merge kernel (`ipt` in `sort_merge`).
const MERGE_PER_THREAD: usize = 8;

/// How one launch of the block kernel is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPlan {
    /// log2 of the padded row length.
    pub log_n: u32,
    /// Virtual threads per physical thread (1, or 8 above 4096 keys).
    pub vt: u32,
    /// Rows sorted by one block.
    pub rows_per_block: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block in bytes.
    pub shared_bytes: usize,
}

/// The GPU dispatcher for rows of `row_len` keys of `key_bytes` bytes (with `value_bytes` of
/// payload for key-value sorts): the block kernel's shape, or `None` when a row does not fit
/// one block and needs the merge path.
///
/// The table is provisional, from the occupancy reasoning of the thesis (§4.3), and is to be
/// measured on an H100: rows of up to 128 keys need no shared memory (registers and shuffles
/// only) and pack `256 / (n/4)` rows into a block; rows of 256..4096 keys take `n/4` threads
/// (at least 256); rows of 8192..32768 keys take eight virtual threads per thread. Shared
/// memory above 48 KiB is requested through the opt-in attribute (227 KiB on Hopper).
///
/// ```
/// # use prefix_ops::sort::gpu::plan_block;
/// let p = plan_block(32, 4, None, 227 * 1024).unwrap();
/// assert_eq!((p.log_n, p.rows_per_block, p.threads, p.shared_bytes), (5, 32, 256, 0));
/// let p = plan_block(4096, 4, None, 227 * 1024).unwrap();
/// assert_eq!((p.threads, p.shared_bytes), (1024, 16384));
/// assert!(plan_block(1 << 15, 8, Some(8), 227 * 1024).is_none());
/// ```
pub fn plan_block(
    row_len: usize,
    key_bytes: usize,
    value_bytes: Option<usize>,
    shared_limit: usize,
) -> Option<BlockPlan> {
    plan_block_with(row_len, key_bytes, value_bytes, shared_limit, &GpuSortTuning::DEFAULT)
}

/// [`plan_block`] under explicit tuning parameters.
pub fn plan_block_with(
    row_len: usize,
    key_bytes: usize,
    value_bytes: Option<usize>,
    shared_limit: usize,
    tuning: &GpuSortTuning,
) -> Option<BlockPlan> {
    // Checked before rounding up: next_power_of_two overflows above 2^63.
    if row_len > 1 << MAX_LOG_N {
        return None;
    }
    let log_n = row_len.max(4).next_power_of_two().trailing_zeros();
    let n = 1u32 << log_n;
    let vt = if log_n > 12 { 8 } else { 1 };
    let threads_per_row = n / 4 / vt;
    let mut rows_per_block = (tuning.block_threads.clamp(32, 1024) / threads_per_row).max(1);
    let per_key = key_bytes + value_bytes.map_or(0, |v| 4 + v);
    let uses_shared = log_n >= 8 || value_bytes.is_some();
    let bytes = |rpb: u32| if uses_shared { rpb as usize * n as usize * per_key } else { 0 };
    while rows_per_block > 1 && bytes(rows_per_block) > shared_limit {
        rows_per_block /= 2;
    }
    if bytes(rows_per_block) > shared_limit {
        return None;
    }
    Some(BlockPlan {
        log_n,
        vt,
        rows_per_block,
        threads: rows_per_block * threads_per_row,
        shared_bytes: bytes(rows_per_block),
    })
}

/// The longest row one block sorts on this device for this key (and value) width: 32768 `f32`
/// keys on an H100 (128 KiB of its 227 KiB), 8192 `f64` keys with `u64` values.
pub fn max_block_len(props: &DeviceProps, key_bytes: usize, value_bytes: Option<usize>) -> usize {
    max_len_for(key_bytes, value_bytes, shared_limit(props))
}

fn shared_limit(props: &DeviceProps) -> usize {
    props.shared_per_block_optin.max(props.shared_per_block).max(DEFAULT_SHARED.min(props.shared_per_block))
}

/// Sorts each row of `row_len` consecutive keys of `keys` on the GPU.
///
/// ```no_run
/// # use prefix_ops::sort::{gpu, Order};
/// let dev = cuda_kernels::Gpu::new(0)?;
/// let mut keys = dev.upload(&[3.0f32, 1.0, 2.0, 0.5, 9.0, 8.0])?;
/// gpu::rows(&dev, &mut keys, 3, Order::Ascending)?;
/// assert_eq!(dev.download(&keys)?, [1.0, 2.0, 3.0, 0.5, 8.0, 9.0]);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
pub fn rows<K: SortKey>(gpu: &Gpu, keys: &mut DeviceBuffer<K>, row_len: usize, order: Order) -> Result<()> {
    let tuning = row_tuning::<K>(gpu, row_len, keys.len() / row_len.max(1));
    rows_impl::<K, u32>(gpu, keys, None, row_len, order, &tuning)
}

/// [`rows`] under explicit tuning parameters, whatever the cache holds (what the tuner
/// measures).
pub fn rows_tuned<K: SortKey>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    row_len: usize,
    order: Order,
    tuning: &GpuSortTuning,
) -> Result<()> {
    if GpuSortTuning::from_config(&tuning.to_config()).is_none() {
        return Err(Error::Invalid(format!("sort: unusable GPU tuning {tuning:?}")));
    }
    rows_impl::<K, u32>(gpu, keys, None, row_len, order, tuning)
}

/// Sorts each row of `row_len` keys and moves `values` along; stable.
pub fn rows_by_key<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: &mut DeviceBuffer<V>,
    row_len: usize,
    order: Order,
) -> Result<()> {
    super::check_values(keys.len(), values.len())?;
    let tuning = row_tuning::<K>(gpu, row_len, keys.len() / row_len.max(1));
    rows_impl(gpu, keys, Some(values), row_len, order, &tuning)
}

/// Sorts each segment `keys[offsets[i]..offsets[i + 1]]` (offsets on the host).
pub fn segments<K: SortKey>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    offsets: &[usize],
    order: Order,
) -> Result<()> {
    segments_impl::<K, u32>(gpu, keys, None, offsets, order)
}

/// Sorts each segment of keys and moves `values` along; stable.
pub fn segments_by_key<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: &mut DeviceBuffer<V>,
    offsets: &[usize],
    order: Order,
) -> Result<()> {
    super::check_values(keys.len(), values.len())?;
    segments_impl(gpu, keys, Some(values), offsets, order)
}

/// Sorts the whole buffer: block runs, then merge-path merges across blocks.
pub fn whole<K: SortKey>(gpu: &Gpu, keys: &mut DeviceBuffer<K>, order: Order) -> Result<()> {
    let n = keys.len();
    segments_impl::<K, u32>(gpu, keys, None, &[0, n], order)
}

/// Sorts the whole buffer of keys and moves `values` along; stable.
pub fn whole_by_key<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: &mut DeviceBuffer<V>,
    order: Order,
) -> Result<()> {
    super::check_values(keys.len(), values.len())?;
    let n = keys.len();
    segments_impl(gpu, keys, Some(values), &[0, n], order)
}

fn rows_impl<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    mut values: Option<&mut DeviceBuffer<V>>,
    row_len: usize,
    order: Order,
    tuning: &GpuSortTuning,
) -> Result<()> {
    check_rows(keys.len(), row_len)?;
    let n = keys.len();
    if n == 0 || row_len <= 1 {
        return Ok(());
    }
    let vb = values.as_ref().map(|_| size_of::<V>());
    let _span = tracing::debug_span!("sort::gpu::rows", n, row_len).entered();
    match plan_block_with(row_len, size_of::<K>(), vb, shared_limit(gpu.props()), tuning) {
        Some(plan) => launch_rows(gpu, keys, values.as_deref_mut(), 0, n, row_len, plan, order),
        None => {
            let offsets: Vec<usize> = (0..=n / row_len).map(|r| r * row_len).collect();
            segments_impl(gpu, keys, values, &offsets, order)
        }
    }
}

fn segments_impl<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    mut values: Option<&mut DeviceBuffer<V>>,
    offsets: &[usize],
    order: Order,
) -> Result<()> {
    check_offsets(keys.len(), offsets)?;
    let vb = values.as_ref().map(|_| size_of::<V>());
    let limit = shared_limit(gpu.props());
    let _span =
        tracing::debug_span!("sort::gpu::segments", n = keys.len(), segments = offsets.len()).entered();
    // Bin segments by padded size class; longer ones go to the merge path.
    let mut classes: Vec<Vec<u32>> = vec![Vec::new(); MAX_LOG_N as usize + 1];
    let mut long = Vec::new();
    let max_short = max_len_for(size_of::<K>(), vb, limit);
    for (i, w) in offsets.windows(2).enumerate() {
        let len = w[1] - w[0];
        if len <= 1 {
            continue;
        }
        if len <= max_short {
            let seg = u32::try_from(i).map_err(|_| Error::Invalid("sort: more than 2^32 segments".into()))?;
            classes[len.max(4).next_power_of_two().trailing_zeros() as usize].push(seg);
        } else {
            long.push((w[0], len));
        }
    }
    if classes.iter().any(|c| !c.is_empty()) {
        let offs: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        let offs = gpu.upload(&offs)?;
        for (log_n, ids) in classes.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
            let plan = plan_block(1 << log_n, size_of::<K>(), vb, limit)
                .ok_or_else(|| Error::Invalid(format!("sort: no block plan for 2^{log_n} keys")))?;
            let ids_dev = gpu.upload(ids)?;
            launch_segs(gpu, keys, values.as_deref_mut(), &offs, &ids_dev, ids.len(), plan, order)?;
        }
    }
    if !long.is_empty() {
        let mut tmp_k = gpu.zeros::<K>(keys.len())?;
        let mut tmp_v = match &values {
            Some(v) => Some(gpu.zeros::<V>(v.len())?),
            None => None,
        };
        let run = plan_block(max_short, size_of::<K>(), vb, limit)
            .ok_or_else(|| Error::Invalid("sort: no block plan for the merge runs".into()))?;
        for (base, len) in long {
            sort_long(gpu, keys, values.as_deref_mut(), &mut tmp_k, tmp_v.as_mut(), base, len, run, order)?;
        }
    }
    Ok(())
}

fn max_len_for(key_bytes: usize, value_bytes: Option<usize>, limit: usize) -> usize {
    (2..=MAX_LOG_N)
        .rev()
        .map(|l| 1usize << l)
        .find(|&n| plan_block(n, key_bytes, value_bytes, limit).is_some())
        .unwrap_or(4)
}

/// One long segment: block-sorted runs of `2^run.log_n` keys, then merge passes ping-ponging
/// between the data and the scratch buffers, and a copy back when the result ends in scratch.
fn sort_long<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    mut values: Option<&mut DeviceBuffer<V>>,
    tmp_k: &mut DeviceBuffer<K>,
    mut tmp_v: Option<&mut DeviceBuffer<V>>,
    base: usize,
    len: usize,
    run: BlockPlan,
    order: Order,
) -> Result<()> {
    let width0 = 1usize << run.log_n;
    launch_rows(gpu, keys, values.as_deref_mut(), base, len, width0, run, order)?;
    let mut width = width0;
    let mut in_tmp = false;
    while width < len {
        if in_tmp {
            launch_merge(gpu, tmp_k, tmp_v.as_deref(), keys, values.as_deref_mut(), base, len, width, order)?;
        } else {
            launch_merge(gpu, keys, values.as_deref(), tmp_k, tmp_v.as_deref_mut(), base, len, width, order)?;
        }
        in_tmp = !in_tmp;
        width *= 2;
    }
    if in_tmp {
        let r = base..base + len;
        gpu.stream()
            .memcpy_dtod(&tmp_k.slice(r.clone()), &mut keys.slice_mut(r.clone()))
            .map_err(cuda_kernels::Error::from)?;
        if let (Some(v), Some(t)) = (values, tmp_v) {
            gpu.stream()
                .memcpy_dtod(&t.slice(r.clone()), &mut v.slice_mut(r))
                .map_err(cuda_kernels::Error::from)?;
        }
    }
    Ok(())
}

fn kernel_name<K: SortKey, V: SortValue>(kind: &str, vt: Option<u32>, pairs: bool) -> String {
    let vt = vt.map(|v| format!("_vt{v}")).unwrap_or_default();
    let v = if pairs { format!("_{}", V::SUFFIX) } else { String::new() };
    format!("sort_{kind}{vt}_{}{v}", K::SUFFIX)
}

fn block_function<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    kind: &str,
    plan: &BlockPlan,
    pairs: bool,
) -> Result<(cuda_kernels::CudaFunction, LaunchConfig)> {
    // Looked up once per process: attributes cached, dynamic shared memory limit already raised
    // to the device's maximum (setting it per call to one call's size would race between host
    // threads).
    let kernel = gpu.kernel(MODULE, &kernel_name::<K, V>(kind, Some(plan.vt), pairs))?;
    // The block kernels carry __launch_bounds__(1024); a block the loaded function cannot run
    // (too many registers per thread for this many threads) is an error here rather than a
    // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES from the launch.
    let max_threads = kernel.attributes().max_threads_per_block;
    if plan.threads > max_threads {
        return Err(Error::Invalid(format!(
            "sort: a block of {} threads exceeds the kernel's limit of {max_threads}",
            plan.threads
        )));
    }
    let func = kernel.function().clone();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (plan.threads, 1, 1),
        shared_mem_bytes: plan.shared_bytes as u32,
    };
    Ok((func, cfg))
}

/// Blocks for `rows` rows; gridDim.x is limited to 2^31 - 1.
fn grid(rows: usize, plan: &BlockPlan) -> Result<u32> {
    let blocks = rows.div_ceil(plan.rows_per_block as usize);
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::Invalid("sort: too many rows for one grid".into()))
}

/// Block kernel over uniform rows: `keys[base + r*row_len ..]`, `total` keys from `base`.
fn launch_rows<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: Option<&mut DeviceBuffer<V>>,
    base: usize,
    total: usize,
    row_len: usize,
    plan: BlockPlan,
    order: Order,
) -> Result<()> {
    let nrows = total.div_ceil(row_len);
    let (func, mut cfg) = block_function::<K, V>(gpu, "rows", &plan, values.is_some())?;
    cfg.grid_dim.0 = grid(nrows, &plan)?;
    let (base, total, row_len, nrows) = (base as u64, total as u64, row_len as u64, nrows as u64);
    let (log_n, rpb, desc) = (plan.log_n, plan.rows_per_block, order.is_descending() as u32);
    // SAFETY: sort_rows_vtV_K[_V](K* keys, [V* vals,] u64 base, u64 total, u64 row_len,
    // u64 nrows, u32 log_n, u32 rpb, u32 desc); rows cover keys[base .. base + total], inside
    // the buffers (checked by the callers), and the block shape is the plan's.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(keys);
            if let Some(v) = values {
                a.arg(v);
            }
            a.arg(&base).arg(&total).arg(&row_len).arg(&nrows).arg(&log_n).arg(&rpb).arg(&desc);
        })?
    };
    Ok(())
}

/// Block kernel over listed segments of one size class.
fn launch_segs<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: Option<&mut DeviceBuffer<V>>,
    offsets: &DeviceBuffer<u64>,
    ids: &DeviceBuffer<u32>,
    nrows: usize,
    plan: BlockPlan,
    order: Order,
) -> Result<()> {
    let (func, mut cfg) = block_function::<K, V>(gpu, "segs", &plan, values.is_some())?;
    cfg.grid_dim.0 = grid(nrows, &plan)?;
    let nrows = nrows as u64;
    let (log_n, rpb, desc) = (plan.log_n, plan.rows_per_block, order.is_descending() as u32);
    // SAFETY: sort_segs_vtV_K[_V](K* keys, [V* vals,] const u64* offsets, const u32* ids,
    // u64 nrows, u32 log_n, u32 rpb, u32 desc); the offsets were validated against the keys'
    // length and every listed segment has at most 2^log_n keys.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(keys);
            if let Some(v) = values {
                a.arg(v);
            }
            a.arg(offsets).arg(ids).arg(&nrows).arg(&log_n).arg(&rpb).arg(&desc);
        })?
    };
    Ok(())
}

/// One merge pass over `[base, base + n)`: runs of `width` from `src` merged into `dst`.
fn launch_merge<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    src: &DeviceBuffer<K>,
    src_v: Option<&DeviceBuffer<V>>,
    dst: &mut DeviceBuffer<K>,
    dst_v: Option<&mut DeviceBuffer<V>>,
    base: usize,
    n: usize,
    width: usize,
    order: Order,
) -> Result<()> {
    let pairs = src_v.is_some() && dst_v.is_some();
    let func = gpu.function(MODULE, &kernel_name::<K, V>("merge", None, pairs))?;
    let threads = 256;
    let cfg = LaunchConfig {
        grid_dim: (gpu.grid_for(n.div_ceil(MERGE_PER_THREAD), threads), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };
    let (base, n, width, desc) = (base as u64, n as u64, width as u64, order.is_descending() as u32);
    // SAFETY: sort_merge_K[_V](const K* src, [const V* src_vals,] K* dst, [V* dst_vals,]
    // u64 base, u64 n, u64 width, u32 desc); src and dst (and the value buffers) all hold at
    // least base + n elements.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(src);
            if let (Some(sv), true) = (src_v, pairs) {
                a.arg(sv);
            }
            a.arg(dst);
            if let (Some(dv), true) = (dst_v, pairs) {
                a.arg(dv);
            }
            a.arg(&base).arg(&n).arg(&width).arg(&desc);
        })?
    };
    Ok(())
}
