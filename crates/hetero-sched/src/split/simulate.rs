//! A discrete-event simulation of the dynamic queue in virtual time: the same [`DynamicPlan`]
//! rules, devices whose tasks take exactly what their models say. It answers "what would this
//! plan do" without running anything, and lets tests check the queue's invariants exactly.

use std::ops::Range;

use super::device::DeviceKind;
use super::error::{Result, SplitError};
use super::model::AffineModel;
use super::queue::DynamicPlan;

/// A simulated device: a task of `n` items takes `model.time(n)` on one of its workers. A GPU
/// is one worker that processes its tasks one after another (copy–compute overlap is not
/// modelled).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimDevice {
    /// The scheduling role.
    pub kind: DeviceKind,
    /// Workers (CPU threads; 1 for a GPU).
    pub workers: usize,
    /// Time of one task on one worker.
    pub model: AffineModel,
}

/// One task of a simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct SimTask {
    /// Device index.
    pub device: usize,
    /// Worker of that device.
    pub worker: usize,
    /// Items processed.
    pub range: Range<usize>,
    /// Virtual start time (s).
    pub start: f64,
    /// Virtual end time (s).
    pub end: f64,
}

/// Simulates `plan` over `total` items: whenever a worker is free (earliest first, ties by
/// device then worker), it pops what the plan gives it. Returns the tasks in pop order.
///
/// # Errors
/// [`SplitError::Mismatch`] when the plan has another number of devices;
/// [`SplitError::Invalid`] for devices with no workers; [`SplitError::BadModel`].
pub fn simulate(total: usize, devices: &[SimDevice], plan: &DynamicPlan) -> Result<Vec<SimTask>> {
    if plan.devices() != devices.len() {
        return Err(SplitError::Mismatch {
            what: "plan entries",
            got: plan.devices(),
            devices: devices.len(),
        });
    }
    let mut free: Vec<(f64, usize, usize)> = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        d.model.check(i)?;
        if d.workers == 0 {
            return Err(SplitError::Invalid(format!("simulated device {i} has no workers")));
        }
        free.extend((0..d.workers).map(|w| (0.0, i, w)));
    }
    let mut tasks = Vec::new();
    let mut next = 0;
    while next < total {
        let k = (0..free.len())
            .min_by(|&a, &b| {
                free[a].0.total_cmp(&free[b].0).then((free[a].1, free[a].2).cmp(&(free[b].1, free[b].2)))
            })
            .expect("at least one worker");
        let (start, device, worker) = free[k];
        let n = plan.take(device, total - next).clamp(1, total - next);
        let end = start + devices[device].model.time(n);
        tasks.push(SimTask { device, worker, range: next..next + n, start, end });
        next += n;
        free[k].0 = end;
    }
    Ok(tasks)
}
