//! The executors: a static split (each device one contiguous range) and the dynamic
//! multi-grain queue, both over [`Splittable`] operations on [`Device`]s.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::clock::Clock;
use super::device::{Device, DeviceKind};
use super::error::{BoxError, Result, SplitError};
use super::queue::{Cursor, DynamicPlan};
use super::splittable::{Piece, Splittable};

/// Runs `op` with device `i` processing the `shares[i]` items that follow device `i − 1`'s
/// (a static split: see [`solve_static`](super::solve_static) for the shares). A CPU device
/// cuts its range into one part per worker (unless the operation
/// [parallelises itself](Splittable::cpu_splits_itself)); a GPU device into one part per lane, all queued
/// before the first is waited for, so copies of one overlap the computation of another. Devices
/// run concurrently.
///
/// # Errors
/// [`SplitError::NoDevices`]; [`SplitError::Mismatch`] or [`SplitError::Invalid`] when the
/// shares do not pair with the devices or add up to `op.items()`;
/// [`SplitError::Unsupported`] for a GPU device with work and an operation without a GPU
/// implementation; the operation's failures.
pub fn run_static<S: Splittable>(
    op: &S,
    devices: &[&dyn Device],
    shares: &[usize],
) -> Result<Vec<Piece<S::Output>>> {
    static_split(op, devices, shares, None).map(|(pieces, _)| pieces)
}

/// The pieces of a split and each device's finish time in seconds ([`run_static_timed`]).
pub type TimedPieces<O> = (Vec<Piece<O>>, Vec<f64>);

/// [`run_static`], also returning the seconds (read from `clock`) from the start until each
/// device finished its share (0 for a device without work): what [`refine`](super::refine)
/// needs to correct the models that chose the shares.
///
/// # Errors
/// As [`run_static`].
pub fn run_static_timed<S: Splittable>(
    op: &S,
    devices: &[&dyn Device],
    shares: &[usize],
    clock: &dyn Clock,
) -> Result<TimedPieces<S::Output>> {
    static_split(op, devices, shares, Some(clock))
}

/// [`run_static`] with finish times when a clock is given.
fn static_split<S: Splittable>(
    op: &S,
    devices: &[&dyn Device],
    shares: &[usize],
    clock: Option<&dyn Clock>,
) -> Result<TimedPieces<S::Output>> {
    if devices.is_empty() {
        return Err(SplitError::NoDevices);
    }
    if shares.len() != devices.len() {
        return Err(SplitError::Mismatch { what: "shares", got: shares.len(), devices: devices.len() });
    }
    let sum = shares.iter().try_fold(0usize, |a, &s| a.checked_add(s));
    if sum != Some(op.items()) {
        return Err(SplitError::Invalid(format!("shares {shares:?} do not add up to {} items", op.items())));
    }
    check_support(op, devices, |i| shares[i] > 0)?;
    let mut ranges = Vec::with_capacity(devices.len());
    let mut start = 0;
    for &s in shares {
        ranges.push(start..start + s);
        start += s;
    }
    let sink = Sink::new();
    let finish = Mutex::new(vec![0.0; devices.len()]);
    let start = clock.map(|c| c.seconds());
    std::thread::scope(|sc| {
        for (i, (&dev, range)) in devices.iter().zip(ranges).enumerate() {
            if range.is_empty() {
                continue;
            }
            let (sink, finish) = (&sink, &finish);
            sc.spawn(move || {
                match dev.kind() {
                    DeviceKind::Cpu => static_cpu(op, dev, i, range, sink),
                    DeviceKind::Gpu => {
                        sink.guard(dev, || static_gpu(op, dev, i, range, sink));
                    }
                }
                if let (Some(c), Some(t0)) = (clock, start) {
                    finish.lock().unwrap_or_else(|e| e.into_inner())[i] = c.seconds() - t0;
                }
            });
        }
    });
    let pieces = sink.finish()?;
    Ok((pieces, finish.into_inner().unwrap_or_else(|e| e.into_inner())))
}

