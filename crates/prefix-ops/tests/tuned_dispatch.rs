//! Dispatch consults the tuning cache: a stored configuration changes the path the scan takes
//! and the parameters the sort plans with; a stored configuration outside the kernel's space is
//! ignored for the default.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup, once, by `setup`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{
    CacheKey, Config, Fingerprint, Measured, Outcome, Param, Space, TuningCache, size_bucket,
};
use prefix_ops::scan::{self, Monoid, ScanTuning};
use prefix_ops::sort::{self, Order, SortTuning};
use prefix_ops::tridiagonal::{self, FastSolver, Layout, TridiagonalBatch, TridiagonalTuning};

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
    let bucket = TridiagonalTuning::bucket((Layout::Strided, TRI_M, TRI_G)).unwrap().name();
    let key = CacheKey::new(tridiagonal::TUNING_KERNEL, &Fingerprint::cpu(), "f64", &bucket);
    let m = Measured {
        config: TUNED_TRI.to_config(),
        times: vec![1.0],
        outcome: Outcome::Time(1.0),
        failure: None,
    };
    cache.store(&key, TridiagonalTuning::space(), &[m]).unwrap();
    // A lane block of 16 is below the space's 64: stored by a wider space, never used.
    let wide = Space::builder()
        .param(Param::names("solver", &["sequential", "parallel", "lanes"]))
        .param(Param::pow2("task_values", 1 << 9, 1 << 16))
        .param(Param::pow2("lane_block_max", 16, 1 << 12))
        .build()
        .unwrap();
    let bad = TridiagonalTuning { lane_block_max: 16, ..TUNED_TRI };
    let key = CacheKey::new(tridiagonal::TUNING_KERNEL, &Fingerprint::cpu(), "f32", &bucket);
    let m =
        Measured { config: bad.to_config(), times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
    cache.store(&key, &wide, &[m]).unwrap();
}

const TRI_M: usize = 100;
const TRI_G: usize = 64;
const TUNED_TRI: TridiagonalTuning =
    TridiagonalTuning { solver: FastSolver::Sequential, task_values: 1 << 9, lane_block_max: 64 };

const TUNED_SORT: SortTuning =
    SortTuning { network_max_len: 8, radix_row_min: 64, radix_par_min: 1 << 20, ..SortTuning::DEFAULT };

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
    let tuned = ScanTuning::tuned::<u64>(N);
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
    assert_eq!(ScanTuning::tuned::<i64>(N), ScanTuning::DEFAULT);
    let by_dispatch = combines::<i64>(|xs| scan::inclusive(xs, CountingAdd));
    let default = combines::<i64>(|xs| scan::inclusive_with(xs, CountingAdd, &ScanTuning::DEFAULT));
    assert_eq!(by_dispatch, default);
}

#[test]
fn a_stored_sort_configuration_is_what_dispatch_plans_with() {
    setup();
    assert_eq!(SortTuning::tuned::<f32>(1000), TUNED_SORT);
    // Other types and buckets keep the defaults.
    assert_eq!(SortTuning::tuned::<f64>(1000), SortTuning::DEFAULT);
    assert_eq!(SortTuning::tuned::<f32>(100_000), SortTuning::DEFAULT);
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

/// A strictly dominant strided batch with awkward coefficients, and its right-hand sides.
fn tri_problem() -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = TRI_M * TRI_G;
    let f = |i: usize, s: usize| ((i * s + 7) % 101) as f64 / 97.0;
    let a: Vec<f64> = (0..n).map(|i| -0.3 - f(i, 3)).collect();
    let c: Vec<f64> = (0..n).map(|i| -0.2 - f(i, 5)).collect();
    let b: Vec<f64> = (0..n).map(|i| 2.7 + f(i, 11)).collect();
    let d: Vec<f64> = (0..n).map(|i| f(i, 13) - 0.5).collect();
    (a, b, c, d)
}

#[test]
fn a_stored_tridiagonal_configuration_is_what_auto_runs() {
    setup();
    let shape = (Layout::Strided, TRI_M, TRI_G);
    assert_eq!(TridiagonalTuning::tuned::<f64>(shape), TUNED_TRI);
    // Another type, layout or bucket: the layout's default.
    assert_eq!(TridiagonalTuning::tuned::<f32>(shape), TridiagonalTuning::STRIDED);
    assert_eq!(
        TridiagonalTuning::tuned::<f64>((Layout::Interleaved, TRI_M, TRI_G)),
        TridiagonalTuning::INTERLEAVED
    );
    assert_eq!(
        TridiagonalTuning::tuned::<f64>((Layout::Strided, TRI_M, 4 * TRI_G)),
        TridiagonalTuning::STRIDED
    );
    let (a, b, c, d) = tri_problem();
    let batch = TridiagonalBatch::strided(&a, &b, &c, TRI_M).unwrap();
    let solve = |f: &dyn Fn(&mut [f64])| {
        let mut x = d.clone();
        f(&mut x);
        x
    };
    let by_dispatch = solve(&|x| batch.solve(x).unwrap());
    let tuned = solve(&|x| batch.solve_tuned(&TUNED_TRI, x).unwrap());
    let default = solve(&|x| batch.solve_tuned(&TridiagonalTuning::STRIDED, x).unwrap());
    // Every path solves the system (residual against the dense product, written here).
    for x in [&by_dispatch, &tuned, &default] {
        for s in 0..TRI_G {
            for k in 0..TRI_M {
                let i = s * TRI_M + k;
                let mut r = b[i] * x[i] - d[i];
                if k > 0 {
                    r += a[i] * x[i - 1];
                }
                if k + 1 < TRI_M {
                    r += c[i] * x[i + 1];
                }
                assert!(r.abs() < 1e-12, "residual {r} at system {s} row {k}");
            }
        }
    }
    // The sequential solver divides where the parallel one multiplies by a reciprocal, so the
    // last bits tell the paths apart.
    let differing =
        |u: &[f64], v: &[f64]| u.iter().zip(v).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
    assert!(differing(&tuned, &default) > 0, "the two paths must be distinguishable");
    assert_eq!(differing(&by_dispatch, &tuned), 0, "Auto must run the stored solver");
}
