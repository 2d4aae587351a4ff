//! Affine time models `t(w) = γ·w + δ` (thesis Eq. 6.4), their least-squares fit, and the
//! static split of `w` items over `k` devices for equal finish time (Eq. 6.5 generalised).

use serde::{Deserialize, Serialize};

use super::error::{Result, SplitError};

/// Predicted seconds for `w` work items on one device: `gamma · w + delta`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AffineModel {
    /// Seconds per work item (γ).
    pub gamma: f64,
    /// Fixed seconds per call: launches, transfers, thread wake-ups (δ).
    pub delta: f64,
}

impl AffineModel {
    /// A model from its two coefficients.
    pub fn new(gamma: f64, delta: f64) -> Self {
        AffineModel { gamma, delta }
    }

    /// The model through `(w, t_w)` and `(2w, t_2w)` (Eq. 6.4), clamped like [`fit`](Self::fit).
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    pub fn from_two_runs(w: usize, t_w: f64, t_2w: f64) -> Result<Self> {
        Self::fit(&[(w, t_w), (2 * w, t_2w)])
    }

    /// Least-squares line through `(items, seconds)` samples. Noise can make the slope or the
    /// intercept negative; both are clamped at 0 (a negative intercept is refitted as a line
    /// through the origin), because a negative time would make the split solver nonsensical.
    ///
    /// ```
    /// use hetero_sched::split::AffineModel;
    /// let m = AffineModel::fit(&[(1000, 3e-3), (2000, 5e-3), (4000, 9e-3)])?;
    /// assert!((m.gamma - 2e-6).abs() < 1e-12 && (m.delta - 1e-3).abs() < 1e-9);
    /// # Ok::<(), hetero_sched::split::SplitError>(())
    /// ```
    ///
    /// # Errors
    /// [`SplitError::Invalid`] with fewer than two distinct sizes or a non-finite or negative
    /// time.
    pub fn fit(samples: &[(usize, f64)]) -> Result<Self> {
        if let Some(&(w, t)) = samples.iter().find(|s| !(s.1.is_finite() && s.1 >= 0.0)) {
            return Err(SplitError::Invalid(format!("calibration time {t} s at {w} items")));
        }
        let distinct = samples.iter().any(|s| s.0 != samples[0].0);
        if samples.len() < 2 || !distinct {
            return Err(SplitError::Invalid("a fit needs at least two distinct sizes".into()));
        }
        let n = samples.len() as f64;
        let mean_w = samples.iter().map(|s| s.0 as f64).sum::<f64>() / n;
        let mean_t = samples.iter().map(|s| s.1).sum::<f64>() / n;
        let sww: f64 = samples.iter().map(|s| (s.0 as f64 - mean_w).powi(2)).sum();
        let swt: f64 = samples.iter().map(|s| (s.0 as f64 - mean_w) * (s.1 - mean_t)).sum();
        let gamma = (swt / sww).max(0.0);
        let delta = mean_t - gamma * mean_w;
        if delta >= 0.0 {
            return Ok(AffineModel { gamma, delta });
        }
        // Through the origin: minimises Σ (t − γ w)² with δ = 0.
        let sw2: f64 = samples.iter().map(|s| (s.0 as f64).powi(2)).sum();
        let swt0: f64 = samples.iter().map(|s| s.0 as f64 * s.1).sum();
        Ok(AffineModel { gamma: (swt0 / sw2).max(0.0), delta: 0.0 })
    }

    /// Predicted seconds for `w` items.
    pub fn time(&self, w: usize) -> f64 {
        self.gamma * w as f64 + self.delta
    }

    /// Errors for coefficients the solver cannot use.
    pub(crate) fn check(&self, device: usize) -> Result<()> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if ok(self.gamma) && ok(self.delta) {
            Ok(())
        } else {
            Err(SplitError::BadModel {
                device,
                reason: format!("gamma {} and delta {} must be finite and >= 0", self.gamma, self.delta),
            })
        }
    }
}