/// Runs `op` over the multi-grain queue of `plan` (thesis Listing 6.1): every CPU worker pops
/// small grains, every GPU worker large ones that it rotates over its lanes (waiting for a
/// lane's previous range just before reusing it), until the queue is empty. Every item is
/// processed exactly once.
///
/// # Errors
/// [`SplitError::Mismatch`] when the plan was made for another number of devices; as
/// [`run_static`].
pub fn run_dynamic<S: Splittable>(
    op: &S,
    devices: &[&dyn Device],
    plan: &DynamicPlan,
) -> Result<Vec<Piece<S::Output>>> {
    if devices.is_empty() {
        return Err(SplitError::NoDevices);
    }
    if plan.devices() != devices.len() {
        return Err(SplitError::Mismatch {
            what: "plan entries",
            got: plan.devices(),
            devices: devices.len(),
        });
    }
    check_support(op, devices, |_| true)?;
    let cursor = Cursor::new(op.items());
    let sink = Sink::new();
    if op.items() > 0 {
        std::thread::scope(|sc| {
            for (i, &dev) in devices.iter().enumerate() {
                let (sink, cursor) = (&sink, &cursor);
                sc.spawn(move || match dev.kind() {
                    DeviceKind::Cpu => dev.spawn_workers(&|_| {
                        let mut local = Vec::new();
                        while let Some(range) = cursor.pop(plan, i) {
                            match sink.grain(dev, || op.run_cpu(range.clone())) {
                                Some(output) => local.push(Piece { range, device: i, output }),
                                None => cursor.close(),
                            }
                        }
                        sink.extend(local);
                    }),
                    DeviceKind::Gpu => {
                        if sink.guard(dev, || dynamic_gpu(op, dev, i, plan, cursor, sink)).is_none() {
                            cursor.close();
                        }
                    }
                });
            }
        });
    }
    sink.finish()
}

/// Runs all of `op`'s items on one device (calibration, the to-one map).
pub(crate) fn run_one<S: Splittable>(
    op: &S,
    device: &dyn Device,
    items: usize,
) -> Result<Vec<Piece<S::Output>>> {
    let sub = Prefix { op, items };
    run_static(&sub, &[device], &[items])
}

/// `op` restricted to its first `items` items.
struct Prefix<'a, S> {
    op: &'a S,
    items: usize,
}

impl<S: Splittable> Splittable for Prefix<'_, S> {
    type Output = S::Output;
    type Lane = S::Lane;

    fn items(&self) -> usize {
        self.items
    }

    fn run_cpu(&self, range: Range<usize>) -> Result<S::Output, BoxError> {
        self.op.run_cpu(range)
    }

    fn has_gpu(&self) -> bool {
        self.op.has_gpu()
    }

    fn open_lane(&self, device: &dyn Device, lane: usize) -> Result<S::Lane, BoxError> {
        self.op.open_lane(device, lane)
    }

    fn submit(&self, lane: &mut S::Lane, range: Range<usize>) -> Result<(), BoxError> {
        self.op.submit(lane, range)
    }

    fn complete(&self, lane: &mut S::Lane) -> Result<S::Output, BoxError> {
        self.op.complete(lane)
    }
}

fn check_support<S: Splittable>(op: &S, devices: &[&dyn Device], busy: impl Fn(usize) -> bool) -> Result<()> {
    for (i, d) in devices.iter().enumerate() {
        if d.kind() == DeviceKind::Gpu && !op.has_gpu() && busy(i) {
            return Err(SplitError::Unsupported { device: i, fingerprint: d.fingerprint() });
        }
        if d.workers() == 0 || d.lanes() == 0 {
            return Err(SplitError::Invalid(format!("device {i} has no workers or lanes")));
        }
    }
    Ok(())
}

/// A CPU device's static share: one contiguous part per worker, or the whole share on one
/// worker for an operation that parallelises itself.
fn static_cpu<S: Splittable>(
    op: &S,
    dev: &dyn Device,
    i: usize,
    range: Range<usize>,
    sink: &Sink<S::Output>,
) {
    let parts = if op.cpu_splits_itself() { 1 } else { dev.workers() };
    dev.spawn_workers(&|w| {
        if w >= parts {
            return;
        }
        let part = nth_part(&range, parts, w);
        if part.is_empty() {
            return;
        }
        if let Some(output) = sink.grain(dev, || op.run_cpu(part.clone())) {
            sink.extend(vec![Piece { range: part, device: i, output }]);
        }
    });
}

/// Part `k` of `parts` nearly equal contiguous parts of `range`.
fn nth_part(range: &Range<usize>, parts: usize, k: usize) -> Range<usize> {
    let n = range.len();
    let (q, r) = (n / parts, n % parts);
    let start = range.start + k * q + k.min(r);
    start..start + q + usize::from(k < r)
}

/// A GPU device's static share: one part per lane, all submitted, then all completed.
fn static_gpu<S: Splittable>(
    op: &S,
    dev: &dyn Device,
    i: usize,
    range: Range<usize>,
    sink: &Sink<S::Output>,
) -> Result<(), BoxError> {
    let count = dev.lanes().min(range.len());
    let mut lanes: Vec<(S::Lane, Option<Range<usize>>)> = Vec::with_capacity(count);
    let mut submitted = || -> Result<(), BoxError> {
        for l in 0..count {
            lanes.push((op.open_lane(dev, l)?, None));
            let (lane, pending) = lanes.last_mut().expect("just pushed");
            let part = nth_part(&range, count, l);
            op.submit(lane, part.clone())?;
            *pending = Some(part);
        }
        Ok(())
    };
    let queued = submitted();
    let mut local = Vec::with_capacity(count);
    let drained = drain(op, i, &mut lanes, 0, &mut local);
    queued.and(drained)?;
    sink.extend(local);
    Ok(())
}

