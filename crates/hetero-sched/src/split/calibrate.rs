//! Calibration: timing an operation on a device at several sizes and fitting an
//! [`AffineModel`], optionally through a [`SplitStore`].

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

/// The `(size, median seconds)` samples of [`calibrate`].
fn calibration_samples<S: Splittable>(
    op: &S,
    device: &dyn Device,
    sizes: &[usize],
    runs: usize,
    clock: &dyn Clock,
) -> Result<Vec<(usize, f64)>> {
    if runs == 0 {
        return Err(SplitError::Invalid("calibration with 0 runs".into()));
    }
    if let Some(&w) = sizes.iter().find(|&&w| w == 0 || w > op.items()) {
        return Err(SplitError::Invalid(format!("calibration size {w} outside 1..={}", op.items())));
    }
    if sizes.len() < 2 || sizes.iter().all(|&w| w == sizes[0]) {
        return Err(SplitError::Invalid("calibration needs two distinct sizes".into()));
    }
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
