//! The GPU sorts: block-level bitonic merge comb sort for rows and short segments, an
//! onesweep-style LSD radix sort for long segments and whole arrays.
//!
//! Kernels: `cuda-kernels/prefix/sort_bmcs.cuh` over `bitonic_network.cuh` (the schedule is
//! described there and modelled by [`super::emulate`]) and `cuda-kernels/prefix/sort_radix.cuh`,
//! one module per key type (`sort_bmcs_K.cu`, `sort_radix_K.cu`: a first sort compiles 6 and 4
//! entry points, not 36 and 24). A row of up to [`max_block_len`] keys is sorted by one block:
//! the row is staged in shared memory (coalesced loads and stores), padded there to a power of
//! two with the order's maximum key (groups of compare-exchanges wholly in the padding are
//! skipped: [`super::emulate::bmcs_work`]), and sorted by up to 1024
//! threads that each take groups of four keys in turn, so a thread never holds more than four
//! keys (no spills at any row length); several rows share a block when rows are short. Longer
//! segments are radix sorted, all of them by one launch sequence: a histogram of every digit,
//! then one pass per 8-bit digit that reads and writes each key once (decoupled look-back
//! across the tiles of a segment), about 9 passes over 32-bit keys against 28 for pairwise
//! merging of 2^15-key runs (the byte model is [`SegmentPlan::bytes`]).
//!
//! Buffers stay on the device; offsets are given on the host (they are validated there and
//! binned by size class into one uploaded plan, one launch per class: [`plan_segments`]).
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
/// Keys per thread are not a parameter: a row's threads take its groups of four keys in turn,
/// so one kernel serves every row length.
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

/// The block-sort module of key type `K` (`cuda-kernels/prefix/sort_bmcs_K.cu`).
fn block_module<K: SortKey>() -> String {
    format!("prefix/sort_bmcs_{}", K::SUFFIX)
}
/// Dynamic shared memory a block gets without opting in.
const DEFAULT_SHARED: usize = 48 * 1024;
/// Largest row the kernels are instantiated for (2^15 keys: 1024 threads of 32 keys).
const MAX_LOG_N: u32 = 15;
/// Threads a block of short rows aims at (provisional, to be measured on an H100).
const TARGET_THREADS: u32 = 256;
/// Most threads one row takes (a block's limit).
const MAX_ROW_THREADS: u32 = 1024;

thread_local! {
    /// Kernel launches and host-to-device copies of sorts made on this thread (see
    /// [`launch_counts`]).
    static COUNTS: std::cell::Cell<LaunchCounts> = const { std::cell::Cell::new(LaunchCounts { launches: 0, uploads: 0 }) };
}

/// Kernel launches and host-to-device uploads made by the GPU sorts, counted per host thread
/// (a sort launches on the thread that calls it), so a test can count one call's launches
/// whatever other threads do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaunchCounts {
    /// Kernel launches.
    pub launches: u64,
    /// Host-to-device copies (plans of segmented sorts).
    pub uploads: u64,
}

/// The launches and uploads made by GPU sorts on this thread so far.
pub fn launch_counts() -> LaunchCounts {
    COUNTS.with(|c| c.get())
}

fn count(launches: u64, uploads: u64) {
    COUNTS.with(|c| {
        let mut v = c.get();
        v.launches += launches;
        v.uploads += uploads;
        c.set(v);
    });
}

/// How one launch of the block kernel is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPlan {
    /// log2 of the padded row length.
    pub log_n: u32,
    /// Threads sorting one row: `n / 4` up to 1024 (each takes `n / (4 * threads_per_row)`
    /// groups of four keys in turn).
    pub threads_per_row: u32,
    /// Rows sorted by one block.
    pub rows_per_block: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block in bytes.
    pub shared_bytes: usize,
}

