//! Concurrent calibration (every device timed while the others run), split finish times, and
//! the models' correction from them (the second, corrected static split).

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hetero_sched::split::{
    AffineModel, BoxError, CpuDevice, Device, DeviceKind, MonotonicClock, SplitError, Splittable,
    calibrate_concurrent, refine, run_static_timed, solve_static,
};
use proptest::prelude::*;

/// Sleeps `micros` per item and records how many calls run at the same time.
struct Overlap {
    n: usize,
    micros: u64,
    active: AtomicUsize,
    most: AtomicUsize,
}

impl Overlap {
    fn new(n: usize, micros: u64) -> Self {
        Overlap { n, micros, active: AtomicUsize::new(0), most: AtomicUsize::new(0) }
    }
}

impl Splittable for Overlap {
    type Output = ();
    type Lane = ();
    fn items(&self) -> usize {
        self.n
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<(), BoxError> {
        let now = self.active.fetch_add(1, Ordering::AcqRel) + 1;
        self.most.fetch_max(now, Ordering::AcqRel);
        std::thread::sleep(Duration::from_micros(self.micros * r.len() as u64));
        self.active.fetch_sub(1, Ordering::AcqRel);
        Ok(())
    }
}

/// A device that never runs what it is given (as if its worker died): every grain fails.
#[derive(Debug)]
struct Broken;

impl Device for Broken {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }
    fn fingerprint(&self) -> String {
        "broken".into()
    }
    fn workers(&self) -> usize {
        1
    }
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }
    fn run_grain(&self, _f: &mut dyn FnMut()) {}
}

#[test]
fn concurrent_calibration_times_every_device_while_the_others_run() {
    let op = Overlap::new(64, 20);
    let (a, b) = (CpuDevice::with_threads(1).unwrap(), CpuDevice::with_threads(1).unwrap());
    let devices: [&dyn Device; 2] = [&a, &b];
    let models = calibrate_concurrent(&op, &devices, &[8, 16, 32], 3, &MonotonicClock::new()).unwrap();
    assert_eq!(models.len(), 2);
    // The coefficients themselves depend on the machine's load (sleeps are lower bounds only).
    for m in &models {
        assert!(m.gamma.is_finite() && m.gamma >= 0.0 && m.delta.is_finite() && m.delta >= 0.0, "{m:?}");
    }
    assert_eq!(op.most.load(Ordering::Acquire), 2, "the two devices never ran at the same time");
    assert_eq!(op.active.load(Ordering::Acquire), 0, "a run outlived the calibration");
}

#[test]
fn concurrent_calibration_rejects_bad_input_and_stops_on_failure() {
    let clock = MonotonicClock::new();
    let op = Overlap::new(10, 1);
    let a = CpuDevice::with_threads(1).unwrap();
    assert!(matches!(calibrate_concurrent(&op, &[], &[2, 4], 1, &clock), Err(SplitError::NoDevices)));
    for bad in [&[4][..], &[4, 4], &[0, 4], &[4, 11]] {
        let r = calibrate_concurrent(&op, &[&a], bad, 1, &clock);
        assert!(matches!(r, Err(SplitError::Invalid(_))), "{bad:?}");
    }
    assert!(matches!(calibrate_concurrent(&op, &[&a], &[2, 4], 0, &clock), Err(SplitError::Invalid(_))));
    // One device whose every run fails: an error, and the other device stops (no hang).
    for devices in [[&Broken as &dyn Device, &a], [&a, &Broken]] {
        let err = calibrate_concurrent(&op, &devices, &[2, 4], 2, &clock).unwrap_err();
        assert!(matches!(err, SplitError::Panicked { ref fingerprint } if fingerprint == "broken"), "{err}");
    }
}

