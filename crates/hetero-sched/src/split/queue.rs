//! The multi-grain dynamic queue of thesis Listing 6.1 (with the digest's corrected line): the
//! per-device rule for how many items a worker takes, and the lock-free cursor that hands them
//! out.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::device::DeviceKind;
use super::error::{Result, SplitError};
use super::model::AffineModel;

/// A device's preferred task: `items` per worker, taking `seconds` on one worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grain {
    /// Items per task.
    pub items: usize,
    /// Seconds one worker of the device needs for such a task (calibrated).
    pub seconds: f64,
}

/// How many items a worker of one device takes from what remains.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rule {
    grain: usize,
    /// Small-grain (CPU) workers take a full grain only while this many items remain.
    threshold: usize,
    /// What a small-grain worker takes below the threshold (its grain shrunk to the fastest
    /// other device's grain time).
    shrunk: usize,
    small: bool,
}

/// The rules of a multi-grain schedule, one per device.
///
/// For a CPU device `c` with grain `g_c` taking `t_c` on one of its `P_c` workers, and the
/// other devices `e` with grains `g_e`, times `t_e` and `P_e` workers:
///
/// - while at least `P_c·g_c + Σ_e P_e·⌈t_c / t_e⌉·g_e` items remain, a CPU worker takes `g_c`
///   (Listing 6.1's `g_cpu + ⌈α⌉·g_gpu`, with `α = t_cpu / t_gpu`, counting every worker that
///   eats from the queue while this task runs);
/// - below that it takes `min(⌈g_c · t_ref / t_c⌉, g_c, remaining)` where `t_ref` is the
///   shortest grain time of the other devices (the corrected `⌈α⁻¹·g_cpu⌉`), so its last
///   task ends within about one of the fast device's grains;
/// - a GPU worker always takes `min(g_gpu, remaining)`.
///
/// ```
/// use hetero_sched::split::{DeviceKind, DynamicPlan, Grain};
/// // One CPU worker (512 items in 1 ms), one GPU (16384 items in 0.25 ms): α = 4.
/// let plan = DynamicPlan::new(&[
///     (DeviceKind::Cpu, 1, Grain { items: 512, seconds: 1e-3 }),
///     (DeviceKind::Gpu, 1, Grain { items: 16384, seconds: 0.25e-3 }),
/// ])?;
/// assert_eq!(plan.take(0, 512 + 4 * 16384), 512);
/// assert_eq!(plan.take(0, 512 + 4 * 16384 - 1), 128); // ⌈512 / 4⌉
/// assert_eq!(plan.take(1, 1000), 1000);
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicPlan {
    rules: Vec<Rule>,
}

impl DynamicPlan {
    /// A plan from each device's kind, worker count and grain.
    ///
    /// # Errors
    /// [`SplitError::NoDevices`]; [`SplitError::Invalid`] for 0 workers, a grain of 0 items,
    /// or a grain time that is not finite and positive.
    pub fn new(devices: &[(DeviceKind, usize, Grain)]) -> Result<Self> {
        if devices.is_empty() {
            return Err(SplitError::NoDevices);
        }
        for (i, &(_, workers, g)) in devices.iter().enumerate() {
            if workers == 0 || g.items == 0 || !(g.seconds.is_finite() && g.seconds > 0.0) {
                return Err(SplitError::Invalid(format!(
                    "device {i}: {workers} workers, grain of {} items in {} s",
                    g.items, g.seconds
                )));
            }
        }
        let rules = (0..devices.len()).map(|c| rule_for(c, devices)).collect();
        Ok(DynamicPlan { rules })
    }

    /// A plan whose grain times come from device models calibrated over all workers of a
    /// device at once: a worker's grain takes `model.time(items · workers)`.
    ///
    /// # Errors
    /// As [`new`](Self::new); [`SplitError::BadModel`].
    pub fn from_models(devices: &[(DeviceKind, usize, usize, AffineModel)]) -> Result<Self> {
        let mut grains = Vec::with_capacity(devices.len());
        for (i, &(kind, workers, items, model)) in devices.iter().enumerate() {
            model.check(i)?;
            let seconds = model.time(items.saturating_mul(workers)).max(f64::MIN_POSITIVE);
            grains.push((kind, workers, Grain { items, seconds }));
        }
        Self::new(&grains)
    }

    /// Number of devices.
    pub fn devices(&self) -> usize {
        self.rules.len()
    }

    /// Items a worker of `device` takes when `remaining` are left (0 only when none are).
    pub fn take(&self, device: usize, remaining: usize) -> usize {
        let r = &self.rules[device];
        if !r.small {
            r.grain.min(remaining)
        } else if remaining >= r.threshold {
            r.grain
        } else {
            r.shrunk.min(remaining)
        }
    }
}

fn rule_for(c: usize, devices: &[(DeviceKind, usize, Grain)]) -> Rule {
    let (kind, workers, g) = devices[c];
    let small = kind == DeviceKind::Cpu;
    let mut threshold = workers.saturating_mul(g.items);
    let mut t_ref = f64::INFINITY;
    for (e, &(_, we, ge)) in devices.iter().enumerate() {
        if e == c {
            continue;
        }
        let tasks = (g.seconds / ge.seconds).ceil().max(1.0).min(usize::MAX as f64) as usize;
        threshold = threshold.saturating_add(we.saturating_mul(tasks).saturating_mul(ge.items));
        t_ref = t_ref.min(ge.seconds);
    }
    let shrunk = if t_ref < g.seconds {
        ((g.items as f64 * t_ref / g.seconds).ceil() as usize).clamp(1, g.items)
    } else {
        g.items
    };
    Rule { grain: g.items, threshold, shrunk, small }
}

/// The shared front of the queue: one atomic counter, advanced by compare-and-swap so that the
/// size decision and the cut happen atomically without a lock.
#[derive(Debug)]
pub(crate) struct Cursor {
    next: AtomicUsize,
    end: usize,
}

impl Cursor {
    pub(crate) fn new(end: usize) -> Self {
        Cursor { next: AtomicUsize::new(0), end }
    }

    /// Cuts the next range for a worker of `device`; `None` once the queue is empty.
    pub(crate) fn pop(&self, plan: &DynamicPlan, device: usize) -> Option<std::ops::Range<usize>> {
        let mut cur = self.next.load(Ordering::Relaxed);
        loop {
            let remaining = self.end - cur;
            if remaining == 0 {
                return None;
            }
            let n = plan.take(device, remaining).clamp(1, remaining);
            match self.next.compare_exchange_weak(cur, cur + n, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(cur..cur + n),
                Err(now) => cur = now,
            }
        }
    }

    /// Empties the queue (after a failure), so every worker stops at its next pop.
    pub(crate) fn close(&self) {
        self.next.store(self.end, Ordering::Release);
    }
}