/// Splits `total` items over the devices whose time models are `models` so that all used
/// devices finish at the same time (thesis Eq. 6.5, for `k` devices):
///
/// `T = (w + Σ δ_i/γ_i) / Σ 1/γ_i` over the used devices, and `w_i = (T − δ_i) / γ_i`.
///
/// A device whose share comes out negative (`δ_i ≥ T`: its fixed cost alone exceeds the
/// others' finish time) is dropped and the rest re-solved; with two devices this is the
/// thesis's clamping (all work to one side). A device with `γ = 0` takes everything (the
/// cheapest such one). Shares are rounded to integers that add up to `total`, and a device's
/// share to a multiple of its `granule` (e.g. a GPU's wave size) where `granules` is given; the
/// rounding remainder goes to devices with granule 1.
///
/// ```
/// use hetero_sched::split::{AffineModel, solve_static};
/// // The digest's worked example (§14.8): both sides take 0.4042 s.
/// let cpu = AffineModel::new(2e-6, 1e-3);
/// let gpu = AffineModel::new(0.5e-6, 5e-3);
/// assert_eq!(solve_static(1_000_000, &[cpu, gpu], None)?, vec![201_600, 798_400]);
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
///
/// # Errors
/// [`SplitError::NoDevices`]; [`SplitError::BadModel`] for NaN, infinite or negative
/// coefficients; [`SplitError::Mismatch`] or [`SplitError::Invalid`] for bad granules.
pub fn solve_static(total: usize, models: &[AffineModel], granules: Option<&[usize]>) -> Result<Vec<usize>> {
    if models.is_empty() {
        return Err(SplitError::NoDevices);
    }
    for (i, m) in models.iter().enumerate() {
        m.check(i)?;
    }
    let ones = vec![1; models.len()];
    let granules = granules.unwrap_or(&ones);
    if granules.len() != models.len() {
        return Err(SplitError::Mismatch { what: "granules", got: granules.len(), devices: models.len() });
    }
    if granules.contains(&0) {
        return Err(SplitError::Invalid("a granule of 0 items".into()));
    }
    let real = real_shares(total as f64, models);
    Ok(round_shares(total, &real, granules))
}

/// The continuous equal-finish-time shares.
fn real_shares(total: f64, models: &[AffineModel]) -> Vec<f64> {
    let mut shares = vec![0.0; models.len()];
    if total == 0.0 {
        return shares;
    }
    // A device with no per-item cost finishes everything in δ: give it all (cheapest δ).
    let free = (0..models.len()).filter(|&i| models[i].gamma == 0.0);
    if let Some(i) = free.min_by(|&a, &b| models[a].delta.total_cmp(&models[b].delta)) {
        shares[i] = total;
        return shares;
    }
    let mut used: Vec<usize> = (0..models.len()).collect();
    loop {
        let inv: f64 = used.iter().map(|&i| 1.0 / models[i].gamma).sum();
        let lag: f64 = used.iter().map(|&i| models[i].delta / models[i].gamma).sum();
        let finish = (total + lag) / inv;
        let before = used.len();
        // Dropping a device with a negative share lowers T, so a dropped device never returns.
        used.retain(|&i| models[i].delta < finish);
        if used.len() == before {
            for &i in &used {
                shares[i] = ((finish - models[i].delta) / models[i].gamma).clamp(0.0, total);
            }
            return shares;
        }
        if used.is_empty() {
            // Every δ ≥ T can only happen through rounding: the smallest δ takes everything.
            let best = (0..models.len()).min_by(|&a, &b| models[a].time(0).total_cmp(&models[b].time(0)));
            shares[best.expect("at least one model")] = total;
            return shares;
        }
    }
}