#[test]
fn timed_static_split_reports_each_devices_finish() {
    let op = Overlap::new(40, 200);
    let (a, b) = (CpuDevice::with_threads(1).unwrap(), CpuDevice::with_threads(1).unwrap());
    let devices: [&dyn Device; 2] = [&a, &b];
    let (pieces, t) = run_static_timed(&op, &devices, &[30, 10], &MonotonicClock::new()).unwrap();
    assert_eq!(pieces.iter().map(|p| p.range.len()).sum::<usize>(), 40);
    assert_eq!(t.len(), 2);
    // Sleeps are lower bounds: 30 items of 200 us and 10 of 200 us.
    assert!(t[0] >= 30.0 * 200e-6 && t[1] >= 10.0 * 200e-6, "{t:?}");
    let (_, t) = run_static_timed(&op, &devices, &[40, 0], &MonotonicClock::new()).unwrap();
    assert!(t[0] >= 40.0 * 200e-6 && t[1] == 0.0, "{t:?}");
    assert!(run_static_timed(&op, &devices, &[39, 0], &MonotonicClock::new()).is_err());
}

#[test]
fn refine_rejects_what_it_cannot_use() {
    let m = [AffineModel::new(1e-6, 0.0), AffineModel::new(2e-6, 1e-4)];
    assert!(matches!(refine(&m, &[1], &[1.0, 1.0]), Err(SplitError::Mismatch { .. })));
    assert!(matches!(refine(&m, &[1, 1], &[1.0]), Err(SplitError::Mismatch { .. })));
    assert!(matches!(refine(&m, &[1, 1], &[f64::NAN, 1.0]), Err(SplitError::Invalid(_))));
    assert!(matches!(refine(&m, &[1, 1], &[1.0, -1.0]), Err(SplitError::Invalid(_))));
    let bad = [AffineModel::new(f64::INFINITY, 0.0), m[1]];
    assert!(matches!(refine(&bad, &[1, 1], &[1.0, 1.0]), Err(SplitError::BadModel { .. })));
    // A device without work keeps its model; the other is scaled to what it took.
    let r = refine(&m, &[0, 1000], &[0.0, 4.2e-3]).unwrap();
    assert_eq!(r[0], m[0]);
    assert!((r[1].time(1000) - 4.2e-3).abs() < 1e-15 && (r[1].delta / r[1].gamma - 50.0).abs() < 1e-9);
}

proptest! {
    /// Devices whose speeds all changed by unknown factors (their fixed costs in proportion):
    /// one split with the old models and its measured finish times give models whose split is
    /// the one for the true speeds, within rounding.
    #[test]
    fn one_refinement_recovers_the_true_split(
        truth in prop::collection::vec((1e-7f64..1e-5, 0.0f64..1e-3), 2..5),
        drift in prop::collection::vec(0.3f64..3.0, 4),
        total in 1000usize..200_000,
    ) {
        let truth: Vec<AffineModel> = truth.iter().map(|&(g, d)| AffineModel::new(g, d)).collect();
        let believed: Vec<AffineModel> = truth
            .iter()
            .zip(&drift)
            .map(|(m, f)| AffineModel::new(m.gamma * f, m.delta * f))
            .collect();
        let first = solve_static(total, &believed, None).unwrap();
        let seen: Vec<f64> = first.iter().zip(&truth).map(|(&w, m)| m.time(w)).collect();
        let refined = refine(&believed, &first, &seen).unwrap();
        let second = solve_static(total, &refined, None).unwrap();
        let best = solve_static(total, &truth, None).unwrap();
        let makespan = |s: &[usize]| s.iter().zip(&truth).filter(|(w, _)| **w > 0).map(|(&w, m)| m.time(w)).fold(0.0, f64::max);
        // Devices the first split left idle keep their believed model, so the second split can
        // differ where one was idle; every used device is corrected exactly.
        if first.iter().all(|&w| w > 0) {
            let slack = truth.iter().map(|m| m.gamma).fold(0.0, f64::max) * 2.0;
            prop_assert!(makespan(&second) <= makespan(&best) + slack, "{second:?} vs {best:?}");
        }
    }
}