/// The GPU dispatcher for rows of `row_len` keys of `key_bytes` bytes (with `value_bytes` of
/// payload for key-value sorts): the block kernel's shape, or `None` when a row does not fit
/// one block and needs the radix path.
///
/// The table is provisional, from the occupancy reasoning of the thesis (§4.3), and is to be
/// measured on an H100: a row of `n` keys takes `min(n/4, 1024)` threads, short rows pack
/// `256 / (n/4)` to a block; every row is staged in shared memory (`n` keys, plus tags and
/// values for key-value sorts), which costs 4 KiB for a block of 256 threads of short `u32`
/// rows. Shared memory above 48 KiB is requested through the opt-in attribute (227 KiB on
/// Hopper).
///
/// ```
/// # use prefix_ops::sort::gpu::plan_block;
/// let p = plan_block(32, 4, None, 227 * 1024).unwrap();
/// assert_eq!((p.log_n, p.rows_per_block, p.threads, p.shared_bytes), (5, 32, 256, 4096));
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
    let threads_per_row = (n / 4).min(MAX_ROW_THREADS);
    let mut rows_per_block = (tuning.block_threads.clamp(32, 1024) / threads_per_row).max(1);
    let per_key = key_bytes + value_bytes.map_or(0, |v| 4 + v);
    let bytes = |rpb: u32| rpb as usize * n as usize * per_key;
    while rows_per_block > 1 && bytes(rows_per_block) > shared_limit {
        rows_per_block /= 2;
    }
    if bytes(rows_per_block) > shared_limit {
        return None;
    }
    Some(BlockPlan {
        log_n,
        threads_per_row,
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

/// Sorts the whole buffer: one block when it fits, else the radix sort.
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

/// How one segmented sort is launched: one upload ([`SegmentPlan::words`]) and one block-kernel
/// launch per size class for the segments that fit a block, one radix launch sequence for all
/// longer ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlan {
    /// The one buffer uploaded: the offsets (`segments + 1` words), then the ids of the
    /// block-sorted segments grouped by size class.
    pub words: Vec<u64>,
    /// One block-kernel launch per non-empty size class: its shape, where its ids start in
    /// `words` and how many segments it sorts.
    pub classes: Vec<ClassLaunch>,
    /// Segments longer than a block row, as `(begin, len)`, all sorted by one radix launch
    /// sequence.
    pub long: Vec<(usize, usize)>,
    /// Where the radix sort's tables start in `words`, when there are long segments.
    pub radix: Option<RadixLayout>,
}

/// The radix sort's part of a [`SegmentPlan`]'s words: three words per long segment (begin,
/// end, first tile) from `segs_at`, then the segment of each tile from `tiles_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RadixLayout {
    /// Index in the words of the segment table.
    pub segs_at: usize,
    /// Index in the words of the tile-to-segment map.
    pub tiles_at: usize,
    /// Tiles over all long segments.
    pub tiles: usize,
    /// Keys per tile (`radix_tile_keys`).
    pub tile_keys: usize,
}

/// Keys per tile of the radix pass kernel: 256 threads of 16 4-byte or 8 8-byte keys
/// (`RadixShape` in `sort_radix.cuh`).
pub fn radix_tile_keys(key_bytes: usize) -> usize {
    if key_bytes <= 4 { 4096 } else { 2048 }
}

/// One launch of the block kernel over the segments of one size class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassLaunch {
    /// The block shape (every segment of the class pads to `2^plan.log_n` keys in shared memory).
    pub plan: BlockPlan,
    /// Index in [`SegmentPlan::words`] of the class's first segment id.
    pub ids_at: usize,
    /// Segments in the class.
    pub rows: usize,
}

