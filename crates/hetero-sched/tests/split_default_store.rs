//! The default split store is the tuning cache (its own test binary: it sets the environment
//! before the store is first used). A calibration measured through it is read back by the next
//! run, other devices' files are ignored, a corrupt file is ignored with a warning and replaced
//! by the next calibration.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use hetero_sched::split::{
    AffineModel, BoxError, CACHE_DIR_ENV, CacheStore, CpuDevice, Device, ManualClock, ModelKey, SplitStore,
    Splittable, ToOneMap, calibrate_cached, default_store,
};
use hetero_sched::tune::TuningCache;
use hetero_sched::tune::dispatch::NO_CACHE_ENV;

/// An operation whose every call advances a fake clock by the model's time.
struct Timed<'c> {
    clock: &'c ManualClock,
    model: AffineModel,
    calls: AtomicUsize,
}

impl Splittable for Timed<'_> {
    type Output = ();
    type Lane = ();
    fn items(&self) -> usize {
        4096
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<(), BoxError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.clock.advance(self.model.time(r.len()));
        Ok(())
    }
}

fn close(a: AffineModel, b: AffineModel) -> bool {
    (a.gamma - b.gamma).abs() <= 1e-9 * b.gamma.abs() && (a.delta - b.delta).abs() <= 1e-12
}

#[test]
fn the_default_store_is_the_tuning_cache() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary, before any thread reads the environment.
    unsafe {
        std::env::set_var(CACHE_DIR_ENV, dir.path());
        std::env::remove_var(NO_CACHE_ENV);
    }
    let clock = ManualClock::new();
    let truth = AffineModel::new(2e-7, 5e-5);
    let op = Timed { clock: &clock, model: truth, calls: AtomicUsize::new(0) };
    let cpu = CpuDevice::with_threads(1).unwrap();
    let key = ModelKey::new(cpu.fingerprint(), "timed", "f64").with_shape("2^12");
    let sizes = [512, 1024, 4096];

    // First run: measured and written into the cache directory as a tuning-cache file.
    let first = calibrate_cached(default_store(), &key, &op, &cpu, &sizes, 3, &clock).unwrap();
    assert!(close(first, truth), "{first:?}");
    let measured = op.calls.load(Ordering::Relaxed);
    assert!(measured > 0);
    let cache = TuningCache::at(dir.path());
    let file = cache.files().into_iter().flatten().find(|f| f.kernel == "split::timed").unwrap();
    assert_eq!(file.entries, sizes.len());

    // The next run (a fresh store over the default directory) reads it back without measuring.
    let next = CacheStore::open_default().unwrap();
    let again = calibrate_cached(&next, &key, &op, &cpu, &sizes, 3, &clock).unwrap();
    assert_eq!(again, first);
    assert_eq!(op.calls.load(Ordering::Relaxed), measured, "the next run must not measure");

    // Another device's calibration never answers for this one, even copied over its file.
    let foreign = ModelKey::new("cuda:other-gpu", "timed", "f64").with_shape("2^12");
    assert_eq!(default_store().model(&foreign), None);
    default_store().put_model(foreign.clone(), AffineModel::new(1e-9, 1e-6)).unwrap();
    let foreign_file =
        cache.files().into_iter().flatten().find(|f| f.device == "cuda:other-gpu").unwrap().path;
    std::fs::copy(&foreign_file, &file.path).unwrap();
    assert_eq!(default_store().model(&key), None);
    assert!(default_store().model(&foreign).is_some());

    // A corrupt file: ignored (a warning, no panic, no model), then replaced by a recalibration.
    std::fs::write(&file.path, b"\x1f\x8b garbage that is not gzip").unwrap();
    assert_eq!(default_store().model(&key), None);
    std::fs::write(&file.path, "{\"cache\": [1, 2").unwrap();
    assert_eq!(default_store().model(&key), None);
    let fresh = calibrate_cached(default_store(), &key, &op, &cpu, &sizes, 3, &clock).unwrap();
    assert!(close(fresh, truth));
    assert!(op.calls.load(Ordering::Relaxed) > measured, "a corrupt entry must be measured again");
    assert_eq!(CacheStore::open_default().unwrap().model(&key), Some(fresh));

    // To-one choices go to the same cache.
    let slow = CpuDevice::with_threads(2).unwrap();
    let devices: [&dyn Device; 2] = [&cpu, &slow];
    let map = ToOneMap::new(default_store(), 1);
    let pick = map.choose("timed", "2^12", &devices, |i, _| Ok([2e-3, 1e-3][i])).unwrap();
    assert_eq!(pick, 1);
    let next = CacheStore::open_default().unwrap();
    assert_eq!(ToOneMap::new(&next, 1).lookup("timed", "2^12", &devices), Some(1));
    assert!(cache.files().into_iter().flatten().any(|f| f.kernel == "split_to_one::timed"));
}
