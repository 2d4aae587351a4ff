//! Calibration against a fake clock, the persistent store, and the to-one map.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use hetero_sched::split::{
    AffineModel, BoxError, ChoiceKey, CpuDevice, CudaDevice, Device, JsonStore, ManualClock, MemoryStore,
    ModelKey, SplitError, SplitStore, Splittable, ToOneMap, calibrate, calibrate_cached, size_bucket,
};

/// An operation whose every call advances a fake clock by `gamma · len + delta`.
struct Timed<'c> {
    clock: &'c ManualClock,
    model: AffineModel,
    n: usize,
    calls: AtomicUsize,
}

impl Splittable for Timed<'_> {
    type Output = ();
    type Lane = ();
    fn items(&self) -> usize {
        self.n
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<(), BoxError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.clock.advance(self.model.time(r.len()));
        Ok(())
    }
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hetero-sched-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    dir
}

#[test]
fn calibration_recovers_the_model_under_a_fake_clock() {
    let clock = ManualClock::new();
    let truth = AffineModel::new(3e-7, 2e-4);
    let op = Timed { clock: &clock, model: truth, n: 10_000, calls: AtomicUsize::new(0) };
    let cpu = CpuDevice::with_threads(1).unwrap();
    let m = calibrate(&op, &cpu, &[1000, 2000, 4000], 3, &clock).unwrap();
    assert!((m.gamma - truth.gamma).abs() < 1e-15 && (m.delta - truth.delta).abs() < 1e-12, "{m:?}");
    // One warm-up plus 3 runs at each of 3 sizes.
    assert_eq!(op.calls.load(Ordering::Relaxed), 1 + 9);
    for bad in [&[1000][..], &[1000, 1000], &[0, 10], &[10, 10_001]] {
        assert!(matches!(calibrate(&op, &cpu, bad, 3, &clock), Err(SplitError::Invalid(_))), "{bad:?}");
    }
    assert!(calibrate(&op, &cpu, &[10, 20], 0, &clock).is_err());
}

