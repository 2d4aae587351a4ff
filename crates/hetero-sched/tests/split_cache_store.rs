//! Calibrations and to-one choices in the tuning cache: measured once, read back by a new
//! store (the next run), kept per device, operation, element type and shape bucket, written as
//! Kernel Tuner cache files; corrupt or foreign files are ignored, never a wrong model.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use hetero_sched::split::{
    AffineModel, BoxError, CacheStore, CpuDevice, Device, DeviceKind, ManualClock, ModelKey, SplitStore,
    Splittable, ToOneMap, calibrate_cached,
};
use hetero_sched::tune::{KtFile, TuningCache};

/// An operation whose every call advances a fake clock by `gamma · len + delta`.
struct Timed<'c> {
    clock: &'c ManualClock,
    model: AffineModel,
    calls: AtomicUsize,
}

impl Splittable for Timed<'_> {
    type Output = ();
    type Lane = ();
    fn items(&self) -> usize {
        1000
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<(), BoxError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.clock.advance(self.model.time(r.len()));
        Ok(())
    }
}

fn close(a: AffineModel, b: AffineModel) -> bool {
    (a.gamma - b.gamma).abs() <= 1e-12 * b.gamma.abs().max(1e-12) && (a.delta - b.delta).abs() <= 1e-12
}

#[test]
fn a_calibration_is_measured_once_and_read_back_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new();
    let truth = AffineModel::new(3e-7, 2e-4);
    let op = Timed { clock: &clock, model: truth, calls: AtomicUsize::new(0) };
    let cpu = CpuDevice::with_threads(1).unwrap();
    let key = ModelKey::new(cpu.fingerprint(), "timed", "f64").with_shape("2^10");
    let store = CacheStore::new(TuningCache::at(dir.path()));
    let first = calibrate_cached(&store, &key, &op, &cpu, &[100, 400, 1000], 3, &clock).unwrap();
    assert!(close(first, truth), "{first:?}");
    let calls = op.calls.load(Ordering::Relaxed);
    // The next run: a new store over the same directory.
    let next = CacheStore::new(TuningCache::at(dir.path()));
    let second = calibrate_cached(&next, &key, &op, &cpu, &[100, 400, 1000], 3, &clock).unwrap();
    assert_eq!(first, second);
    assert_eq!(op.calls.load(Ordering::Relaxed), calls, "the second run must not measure");
    // Other devices, operations, element types and shapes have nothing.
    for other in [
        ModelKey::new("cuda:other", "timed", "f64").with_shape("2^10"),
        ModelKey::new(cpu.fingerprint(), "other", "f64").with_shape("2^10"),
        ModelKey::new(cpu.fingerprint(), "timed", "f32").with_shape("2^10"),
        ModelKey::new(cpu.fingerprint(), "timed", "f64").with_shape("2^11"),
    ] {
        assert_eq!(next.model(&other), None, "{other:?}");
    }
    // The file is a Kernel Tuner cache file of the three sizes, listed with the tuned kernels.
    let files = next.cache().files();
    let info = files.iter().flatten().find(|f| f.kernel == "split::timed").unwrap();
    assert_eq!((info.entries, info.succeeded), (3, 3));
    let file = KtFile::read(&info.path).unwrap();
    assert_eq!(file.keys(), ["w"]);
    assert_eq!(file.device_name, cpu.fingerprint());
}

#[test]
fn models_without_samples_and_recalibrations_replace_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = CacheStore::new(TuningCache::at(dir.path()));
    let key = ModelKey::new("cpu:test", "axpy", "f32");
    let m = AffineModel::new(1.5e-9, 3e-6);
    store.put_model(key.clone(), m).unwrap();
    assert!(close(store.model(&key).unwrap(), m));
    // New samples replace the old entries (not averaged with them).
    store.put_samples(key.clone(), &[(10, 1.0), (20, 2.0), (40, 4.0)]).unwrap();
    let refit = store.model(&key).unwrap();
    assert!(close(refit, AffineModel::new(0.1, 0.0)), "{refit:?}");
    // Unusable models and samples are errors, and leave the entry as it was.
    assert!(store.put_model(key.clone(), AffineModel::new(f64::NAN, 0.0)).is_err());
    assert!(store.put_samples(key.clone(), &[(10, 1.0)]).is_err());
    assert!(store.put_samples(key.clone(), &[(10, 1.0), (20, -1.0)]).is_err());
    assert!(close(store.model(&key).unwrap(), refit));
}

#[test]
fn corrupt_or_foreign_files_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let cache = TuningCache::at(dir.path());
    let store = CacheStore::new(cache.clone());
    let key = ModelKey::new("cpu:test", "axpy", "f64").with_shape("s");
    store.put_model(key.clone(), AffineModel::new(1e-9, 1e-6)).unwrap();
    let path = cache.files().into_iter().flatten().next().unwrap().path;
    std::fs::write(&path, "{ not json").unwrap();
    assert_eq!(store.model(&key), None);
    // A valid file of another device copied over this key's path.
    let other = ModelKey::new("cpu:other", "axpy", "f64").with_shape("s");
    store.put_model(other, AffineModel::new(1e-9, 1e-6)).unwrap();
    let other_path = cache.files().into_iter().flatten().find(|f| f.device == "cpu:other").unwrap().path;
    std::fs::copy(&other_path, &path).unwrap();
    assert_eq!(store.model(&key), None);
    // A recalibration over the corrupt file works.
    store.put_model(key.clone(), AffineModel::new(2e-9, 1e-6)).unwrap();
    assert!(store.model(&key).is_some());
}

/// A device that only has a name.
#[derive(Debug)]
struct Named(&'static str);

impl Device for Named {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }
    fn fingerprint(&self) -> String {
        self.0.into()
    }
    fn workers(&self) -> usize {
        1
    }
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }
}

#[test]
fn to_one_choices_persist_in_the_tuning_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (cpu, gpu) = (Named("cpu"), Named("gpu"));
    let devices: [&dyn Device; 2] = [&cpu, &gpu];
    let store = CacheStore::new(TuningCache::at(dir.path()));
    let map = ToOneMap::new(&store, 3);
    let measure =
        |i: usize, _: &dyn Device| -> Result<f64, BoxError> { Ok(if i == 0 { 5e-3 } else { 1e-3 }) };
    assert_eq!(map.choose("hier", "d4-n6", &devices, measure).unwrap(), 1);
    let next = CacheStore::new(TuningCache::at(dir.path()));
    let map2 = ToOneMap::new(&next, 3);
    let never = |_: usize, _: &dyn Device| -> Result<f64, BoxError> { Err("must not measure".into()) };
    assert_eq!(map2.choose("hier", "d4-n6", &[&gpu, &cpu], never).unwrap(), 0);
    assert_eq!(map2.lookup("hier", "d4-n5", &devices), None);
    assert_eq!(map2.lookup("hier", "d4-n6", &[&cpu, &Named("other")]), None);
    let info = next.cache().files().into_iter().flatten().find(|f| f.kernel == "split_to_one::hier").unwrap();
    assert_eq!(info.best.unwrap().1, "gpu");
}
