//! Calibration: timing an operation on a device at several sizes and fitting an
//! [`AffineModel`], optionally through a [`SplitStore`]; and [`calibrate_concurrent`], which
//! times every device while all the others are busy, as they are during a split.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::clock::Clock;
use super::device::Device;
use super::error::{Result, SplitError};
use super::model::AffineModel;
use super::run::run_one;
use super::splittable::Splittable;
use super::store::{ModelKey, SplitStore};

/// Times `op` on its first `w` items for every `w` in `sizes` (one warm-up run, then the
/// median of `runs`) on `device`, reading `clock`, and fits `t = γ·w + δ` by least squares.
///
/// # Errors
/// [`SplitError::Invalid`] for fewer than two distinct sizes, a size of 0 or above
/// `op.items()`, or `runs == 0`; the operation's failures.
pub fn calibrate<S: Splittable>(
    op: &S,
    device: &dyn Device,
    sizes: &[usize],
    runs: usize,
    clock: &dyn Clock,
) -> Result<AffineModel> {
    let samples = calibration_samples(op, device, sizes, runs, clock)?;
    let model = AffineModel::fit(&samples)?;
    tracing::debug!(device = %device.fingerprint(), ?samples, ?model, "calibrated");
    Ok(model)
}

/// Calibrates every device of `devices` at once, each timed while all the others run: every
/// device times `op` on its first `w` items for every `w` in `sizes` (a warm-up, then the median
/// of `runs`), and a device that has finished its own timings keeps running `op` on `sizes[0]`
/// items until every device has finished, so no timed run ever has the machine to itself.
///
/// This is the condition of a split: devices that share something (memory bandwidth, a
/// power budget, the cores of a loaded machine, the host thread feeding a GPU) run slower
/// together than alone, and models fitted on each device alone ([`calibrate`]) then
/// overestimate the faster side's advantage and misplace the split point.
///
/// # Errors
/// [`SplitError::NoDevices`]; as [`calibrate`] (the first failure of any device, after every
/// device has stopped).
pub fn calibrate_concurrent<S: Splittable>(
    op: &S,
    devices: &[&dyn Device],
    sizes: &[usize],
    runs: usize,
    clock: &dyn Clock,
) -> Result<Vec<AffineModel>> {
    if devices.is_empty() {
        return Err(SplitError::NoDevices);
    }
    check_sizes(op, sizes, runs)?;
    let finished = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error = Mutex::new(None);
    let samples: Vec<Option<Vec<(usize, f64)>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = devices
            .iter()
            .map(|&dev| {
                let (finished, failed, first_error) = (&finished, &failed, &first_error);
                sc.spawn(move || {
                    let mine = {
                        // Counted even if the calibration panics, so the others stop.
                        let _done = Finished(finished);
                        calibration_samples(op, dev, sizes, runs, clock)
                    };
                    let mine = match mine {
                        Ok(s) => Some(s),
                        Err(e) => {
                            failed.store(true, Ordering::Release);
                            first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                            None
                        }
                    };
                    // Keep the others company until they are done (or one has failed).
                    while finished.load(Ordering::Acquire) < devices.len() && !failed.load(Ordering::Acquire)
                    {
                        if run_one(op, dev, sizes[0]).is_err() {
                            break;
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(None)).collect()
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    devices
        .iter()
        .zip(samples)
        .map(|(dev, s)| {
            let s = s.ok_or_else(|| SplitError::Panicked { fingerprint: dev.fingerprint() })?;
            let model = AffineModel::fit(&s)?;
            tracing::debug!(device = %dev.fingerprint(), samples = ?s, ?model, "calibrated concurrently");
            Ok(model)
        })
        .collect()
}

/// Counts a device as finished when dropped.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// Errors for calibration sizes and run counts [`calibrate`] cannot use.
fn check_sizes<S: Splittable>(op: &S, sizes: &[usize], runs: usize) -> Result<()> {
    if runs == 0 {
        return Err(SplitError::Invalid("calibration with 0 runs".into()));
    }
    if let Some(&w) = sizes.iter().find(|&&w| w == 0 || w > op.items()) {
        return Err(SplitError::Invalid(format!("calibration size {w} outside 1..={}", op.items())));
    }
    if sizes.len() < 2 || sizes.iter().all(|&w| w == sizes[0]) {
        return Err(SplitError::Invalid("calibration needs two distinct sizes".into()));
    }
    Ok(())
}

/// The `(size, median seconds)` samples of [`calibrate`].
fn calibration_samples<S: Splittable>(
    op: &S,
    device: &dyn Device,
    sizes: &[usize],
    runs: usize,
    clock: &dyn Clock,
) -> Result<Vec<(usize, f64)>> {
    check_sizes(op, sizes, runs)?;
    run_one(op, device, sizes[0])?;
    let mut samples = Vec::with_capacity(sizes.len());
    for &w in sizes {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t0 = clock.seconds();
            run_one(op, device, w)?;
            times.push(clock.seconds() - t0);
        }
        times.sort_by(f64::total_cmp);
        samples.push((w, times[times.len() / 2]));
    }
    Ok(samples)
}

/// The model stored under `key`, or a fresh [`calibrate`] whose samples are then stored
/// ([`SplitStore::put_samples`]).
///
/// # Errors
/// As [`calibrate`]; [`SplitError::Store`] when the store cannot be written.
pub fn calibrate_cached<S: Splittable>(
    store: &dyn SplitStore,
    key: &ModelKey,
    op: &S,
    device: &dyn Device,
    sizes: &[usize],
    runs: usize,
    clock: &dyn Clock,
) -> Result<AffineModel> {
    if let Some(m) = store.model(key) {
        return Ok(m);
    }
    let samples = calibration_samples(op, device, sizes, runs, clock)?;
    let m = AffineModel::fit(&samples)?;
    store.put_samples(key.clone(), &samples)?;
    // What the store gives back next time (a store may refit from what it keeps).
    Ok(store.model(key).unwrap_or(m))
}