#[test]
fn cached_calibration_is_measured_once_and_persisted() {
    let dir = temp_dir("cached");
    let clock = ManualClock::new();
    let op = Timed { clock: &clock, model: AffineModel::new(1e-6, 1e-3), n: 100, calls: AtomicUsize::new(0) };
    let cpu = CpuDevice::with_threads(1).unwrap();
    let key = ModelKey::new(cpu.fingerprint(), "timed", "f64").with_shape("n100");
    let store = JsonStore::open(dir.join("s.json")).unwrap();
    let first = calibrate_cached(&store, &key, &op, &cpu, &[10, 50], 1, &clock).unwrap();
    let calls = op.calls.load(Ordering::Relaxed);
    let reopened = JsonStore::open(dir.join("s.json")).unwrap();
    let second = calibrate_cached(&reopened, &key, &op, &cpu, &[10, 50], 1, &clock).unwrap();
    assert_eq!(first, second);
    assert_eq!(op.calls.load(Ordering::Relaxed), calls, "the second call must not measure");
    // Another device's or element type's entry is not returned.
    assert_eq!(reopened.model(&ModelKey::new("other-device", "timed", "f64").with_shape("n100")), None);
    assert_eq!(reopened.model(&ModelKey::new(cpu.fingerprint(), "timed", "f32").with_shape("n100")), None);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn corrupt_or_foreign_store_files_are_ignored() {
    let dir = temp_dir("corrupt");
    std::fs::create_dir_all(&dir).unwrap();
    let key = ModelKey::new("d", "op", "f32");
    for text in [
        "{ not json",
        "[1, 2, 3]",
        r#"{"version": 99, "models": [], "choices": []}"#,
        r#"{"tune_params_keys": ["block_size"], "cache": {}}"#,
        "",
    ] {
        let path = dir.join("s.json");
        std::fs::write(&path, text).unwrap();
        let store = JsonStore::open(&path).unwrap();
        assert_eq!(store.model(&key), None, "{text}");
        store.put_model(key.clone(), AffineModel::new(1.0, 2.0)).unwrap();
        assert_eq!(JsonStore::open(&path).unwrap().model(&key), Some(AffineModel::new(1.0, 2.0)));
    }
    // Damaged entries are dropped, never returned: a negative slope would mislead the solver.
    let path = dir.join("damaged.json");
    let entry = |g: &str| {
        format!(
            r#"{{"key": {{"device": "d", "operation": "op", "element": "f32", "shape": ""}}, "model": {{"gamma": {g}, "delta": 0.0}}}}"#
        )
    };
    std::fs::write(&path, format!(r#"{{"version": 1, "models": [{}], "choices": []}}"#, entry("-1.0")))
        .unwrap();
    assert_eq!(JsonStore::open(&path).unwrap().model(&key), None);
    // Putting a NaN model is an error, not a corrupt file.
    assert!(JsonStore::open(&path).unwrap().put_model(key.clone(), AffineModel::new(f64::NAN, 0.0)).is_err());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_stores_on_one_file_merge() {
    let dir = temp_dir("merge");
    let (a, b) = (JsonStore::open(dir.join("s.json")).unwrap(), JsonStore::open(dir.join("s.json")).unwrap());
    let (ka, kb) = (ModelKey::new("d", "a", "f32"), ModelKey::new("d", "b", "f32"));
    a.put_model(ka.clone(), AffineModel::new(1.0, 0.0)).unwrap();
    b.put_model(kb.clone(), AffineModel::new(2.0, 0.0)).unwrap();
    let c = JsonStore::open(dir.join("s.json")).unwrap();
    assert_eq!(c.model(&ka), Some(AffineModel::new(1.0, 0.0)));
    assert_eq!(c.model(&kb), Some(AffineModel::new(2.0, 0.0)));
    std::fs::remove_dir_all(&dir).ok();
}

#[derive(Debug)]
struct Named(&'static str);
impl Device for Named {
    fn kind(&self) -> hetero_sched::split::DeviceKind {
        hetero_sched::split::DeviceKind::Cpu
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
fn to_one_map_measures_once_per_shape_and_persists() {
    let dir = temp_dir("to-one");
    let (cpu, gpu, other) = (Named("cpu"), Named("gpu"), Named("other"));
    let devices: [&dyn Device; 2] = [&cpu, &gpu];
    let store = JsonStore::open(dir.join("s.json")).unwrap();
    let map = ToOneMap::new(&store, 3);
    let mut calls = 0;
    // The GPU wins for large shapes, the CPU for small ones.
    let measure = |shape: usize| {
        move |i: usize, _: &dyn Device| -> Result<f64, BoxError> {
            Ok(if i == 0 { shape as f64 } else { 100.0 })
        }
    };
    let mut counted = |i: usize, d: &dyn Device| {
        calls += 1;
        measure(1000)(i, d)
    };
    assert_eq!(map.choose("hier", &size_bucket(1000), &devices, &mut counted).unwrap(), 1);
    assert_eq!(calls, 2 * (1 + 3), "a warm-up and 3 runs per device");
    assert_eq!(map.choose("hier", "small", &devices, measure(10)).unwrap(), 0);
    // Reopened: no measurement (the closure would fail), same answers, in any device order.
    let again = JsonStore::open(dir.join("s.json")).unwrap();
    let map2 = ToOneMap::new(&again, 3);
    let never = |_: usize, _: &dyn Device| -> Result<f64, BoxError> { Err("must not measure".into()) };
    assert_eq!(map2.choose("hier", &size_bucket(1000), &[&gpu, &cpu], never).unwrap(), 0);
    assert_eq!(map2.choose("hier", "small", &devices, never).unwrap(), 0);
    // Another device set is another question.
    assert_eq!(map2.lookup("hier", "small", &[&cpu, &other]), None);
    // A device that fails is not a candidate; all failing is an error; no devices is an error.
    let half = |i: usize, _: &dyn Device| -> Result<f64, BoxError> {
        if i == 0 { Err("no".into()) } else { Ok(5.0) }
    };
    assert_eq!(map2.choose("x", "s", &[&cpu, &other], half).unwrap(), 1);
    assert!(matches!(map2.choose("y", "s", &devices, never), Err(SplitError::Task { .. })));
    assert!(matches!(map2.choose("y", "s", &[], never), Err(SplitError::NoDevices)));
    let nan = |_: usize, _: &dyn Device| -> Result<f64, BoxError> { Ok(f64::NAN) };
    assert!(map2.choose("z", "s", &devices, nan).is_err());
    let key = ChoiceKey {
        operation: "hier".into(),
        shape: "small".into(),
        devices: vec!["cpu".into(), "gpu".into()],
    };
    assert_eq!(again.choice(&key).unwrap().device, "cpu");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn memory_store_round_trips() {
    let s = MemoryStore::new();
    let k = ModelKey::new("d", "o", "f64");
    assert_eq!(s.model(&k), None);
    s.put_model(k.clone(), AffineModel::new(1.0, 2.0)).unwrap();
    assert_eq!(s.model(&k), Some(AffineModel::new(1.0, 2.0)));
}

#[test]
fn cuda_device_without_a_gpu_is_an_error_not_a_panic() {
    match CudaDevice::new(0, 2) {
        Ok(d) => assert!(d.fingerprint().starts_with("cuda:")),
        Err(SplitError::Cuda(e)) => assert!(e.is_no_gpu(), "{e}"),
        Err(e) => panic!("unexpected error {e}"),
    }
    assert!(matches!(CudaDevice::new(usize::MAX, 1), Err(SplitError::Cuda(_))));
    assert!(CpuDevice::with_threads(0).is_err());
}
