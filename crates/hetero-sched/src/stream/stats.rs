//! Per-stage counters, kept in thread-locals so endpoints need no handle to their stage: every
//! stage runs on its own thread, and the runtime reads the counters when the stage returns.

use std::cell::{Cell, RefCell};
use std::time::Instant;

/// Blocked intervals kept per stage for the timeline; beyond this many, short waits are merged
/// into their predecessor so memory stays bounded on long runs.
const MAX_INTERVALS: usize = 4096;

/// What one stage thread did, in counts and nanoseconds since the run's origin.
#[derive(Debug, Default, Clone)]
pub(crate) struct Counters {
    pub(crate) popped: u64,
    pub(crate) pushed: u64,
    pub(crate) batches: u64,
    pub(crate) blocked_ns: u64,
    /// `(start, end)` of each wait in `pop`, nanoseconds since the run's origin.
    pub(crate) blocked: Vec<(u64, u64)>,
    /// `(start, end, label)` of device transfers the stage issued.
    pub(crate) transfers: Vec<(u64, u64, &'static str)>,
}

thread_local! {
    static ACTIVE: Cell<Option<Instant>> = const { Cell::new(None) };
    static COUNTERS: RefCell<Counters> = RefCell::new(Counters::default());
    // The per-item counts are plain cells, counted whether or not a stage is active (cheaper
    // than checking, on the path of every push and pop) and reset when a stage begins.
    static POPPED: Cell<u64> = const { Cell::new(0) };
    static PUSHED: Cell<u64> = const { Cell::new(0) };
    static BATCHES: Cell<u64> = const { Cell::new(0) };
}

/// Starts counting on this thread, with `origin` as time zero.
pub(crate) fn begin(origin: Instant) {
    ACTIVE.with(|a| a.set(Some(origin)));
    COUNTERS.with(|c| *c.borrow_mut() = Counters::default());
    for cell in [&POPPED, &PUSHED, &BATCHES] {
        cell.with(|c| c.set(0));
    }
}

/// Stops counting on this thread and returns what was counted.
pub(crate) fn end() -> Counters {
    ACTIVE.with(|a| a.set(None));
    let mut counters = COUNTERS.with(|c| std::mem::take(&mut *c.borrow_mut()));
    counters.popped = POPPED.with(Cell::get);
    counters.pushed = PUSHED.with(Cell::get);
    counters.batches = BATCHES.with(Cell::get);
    counters
}

fn with(f: impl FnOnce(&mut Counters)) {
    if ACTIVE.with(Cell::get).is_some() {
        COUNTERS.with(|c| f(&mut c.borrow_mut()));
    }
}

pub(crate) fn popped(n: usize) {
    POPPED.with(|c| c.set(c.get() + n as u64));
}

pub(crate) fn pushed(n: usize) {
    PUSHED.with(|c| c.set(c.get() + n as u64));
}

pub(crate) fn batch() {
    BATCHES.with(|c| c.set(c.get() + 1));
}

fn since_origin(t: Instant) -> Option<u64> {
    ACTIVE.with(Cell::get).map(|o| t.saturating_duration_since(o).as_nanos() as u64)
}

/// Records a wait that started at `from` and ends now.
pub(crate) fn blocked(from: Instant) {
    let (Some(a), Some(b)) = (since_origin(from), since_origin(Instant::now())) else { return };
    with(|c| {
        c.blocked_ns += b - a;
        if c.blocked.len() >= MAX_INTERVALS {
            if let Some(last) = c.blocked.last_mut() {
                last.1 = b;
            }
        } else {
            c.blocked.push((a, b));
        }
    });
}

/// Records a host-side view of a device transfer: from `from` (issue) to now.
pub(crate) fn transfer(from: Instant, label: &'static str) {
    let (Some(a), Some(b)) = (since_origin(from), since_origin(Instant::now())) else { return };
    with(|c| {
        if c.transfers.len() < MAX_INTERVALS {
            c.transfers.push((a, b, label));
        }
    });
}