/// The launch plan of a segmented sort of keys of `key_bytes` (values of `value_bytes`) under
/// `offsets` (already validated) for a block shared-memory limit of `shared_limit` bytes.
/// Segments of 0 or 1 keys are skipped.
///
/// ```
/// # use prefix_ops::sort::gpu::plan_segments;
/// let p = plan_segments(&[0, 3, 4, 10, 210, 100_210], 4, None, 227 * 1024).unwrap();
/// assert_eq!(p.classes.len(), 3); // 3 keys (pad 4), 6 (pad 8), 200 (pad 256)
/// assert_eq!(p.long, [(210, 100_000)]);
/// assert_eq!(&p.words[..6], &[0, 3, 4, 10, 210, 100_210]);
/// ```
pub fn plan_segments(
    offsets: &[usize],
    key_bytes: usize,
    value_bytes: Option<usize>,
    shared_limit: usize,
) -> Result<SegmentPlan> {
    let mut classes: Vec<Vec<u64>> = vec![Vec::new(); MAX_LOG_N as usize + 1];
    let mut long = Vec::new();
    let max_short = max_len_for(key_bytes, value_bytes, shared_limit);
    for (i, w) in offsets.windows(2).enumerate() {
        let len = w[1] - w[0];
        if len <= 1 {
            continue;
        }
        if len <= max_short {
            classes[len.max(4).next_power_of_two().trailing_zeros() as usize].push(i as u64);
        } else {
            long.push((w[0], len));
        }
    }
    let mut words: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
    let mut launches = Vec::new();
    for (log_n, ids) in classes.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
        let plan = plan_block(1 << log_n, key_bytes, value_bytes, shared_limit)
            .ok_or_else(|| Error::Invalid(format!("sort: no block plan for 2^{log_n} keys")))?;
        launches.push(ClassLaunch { plan, ids_at: words.len(), rows: ids.len() });
        words.extend_from_slice(ids);
    }
    let radix = (!long.is_empty()).then(|| {
        let tile_keys = radix_tile_keys(key_bytes);
        let segs_at = words.len();
        let mut tiles = 0usize;
        for &(begin, len) in &long {
            words.extend_from_slice(&[begin as u64, (begin + len) as u64, tiles as u64]);
            tiles += len.div_ceil(tile_keys);
        }
        let tiles_at = words.len();
        for (j, &(_, len)) in long.iter().enumerate() {
            words.extend(std::iter::repeat_n(j as u64, len.div_ceil(tile_keys)));
        }
        RadixLayout { segs_at, tiles_at, tiles, tile_keys }
    });
    Ok(SegmentPlan { words, classes: launches, long, radix })
}

/// Bytes a sort moves through device memory against its floor, by the launch plan: what the
/// book's tables list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ByteModel {
    /// Bytes read and written by the kernels (keys, values, histograms, look-back words, the
    /// zeroing of the radix tables).
    pub moved: u64,
    /// Reading every key (and value) to be sorted once and writing it once.
    pub floor: u64,
    /// Kernel launches and memsets.
    pub launches: u64,
    /// Host-to-device uploads (the plan).
    pub uploads: u64,
}

