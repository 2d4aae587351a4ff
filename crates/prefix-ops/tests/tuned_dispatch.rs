//! Dispatch consults the tuning cache: a stored configuration changes the path the scan takes
//! and the parameters the sort plans with; a stored configuration outside the kernel's space is
//! ignored for the default.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup, once, by `setup`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use hetero_sched::tune::{
    CacheKey, Config, Fingerprint, Measured, Outcome, Param, Space, TuningCache, size_bucket,
};
use prefix_ops::scan::{self, Monoid, ScanTuning};
use prefix_ops::sort::{self, Order, SortTuning};

/// The temporary cache every test of this binary stores into.
fn setup() -> &'static TuningCache {
    static CACHE: OnceLock<(tempfile::TempDir, TuningCache)> = OnceLock::new();
    &CACHE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            // SAFETY: runs once, before any lookup and before this binary's tests spawn threads
            // that read the environment (every test calls `setup` first, under the OnceLock).
            unsafe {
                std::env::set_var(hetero_sched::tune::CACHE_DIR_ENV, dir.path());
                std::env::remove_var(hetero_sched::tune::dispatch::NO_CACHE_ENV);
            }
            let cache = TuningCache::at(dir.path());
            store_all(&cache);
            (dir, cache)
        })
        .1
}

fn store(cache: &TuningCache, kernel: &str, ty: &str, n: usize, space: &Space, config: Config) {
    let key = CacheKey::new(kernel, &Fingerprint::cpu(), ty, &size_bucket(n as u64));
    let m = Measured { config, times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
    cache.store(&key, space, &[m]).unwrap();
}

const N: usize = 1 << 18;

/// Stored before the first lookup: a tuned scan for `u64` (one thread up to 2^24), a stored
/// scan configuration outside the space for `i64`, a tuned sort for `f32` rows of 1000.
fn store_all(cache: &TuningCache) {
    let single = ScanTuning { par_threshold: 1 << 24, tile_bytes: 64 << 10 };
    store(cache, scan::TUNING_KERNEL, "u64", N, ScanTuning::space(), single.to_config());
    // par_threshold 3 is not a power of two: a wider space stores it, the scan's space rejects it.
    let wide = Space::builder()
        .param(Param::ints("par_threshold", &[3]))
        .param(Param::pow2("tile_bytes", 16 << 10, 4 << 20))
        .build()
        .unwrap();
    let bad = ScanTuning { par_threshold: 3, tile_bytes: 64 << 10 };
    store(cache, scan::TUNING_KERNEL, "i64", N, &wide, bad.to_config());
    store(cache, sort::TUNING_KERNEL, "f32", 1000, SortTuning::space(), TUNED_SORT.to_config());
}

const TUNED_SORT: SortTuning = SortTuning { network_max_len: 8, radix_row_min: 64, radix_par_min: 1 << 20 };

static COMBINES: AtomicUsize = AtomicUsize::new(0);

/// Wrapping addition that counts its `combine` calls: the single-thread and the chained scan
/// call it a different number of times for the same input.
#[derive(Clone, Copy)]
struct CountingAdd;

macro_rules! counting_add {
    ($($t:ty),*) => {$(
        impl Monoid<$t> for CountingAdd {
            fn identity(&self) -> $t {
                0
            }
            fn combine(&self, a: $t, b: $t) -> $t {
                COMBINES.fetch_add(1, Ordering::Relaxed);
                a.wrapping_add(b)
            }
        }
    )*};
}
counting_add!(u64, i64);

/// Combines of one inclusive scan of `N` ones on two threads, and its result (checked against a
/// sequential loop).
fn combines<T>(scan_it: impl Fn(&mut [T]) + Send + Sync) -> usize
where
    T: Copy + Send + Sync + From<u8> + PartialEq + std::fmt::Debug + std::ops::Add<Output = T>,
{
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let mut xs = vec![T::from(1u8); N];
        COMBINES.store(0, Ordering::Relaxed);
        scan_it(&mut xs);
        let count = COMBINES.load(Ordering::Relaxed);
        let mut acc = T::from(0u8);
        for (i, x) in xs.iter().enumerate() {
            acc = acc + T::from(1u8);
            assert_eq!(*x, acc, "element {i}");
        }
        count
    })
}

#[test]
fn a_stored_scan_configuration_changes_the_path() {
    setup();
    let tuned = ScanTuning::for_len::<u64>(N);
    assert_eq!(tuned, ScanTuning { par_threshold: 1 << 24, tile_bytes: 64 << 10 });
    let by_dispatch = combines::<u64>(|xs| scan::inclusive(xs, CountingAdd));
    let single = combines::<u64>(|xs| scan::inclusive_with(xs, CountingAdd, &tuned));
    let chained = combines::<u64>(|xs| scan::inclusive_with(xs, CountingAdd, &ScanTuning::DEFAULT));
    assert_ne!(single, chained, "the two paths must be distinguishable");
    assert_eq!(by_dispatch, single, "dispatch must take the stored (single-thread) path");
}

#[test]
fn an_invalid_stored_scan_configuration_falls_back_to_the_default() {
    setup();
    assert_eq!(ScanTuning::for_len::<i64>(N), ScanTuning::DEFAULT);
    let by_dispatch = combines::<i64>(|xs| scan::inclusive(xs, CountingAdd));
    let default = combines::<i64>(|xs| scan::inclusive_with(xs, CountingAdd, &ScanTuning::DEFAULT));
    assert_eq!(by_dispatch, default);
}

#[test]
fn a_stored_sort_configuration_is_what_dispatch_plans_with() {
    setup();
    assert_eq!(SortTuning::for_len::<f32>(1000), TUNED_SORT);
    // Other types and buckets keep the defaults.
    assert_eq!(SortTuning::for_len::<f64>(1000), SortTuning::DEFAULT);
    assert_eq!(SortTuning::for_len::<f32>(100_000), SortTuning::DEFAULT);
    // Under the tuned thresholds rows of 40 leave the network for `sort_unstable` and rows of
    // 100 take the radix sort; both still sort (std's sort as the oracle).
    assert_eq!(sort::plan_cpu_with(40, 25, 4, &TUNED_SORT), sort::CpuPlan::PerRow);
    assert_eq!(sort::plan_cpu_with(100, 10, 4, &TUNED_SORT), sort::CpuPlan::RadixPerRow);
    assert_eq!(sort::plan_cpu(100, 10, 4), sort::CpuPlan::PerRow);
    let mut keys: Vec<f32> =
        (0..1000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 8) as f32 - 5e6).collect();
    let mut expected = keys.clone();
    for row in expected.chunks_mut(100) {
        row.sort_unstable_by(f32::total_cmp);
    }
    sort::rows(&mut keys, 100, Order::Ascending).unwrap();
    assert_eq!(keys, expected);
}