/// The GPU worker of Listing 6.1: lanes round-robin; a lane's previous range is completed just
/// before the lane is reused, and the queue is read only then, so no grain waits on the host.
fn dynamic_gpu<S: Splittable>(
    op: &S,
    dev: &dyn Device,
    i: usize,
    plan: &DynamicPlan,
    cursor: &Cursor,
    sink: &Sink<S::Output>,
) -> Result<(), BoxError> {
    let mut lanes: Vec<(S::Lane, Option<Range<usize>>)> = Vec::with_capacity(dev.lanes());
    for l in 0..dev.lanes() {
        lanes.push((op.open_lane(dev, l)?, None));
    }
    let mut local = Vec::new();
    let mut s = 0;
    let mut rotate = || -> Result<(), BoxError> {
        loop {
            let (lane, pending) = &mut lanes[s];
            if let Some(range) = pending.take() {
                local.push(Piece { output: op.complete(lane)?, range, device: i });
            }
            if sink.failed() {
                return Ok(());
            }
            let Some(range) = cursor.pop(plan, i) else { return Ok(()) };
            op.submit(lane, range.clone())?;
            *pending = Some(range);
            s = (s + 1) % lanes.len();
        }
    };
    let rotated = rotate();
    let drained = drain(op, i, &mut lanes, s, &mut local);
    rotated.and(drained)?;
    sink.extend(local);
    Ok(())
}

/// Completes every lane's pending range, oldest first from lane `first`, even after a failure:
/// a lane's buffers must not be freed while its stream still copies into them. Returns the first
/// error.
fn drain<S: Splittable>(
    op: &S,
    i: usize,
    lanes: &mut [(S::Lane, Option<Range<usize>>)],
    first: usize,
    local: &mut Vec<Piece<S::Output>>,
) -> Result<(), BoxError> {
    let n = lanes.len();
    let mut result = Ok(());
    for k in 0..n {
        let (lane, pending) = &mut lanes[(first + k) % n];
        if let Some(range) = pending.take() {
            match op.complete(lane) {
                Ok(output) => local.push(Piece { output, range, device: i }),
                Err(e) => {
                    if result.is_ok() {
                        result = Err(e);
                    }
                }
            }
        }
    }
    result
}

/// Collects pieces from all workers and the first failure.
struct Sink<O> {
    pieces: Mutex<Vec<Piece<O>>>,
    error: Mutex<Option<SplitError>>,
    failed: AtomicBool,
}

impl<O> Sink<O> {
    fn new() -> Self {
        Sink { pieces: Mutex::new(Vec::new()), error: Mutex::new(None), failed: AtomicBool::new(false) }
    }

    fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    fn extend(&self, local: Vec<Piece<O>>) {
        self.pieces.lock().unwrap_or_else(|e| e.into_inner()).extend(local);
    }

    fn fail(&self, e: SplitError) {
        self.failed.store(true, Ordering::Release);
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(e);
    }

    /// Runs one grain on `dev` (through [`Device::run_grain`]); `None` after recording a failure.
    fn grain<T>(&self, dev: &dyn Device, f: impl FnOnce() -> Result<T, BoxError>) -> Option<T> {
        if self.failed() {
            return None;
        }
        let mut f = Some(f);
        let mut out = None;
        dev.run_grain(&mut || out = f.take().map(|f| catch_unwind(AssertUnwindSafe(f))));
        match out {
            Some(Ok(Ok(v))) => Some(v),
            Some(Ok(Err(source))) => {
                self.fail(SplitError::Task { fingerprint: dev.fingerprint(), source });
                None
            }
            Some(Err(_)) | None => {
                self.fail(SplitError::Panicked { fingerprint: dev.fingerprint() });
                None
            }
        }
    }

    /// Runs a whole GPU worker; `None` after recording a failure.
    fn guard(&self, dev: &dyn Device, f: impl FnOnce() -> Result<(), BoxError>) -> Option<()> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(Ok(())) => Some(()),
            Ok(Err(source)) => {
                self.fail(SplitError::Task { fingerprint: dev.fingerprint(), source });
                None
            }
            Err(_) => {
                self.fail(SplitError::Panicked { fingerprint: dev.fingerprint() });
                None
            }
        }
    }

    fn finish(self) -> Result<Vec<Piece<O>>> {
        if let Some(e) = self.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        let mut pieces = self.pieces.into_inner().unwrap_or_else(|e| e.into_inner());
        pieces.sort_unstable_by_key(|p| p.range.start);
        Ok(pieces)
    }
}