/// Integer shares adding up to `total`: granule multiples first, then the remainder by largest
/// fractional part among granule-1 devices (or to the largest share when there is none).
fn round_shares(total: usize, real: &[f64], granules: &[usize]) -> Vec<usize> {
    let mut shares: Vec<usize> =
        real.iter().zip(granules).map(|(&r, &g)| ((r / g as f64).floor() as usize) * g).collect();
    let mut assigned: usize = shares.iter().sum();
    while assigned > total {
        // Floors never exceed the real shares, but guard against float drift anyway.
        let i = (0..shares.len()).max_by_key(|&i| shares[i]).expect("non-empty");
        let cut = (assigned - total).min(shares[i]);
        shares[i] -= cut;
        assigned -= cut;
    }
    let mut fine: Vec<usize> = (0..real.len()).filter(|&i| granules[i] == 1).collect();
    if fine.is_empty() {
        let i = (0..real.len()).max_by(|&a, &b| real[a].total_cmp(&real[b])).expect("non-empty");
        shares[i] += total - assigned;
        return shares;
    }
    fine.sort_by(|&a, &b| (real[b] - shares[b] as f64).total_cmp(&(real[a] - shares[a] as f64)));
    let mut left = total - assigned;
    for &i in fine.iter().cycle() {
        if left == 0 {
            break;
        }
        shares[i] += 1;
        left -= 1;
    }
    shares
}

/// Models corrected by what a split measured: device `i` processed `shares[i]` items in
/// `seconds[i]` (e.g. from [`run_static_timed`](super::run_static_timed)), and its model is
/// scaled (both coefficients) so that it predicts exactly that. Devices without work keep their
/// model. Solving again with the result moves the split point to where the devices would have
/// finished together under the conditions of that run: the second, corrected split.
///
/// ```
/// use hetero_sched::split::{AffineModel, refine, solve_static};
/// // Calibrated alone, the second device looked 2x slower; together it was 3x slower.
/// let models = [AffineModel::new(1e-6, 0.0), AffineModel::new(2e-6, 0.0)];
/// let shares = solve_static(3000, &models, None)?; // [2000, 1000]
/// let seen = [2000.0 * 1e-6, 1000.0 * 3e-6];
/// let better = refine(&models, &shares, &seen)?;
/// assert_eq!(solve_static(3000, &better, None)?, vec![2250, 750]);
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
///
/// # Errors
/// [`SplitError::Mismatch`] when the lengths differ; [`SplitError::Invalid`] for a time that is
/// not finite and non-negative; [`SplitError::BadModel`] for unusable models.
pub fn refine(models: &[AffineModel], shares: &[usize], seconds: &[f64]) -> Result<Vec<AffineModel>> {
    for (what, got) in [("shares", shares.len()), ("times", seconds.len())] {
        if got != models.len() {
            return Err(SplitError::Mismatch { what, got, devices: models.len() });
        }
    }
    models
        .iter()
        .zip(shares.iter().zip(seconds))
        .enumerate()
        .map(|(i, (m, (&w, &t)))| {
            m.check(i)?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(SplitError::Invalid(format!("measured time {t} s of device {i}")));
            }
            let predicted = m.time(w);
            if w == 0 || predicted <= 0.0 {
                return Ok(*m);
            }
            let scale = t / predicted;
            Ok(AffineModel::new(m.gamma * scale, m.delta * scale))
        })
        .collect()
}

/// The fraction-based split of the thesis's proportional model (Eq. 6.3): with
/// `β = t_cpu(w_c) / t_gpu(w_c)`, the first device gets `total / (1 + β)`.
///
/// ```
/// use hetero_sched::split::proportional_split;
/// assert_eq!(proportional_split(1_000_000, 4.0)?, 200_000);
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
///
/// # Errors
/// [`SplitError::Invalid`] for a ratio that is not finite and positive.
pub fn proportional_split(total: usize, beta: f64) -> Result<usize> {
    if !(beta.is_finite() && beta > 0.0) {
        return Err(SplitError::Invalid(format!("time ratio {beta}")));
    }
    Ok(((total as f64 / (1.0 + beta)).round() as usize).min(total))
}
