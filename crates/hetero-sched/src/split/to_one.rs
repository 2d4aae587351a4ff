//! The to-one map (thesis §6.3, §6.6.1): operations that must run on one device (their data
//! would cross PCIe too often if split) go to the device measured fastest for the problem shape;
//! the decision is measured once per shape and persisted.

use super::device::Device;
use super::error::{BoxError, Result, SplitError};
use super::store::{Choice, ChoiceKey, SplitStore};

/// Chooses, per operation and problem shape, the fastest of a set of devices, through a
/// [`SplitStore`].
///
/// ```
/// use hetero_sched::split::{CpuDevice, Device, MemoryStore, ToOneMap, Throttled};
/// let fast = CpuDevice::with_threads(1)?;
/// let slow = Throttled::new(CpuDevice::with_threads(1)?, 3.0)?;
/// let devices: [&dyn Device; 2] = [&slow, &fast];
/// let store = MemoryStore::new();
/// let map = ToOneMap::new(&store, 3);
/// // "Measuring" here returns fixed times; a real caller times the operation on the device.
/// let pick = map.choose("hierarchize", "d3-n5", &devices, |i, _| Ok([3e-3, 1e-3][i]))?;
/// assert_eq!(pick, 1);
/// assert_eq!(map.lookup("hierarchize", "d3-n5", &devices), Some(1));
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ToOneMap<'s> {
    store: &'s dyn SplitStore,
    runs: usize,
}

impl<'s> ToOneMap<'s> {
    /// A map over `store` that times each candidate `runs` times (median, after a warm-up).
    pub fn new(store: &'s dyn SplitStore, runs: usize) -> Self {
        ToOneMap { store, runs: runs.max(1) }
    }

    /// The stored choice for `operation` at `shape` among `devices` (index into `devices`).
    pub fn lookup(&self, operation: &str, shape: &str, devices: &[&dyn Device]) -> Option<usize> {
        let prints: Vec<String> = devices.iter().map(|d| d.fingerprint()).collect();
        let choice = self.store.choice(&key(operation, shape, &prints))?;
        prints.iter().position(|p| *p == choice.device)
    }

    /// The stored choice, or a measurement of every device (`measure(i, device)` runs the
    /// operation once on device `i` and returns its seconds) whose fastest is stored and
    /// returned. A device whose measurement fails is not a candidate.
    ///
    /// # Errors
    /// [`SplitError::NoDevices`]; the first failure when every device fails;
    /// [`SplitError::Store`] when the choice cannot be stored.
    pub fn choose(
        &self,
        operation: &str,
        shape: &str,
        devices: &[&dyn Device],
        mut measure: impl FnMut(usize, &dyn Device) -> Result<f64, BoxError>,
    ) -> Result<usize> {
        if devices.is_empty() {
            return Err(SplitError::NoDevices);
        }
        if let Some(i) = self.lookup(operation, shape, devices) {
            return Ok(i);
        }
        let mut times: Vec<(usize, f64)> = Vec::new();
        let mut first_error = None;
        for (i, &d) in devices.iter().enumerate() {
            match self.median(i, d, &mut measure) {
                Ok(t) => times.push((i, t)),
                Err(source) => {
                    first_error.get_or_insert(SplitError::Task { fingerprint: d.fingerprint(), source });
                }
            }
        }
        let Some(&(best, _)) = times.iter().min_by(|a, b| a.1.total_cmp(&b.1)) else {
            return Err(first_error.expect("every device failed"));
        };
        let prints: Vec<String> = devices.iter().map(|d| d.fingerprint()).collect();
        let choice = Choice {
            device: prints[best].clone(),
            seconds: times.iter().map(|&(i, t)| (prints[i].clone(), t)).collect(),
        };
        tracing::debug!(operation, shape, ?choice, "to-one choice measured");
        self.store.put_choice(key(operation, shape, &prints), choice)?;
        Ok(best)
    }

    fn median(
        &self,
        i: usize,
        d: &dyn Device,
        measure: &mut impl FnMut(usize, &dyn Device) -> Result<f64, BoxError>,
    ) -> Result<f64, BoxError> {
        measure(i, d)?;
        let mut times = Vec::with_capacity(self.runs);
        for _ in 0..self.runs {
            let t = measure(i, d)?;
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("measured time {t}").into());
            }
            times.push(t);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

fn key(operation: &str, shape: &str, prints: &[String]) -> ChoiceKey {
    let mut devices = prints.to_vec();
    devices.sort();
    ChoiceKey { operation: operation.into(), shape: shape.into(), devices }
}

/// The power-of-two bucket of a size (`"2^k"` with `2^(k−1) < n ≤ 2^k`), a shape key for
/// operations whose best device changes only slowly with the size.
///
/// ```
/// assert_eq!(hetero_sched::split::size_bucket(1000), "2^10");
/// assert_eq!(hetero_sched::split::size_bucket(1024), "2^10");
/// ```
pub fn size_bucket(n: usize) -> String {
    format!("2^{}", n.max(1).next_power_of_two().trailing_zeros())
}
