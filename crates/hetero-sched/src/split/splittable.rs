//! [`Splittable`]: an operation over `0..n` that the schedulers can cut into ranges, and the
//! [`Piece`]s they hand back.

use std::ops::Range;

use super::device::Device;
use super::error::BoxError;

/// An operation over the work items `0..items()` whose sub-ranges can run independently: a CPU
/// implementation (required) and a GPU one (optional), which the static and dynamic schedulers
/// run on the devices they are given.
///
/// The GPU implementation is split in two so that one host thread can keep several streams
/// busy: [`submit`](Self::submit) queues a range on a lane (a stream with its buffers) and
/// returns at once; [`complete`](Self::complete) waits for that lane's range and returns its
/// output. The schedulers call `complete` exactly once after each `submit`, before the next
/// `submit` on the same lane.
///
/// ```
/// use std::ops::Range;
/// use hetero_sched::split::{BoxError, CpuDevice, Device, Splittable, run_static};
///
/// /// Squares of 0..n.
/// struct Squares(usize);
/// impl Splittable for Squares {
///     type Output = Vec<u64>;
///     type Lane = ();
///     fn items(&self) -> usize { self.0 }
///     fn run_cpu(&self, r: Range<usize>) -> Result<Vec<u64>, BoxError> {
///         Ok(r.map(|i| (i * i) as u64).collect())
///     }
/// }
///
/// let (a, b) = (CpuDevice::with_threads(1)?, CpuDevice::with_threads(1)?);
/// let devices: [&dyn Device; 2] = [&a, &b];
/// let pieces = run_static(&Squares(10), &devices, &[4, 6])?;
/// let all: Vec<u64> = pieces.into_iter().flat_map(|p| p.output).collect();
/// assert_eq!(all, (0..10u64).map(|i| i * i).collect::<Vec<_>>());
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
pub trait Splittable: Sync {
    /// What processing one range produces (often a `Vec` of its results).
    type Output: Send;
    /// Per-stream state of the GPU implementation (`()` for CPU-only operations).
    type Lane: Send;

    /// Number of work items.
    fn items(&self) -> usize;

    /// Processes `range` on the calling CPU thread.
    ///
    /// # Errors
    /// Whatever the operation reports; the scheduler stops and returns it.
    fn run_cpu(&self, range: Range<usize>) -> Result<Self::Output, BoxError>;

    /// True when [`run_cpu`](Self::run_cpu) parallelises itself (with rayon, inside the pool of
    /// the device that calls it): a static split then hands a CPU device its whole share in one
    /// call instead of one part per worker.
    fn cpu_splits_itself(&self) -> bool {
        false
    }

    /// True when the GPU methods are implemented.
    fn has_gpu(&self) -> bool {
        false
    }

    /// Opens lane `lane` (`0..device.lanes()`) on a GPU `device`: a stream and its buffers.
    ///
    /// # Errors
    /// The default has no GPU implementation and always fails.
    fn open_lane(&self, device: &dyn Device, lane: usize) -> Result<Self::Lane, BoxError> {
        let _ = lane;
        Err(format!("no GPU implementation for {}", device.fingerprint()).into())
    }

    /// Queues `range` on `lane` without waiting for it.
    ///
    /// # Errors
    /// The default has no GPU implementation and always fails.
    fn submit(&self, lane: &mut Self::Lane, range: Range<usize>) -> Result<(), BoxError> {
        let _ = (lane, range);
        Err("no GPU implementation".into())
    }

    /// Waits for the range last submitted on `lane` and returns its output.
    ///
    /// # Errors
    /// The default has no GPU implementation and always fails.
    fn complete(&self, lane: &mut Self::Lane) -> Result<Self::Output, BoxError> {
        let _ = lane;
        Err("no GPU implementation".into())
    }
}

/// The output of one range, and the index of the device (in the list the scheduler was given)
/// that produced it. Schedulers return pieces sorted by `range.start`, covering `0..items()`.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece<O> {
    /// The items processed.
    pub range: Range<usize>,
    /// The device that processed them.
    pub device: usize,
    /// The operation's output for them.
    pub output: O,
}

/// Concatenates the outputs of pieces that hold one `Vec` element per item, in item order.
///
/// ```
/// use hetero_sched::split::{Piece, concat};
/// let pieces = vec![
///     Piece { range: 0..2, device: 1, output: vec![1, 2] },
///     Piece { range: 2..3, device: 0, output: vec![3] },
/// ];
/// assert_eq!(concat(pieces), vec![1, 2, 3]);
/// ```
pub fn concat<T>(pieces: Vec<Piece<Vec<T>>>) -> Vec<T> {
    let total = pieces.iter().map(|p| p.output.len()).sum();
    let mut out = Vec::with_capacity(total);
    for p in pieces {
        out.extend(p.output);
    }
    out
}