impl SegmentPlan {
    /// The device-memory traffic of this plan for keys of `key_bytes` (values of
    /// `value_bytes`): a block-sorted segment is read and written once (its padding lives in
    /// shared memory only); a long segment is read by the histogram and read and written by
    /// each of `key_bytes` digit passes; the radix tables are zeroed once, every tile writes one
    /// look-back word per digit and pass and reads at least its predecessor's.
    pub fn bytes(&self, key_bytes: usize, value_bytes: Option<usize>) -> ByteModel {
        let (kb, vb) = (key_bytes as u64, value_bytes.unwrap_or(0) as u64);
        let seg_len = |i: usize| self.words[i + 1] - self.words[i];
        let mut short = 0u64;
        for c in &self.classes {
            for &id in &self.words[c.ids_at..c.ids_at + c.rows] {
                short += seg_len(id as usize);
            }
        }
        let long: u64 = self.long.iter().map(|&(_, l)| l as u64).sum();
        let passes = key_bytes as u64;
        let mut m = ByteModel {
            moved: 2 * short * (kb + vb),
            floor: 2 * (short + long) * (kb + vb),
            launches: self.classes.len() as u64,
            uploads: u64::from(!self.classes.is_empty() || self.radix.is_some()),
        };
        if let Some(r) = &self.radix {
            let tables = self.long.len() as u64 * passes * 256 * 8 + passes * 8 + r.tiles as u64 * 256 * 8;
            let lookback = r.tiles as u64 * 256 * 8 * 2;
            m.moved += long * kb + passes * (2 * long * (kb + vb) + lookback) + tables;
            m.launches += 2 + passes;
        }
        m
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
    let plan = plan_segments(offsets, size_of::<K>(), vb, limit)?;
    if plan.classes.is_empty() && plan.radix.is_none() {
        return Ok(());
    }
    let words = gpu.upload(&plan.words)?;
    count(0, 1);
    for class in &plan.classes {
        launch_segs(gpu, keys, values.as_deref_mut(), &words, class, order)?;
    }
    if let Some(layout) = &plan.radix {
        radix_long(gpu, keys, values, &words, layout, plan.long.len(), order)?;
    }
    Ok(())
}

/// A device buffer of `len` elements left uninitialised (the callers write every element they
/// read).
fn scratch<T: cuda_kernels::GpuScalar>(gpu: &Gpu, len: usize) -> Result<DeviceBuffer<T>> {
    if len == 0 {
        return Ok(gpu.zeros(0)?);
    }
    // SAFETY: the buffer is only read where a kernel of this module wrote it first (a radix
    // pass reads what the previous pass wrote).
    unsafe { gpu.stream().alloc::<T>(len) }
        .map_err(|e| Error::from(cuda_kernels::Error::from_alloc(e, len * size_of::<T>())))
}

fn max_len_for(key_bytes: usize, value_bytes: Option<usize>, limit: usize) -> usize {
    (2..=MAX_LOG_N)
        .rev()
        .map(|l| 1usize << l)
        .find(|&n| plan_block(n, key_bytes, value_bytes, limit).is_some())
        .unwrap_or(4)
}

/// The radix module of key type `K` (`cuda-kernels/prefix/sort_radix_K.cu`).
fn radix_module<K: SortKey>() -> String {
    format!("prefix/sort_radix_{}", K::SUFFIX)
}
/// Threads of a radix block (`HK_RADIX_THREADS`).
const RADIX_THREADS: u32 = 256;
/// Histogram blocks per multiprocessor: enough to fill the device, few enough that the global
/// histogram takes few atomics.
const HIST_BLOCKS_PER_SM: usize = 4;

/// Every long segment of the plan by one LSD radix launch sequence: one zeroing of the tables,
/// one histogram launch, one launch per 8-bit digit, ping-ponging between the data and a
/// scratch buffer (an even number of passes: the result lands in the data).
fn radix_long<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    mut values: Option<&mut DeviceBuffer<V>>,
    words: &DeviceBuffer<u64>,
    layout: &RadixLayout,
    segments: usize,
    order: Order,
) -> Result<()> {
    let passes = size_of::<K>() as u32;
    let pairs = values.is_some();
    let hist_len = segments * passes as usize * 256;
    // Histograms, one tile counter per pass, and the look-back words: zeroed once per call (the
    // words carry their pass, so the passes need no zeroing between them).
    let mut tables = gpu.zeros::<u64>(hist_len + passes as usize + layout.tiles * 256)?;
    count(1, 0);
    let (mut hist, mut lookback) = tables.split_at_mut(hist_len);
    let (segs_at, tiles_at, ntiles) = (layout.segs_at as u64, layout.tiles_at as u64, layout.tiles as u64);
    let desc = order.is_descending() as u32;

    let hist_kernel = gpu.kernel(&radix_module::<K>(), &format!("sort_radix_hist_{}", K::SUFFIX))?;
    let blocks = (gpu.props().sm_count.max(1) as usize * HIST_BLOCKS_PER_SM).min(layout.tiles);
    let per_block = layout.tiles.div_ceil(blocks);
    let cfg = LaunchConfig {
        grid_dim: (grid_blocks(layout.tiles.div_ceil(per_block))?, 1, 1),
        block_dim: (RADIX_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let per_block = per_block as u32;
    // SAFETY: sort_radix_hist_K(const K* keys, const u64* plan, u64 segs_at, u64 tiles_at,
    // u64 ntiles, u32 tiles_per_block, u32 desc, u64* hist); the plan's tables describe tiles
    // inside the keys (offsets validated) and hist holds segments * passes * 256 words.
    unsafe {
        gpu.launch(&hist_kernel, cfg, |a| {
            a.arg(&*keys).arg(words).arg(&segs_at).arg(&tiles_at).arg(&ntiles).arg(&per_block).arg(&desc);
            a.arg(&mut hist);
        })?
    };
    count(1, 0);

    let pass_kernel = gpu.kernel(&radix_module::<K>(), &kernel_name::<K, V>("radix_pass", pairs))?;
    let smem = layout.tile_keys * (size_of::<K>() + if pairs { size_of::<V>() } else { 0 });
    let cfg = LaunchConfig {
        grid_dim: (grid_blocks(layout.tiles)?, 1, 1),
        block_dim: (RADIX_THREADS, 1, 1),
        shared_mem_bytes: smem as u32,
    };
    pass_kernel.check(&cfg)?;
    // Scratch for the odd passes: every key of the long segments is written before it is read.
    let mut tmp_k = scratch::<K>(gpu, keys.len())?;
    let mut tmp_v = match &values {
        Some(v) => Some(scratch::<V>(gpu, v.len())?),
        None => None,
    };
    for pass in 0..passes {
        let forward = pass % 2 == 0;
        // SAFETY: sort_radix_pass_K[_V](const K* src, K* dst, [const V* src_vals, V* dst_vals,]
        // const u64* plan, u64 segs_at, u64 tiles_at, u64 ntiles, const u64* hist,
        // u64* lookback, u32 pass, u32 desc); src and dst (and the value buffers) have the
        // keys' length, the tables are as for the histogram, lookback holds passes + tiles *
        // 256 words, and one block per tile.
        unsafe {
            gpu.launch(&pass_kernel, cfg, |a| {
                if forward {
                    a.arg(&*keys).arg(&mut tmp_k);
                } else {
                    a.arg(&tmp_k).arg(&mut *keys);
                }
                if let (Some(v), Some(t)) = (values.as_deref_mut(), tmp_v.as_mut()) {
                    if forward {
                        a.arg(&*v).arg(t);
                    } else {
                        a.arg(&*t).arg(v);
                    }
                }
                a.arg(words).arg(&segs_at).arg(&tiles_at).arg(&ntiles).arg(&mut hist).arg(&mut lookback);
                a.arg(&pass).arg(&desc);
            })?
        };
        count(1, 0);
    }
    Ok(())
}

/// A grid of `blocks` blocks (gridDim.x is limited to 2^31 - 1).
fn grid_blocks(blocks: usize) -> Result<u32> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::Invalid("sort: too many blocks for one grid".into()))
}

