//! Time sources: the monotonic clock calibrations use, and a manual one tests drive.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A source of seconds since some fixed origin.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Seconds since this clock's origin; never decreases.
    fn seconds(&self) -> f64;
}

/// The process's monotonic clock ([`Instant`]).
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    origin: Instant,
}

impl MonotonicClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        MonotonicClock { origin: Instant::now() }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    fn seconds(&self) -> f64 {
        self.origin.elapsed().as_secs_f64()
    }
}

/// A clock that only moves when told to: fake devices advance it by the time their work would
/// take, so calibrations and schedules can be tested exactly.
///
/// ```
/// use hetero_sched::split::{Clock, ManualClock};
/// let clock = ManualClock::new();
/// clock.advance(0.25);
/// assert_eq!(clock.seconds(), 0.25);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    bits: AtomicU64,
}

impl ManualClock {
    /// A clock at 0 s.
    pub fn new() -> Self {
        ManualClock { bits: AtomicU64::new(0f64.to_bits()) }
    }

    /// Moves the clock forward by `dt` seconds (negative or non-finite steps are ignored, so
    /// the clock stays monotonic).
    pub fn advance(&self, dt: f64) {
        if !(dt.is_finite() && dt > 0.0) {
            return;
        }
        // fetch_update retries on contention: concurrent advances all count.
        let _ = self
            .bits
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| Some((f64::from_bits(b) + dt).to_bits()));
    }
}

impl Clock for ManualClock {
    fn seconds(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Acquire))
    }
}