fn kernel_name<K: SortKey, V: SortValue>(kind: &str, pairs: bool) -> String {
    let v = if pairs { format!("_{}", V::SUFFIX) } else { String::new() };
    format!("sort_{kind}_{}{v}", K::SUFFIX)
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
    let kernel = gpu.kernel(&block_module::<K>(), &kernel_name::<K, V>(kind, pairs))?;
    // The block kernels carry __launch_bounds__(1024); a block the loaded function cannot run
    // is an error here rather than a CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES from the launch.
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
    grid_blocks(rows.div_ceil(plan.rows_per_block as usize))
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
    // SAFETY: sort_rows_K[_V](K* keys, [V* vals,] u64 base, u64 total, u64 row_len,
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
    count(1, 0);
    Ok(())
}

/// Block kernel over the segments of one size class, listed in the uploaded plan.
fn launch_segs<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: Option<&mut DeviceBuffer<V>>,
    words: &DeviceBuffer<u64>,
    class: &ClassLaunch,
    order: Order,
) -> Result<()> {
    let plan = class.plan;
    let (func, mut cfg) = block_function::<K, V>(gpu, "segs", &plan, values.is_some())?;
    cfg.grid_dim.0 = grid(class.rows, &plan)?;
    let (ids_at, nrows) = (class.ids_at as u64, class.rows as u64);
    let (log_n, rpb, desc) = (plan.log_n, plan.rows_per_block, order.is_descending() as u32);
    // SAFETY: sort_segs_K[_V](K* keys, [V* vals,] const u64* plan, u64 ids_at, u64 nrows,
    // u32 log_n, u32 rpb, u32 desc); the plan holds the offsets (validated against the keys'
    // length) and, from ids_at, nrows segment ids of at most 2^log_n keys each.
    unsafe {
        gpu.launch(&func, cfg, |a| {
            a.arg(keys);
            if let Some(v) = values {
                a.arg(v);
            }
            a.arg(words).arg(&ids_at).arg(&nrows).arg(&log_n).arg(&rpb).arg(&desc);
        })?
    };
    count(1, 0);
    Ok(())
}
