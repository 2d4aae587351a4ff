//! Multi-threaded scan: a CPU version of the GPU's single-pass chained scan.
//!
//! The array is cut into tiles of [`TILE_BYTES`] (small enough to stay in a core's L2). Workers
//! take tiles in order from an atomic ticket. For each tile a worker
//!
//! 1. reduces the tile (one read from memory, which leaves the tile in L2),
//! 2. waits for the previous tile's inclusive prefix `P_{i-1}` and publishes `P_i = P_{i-1} ⊕ sum_i`,
//! 3. rescans the tile from `P_{i-1}`, reading it from L2 and writing it once.
//!
//! So memory sees one read and one write per element, as in the sequential scan, where the
//! classic two-pass scan (reduce everything, then rescan everything) reads the data twice from
//! memory. The wait in step 2 is short: the previous tile's owner publishes right after its
//! reduction, before its rescan. (On the 2-vCPU test VM both designs ran at the same speed,
//! 9.7 ms and 10.1 ms for 2^24 f32, because there the scan's arithmetic, not memory, is the
//! limit; the chained one is kept for its determinism and for machines with more cores per
//! memory channel.)
//!
//! Tiles are taken in order and a worker only waits for a tile that an earlier ticket already
//! holds, and whose owner is running. The oldest waiting tile always has a predecessor that has
//! published, or is reducing (which needs nothing), so the chain always advances: no deadlock,
//! whatever the number of workers.
//!
//! A panicking operator must not leave the others waiting: a worker that unwinds marks the
//! chain as failed (a drop guard), every waiter gives up when it sees the mark, and
//! `rayon::scope` then resumes the panic on the caller's thread.
//!
//! Results are deterministic: every prefix is `P_{i-1} ⊕ sum_i` in tile order, and the tiles
//! depend only on the length, the element size and the tile parameter, not on the number of
//! threads or the timing.
//!
//! Below [`PAR_THRESHOLD`] elements (or the tuned threshold) the single-thread path runs instead.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::op::Monoid;
use super::single;
use super::tuning::ScanTuning;
use crate::shared_mut::SharedMut;
use hetero_sched::tune::dispatch::Tunable;

/// Inputs shorter than this many elements are scanned on one thread (starting workers costs
/// more than a second core saves below about 2^17 elements). The default of the tuning
/// parameter [`ScanTuning::par_threshold`].
pub const PAR_THRESHOLD: usize = 1 << 17;

/// Bytes per tile: half of a 512 KiB L2, so a tile survives between its reduction and its
/// rescan while the other half serves everything else. The default of
/// [`ScanTuning::tile_bytes`].
pub const TILE_BYTES: usize = 256 << 10;

/// Inclusive (`exclusive == false`) or exclusive scan over all rayon threads, with the tuned
/// parameters for this length and type ([`Tunable::tuned`]).
pub fn scan<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M, exclusive: bool) {
    scan_with(xs, op, exclusive, &ScanTuning::tuned::<T>(xs.len()))
}

/// [`scan`] with explicit parameters (what the tuner measures).
pub fn scan_with<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &mut [T],
    op: M,
    exclusive: bool,
    tuning: &ScanTuning,
) {
    let threads = rayon::current_num_threads();
    if threads < 2 || xs.len() < tuning.par_threshold {
        if exclusive {
            single::exclusive(xs, op)
        } else {
            single::inclusive(xs, op)
        }
        return;
    }
    let tile = tile_len_for::<T>(tuning.tile_bytes);
    let tiles = xs.len().div_ceil(tile);
    let chain = Chain::<T>::new(tiles);
    let ticket = AtomicUsize::new(0);
    let (len, data) = (xs.len(), SharedMut::new(xs));
    let worker = || {
        let _poison = PoisonOnUnwind(&chain.failed);
        loop {
            let i = ticket.fetch_add(1, Ordering::Relaxed);
            if i >= tiles {
                return;
            }
            let range = i * tile..((i + 1) * tile).min(len);
            // SAFETY: each ticket is handed out once, so tile `i` is this worker's alone, and
            // `xs` outlives the scope below.
            let part = unsafe { std::slice::from_raw_parts_mut(data.get().add(range.start), range.len()) };
            let sum = single::reduce(part, op);
            let before = if i == 0 {
                op.identity()
            } else {
                // Another worker panicked: stop, and let the scope resume its panic.
                let Some(p) = chain.wait(i - 1) else { return };
                p
            };
            chain.publish(i, op.combine(before, sum));
            if exclusive {
                single::exclusive_from(part, before, op);
            } else {
                single::inclusive_from(part, before, op);
            }
        }
    };
    rayon::scope(|s| {
        for _ in 1..threads.min(tiles) {
            s.spawn(|_| worker());
        }
        worker();
    });
}

/// Elements per tile: [`TILE_BYTES`] worth, a multiple of the single-thread block length so
/// that tiles split the array where the single-thread scan's blocks do.
pub fn tile_len<T>() -> usize {
    tile_len_for::<T>(TILE_BYTES)
}

/// Elements per tile of `tile_bytes` bytes (at least one block of the single-thread scan).
pub fn tile_len_for<T>(tile_bytes: usize) -> usize {
    (tile_bytes / size_of::<T>().max(1)).max(1).next_multiple_of(single::LANES)
}

/// One value per tile (the tile's inclusive prefix here, its carry-out in the segmented scan),
/// each published once, and whether a worker died.
pub(crate) struct Chain<T> {
    slots: Vec<Slot<T>>,
    pub(crate) failed: AtomicBool,
}

/// Sets its flag when dropped during a panic, so the waiters of a dead worker's tile stop.
pub(crate) struct PoisonOnUnwind<'a>(pub(crate) &'a AtomicBool);

impl Drop for PoisonOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Release);
        }
    }
}

struct Slot<T> {
    ready: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: a slot's value is written once, before `ready` is set with release ordering, and read
// only after `ready` is seen with acquire ordering; `T: Send` lets the value cross threads.
unsafe impl<T: Send> Sync for Chain<T> {}

impl<T: Copy> Chain<T> {
    pub(crate) fn new(tiles: usize) -> Self {
        let slots = (0..tiles)
            .map(|_| Slot { ready: AtomicBool::new(false), value: UnsafeCell::new(MaybeUninit::uninit()) })
            .collect();
        Chain { slots, failed: AtomicBool::new(false) }
    }

    pub(crate) fn publish(&self, i: usize, prefix: T) {
        let slot = &self.slots[i];
        // SAFETY: only the owner of tile `i` writes slot `i`, once, and nobody reads it before
        // `ready` is set below.
        unsafe { (*slot.value.get()).write(prefix) };
        slot.ready.store(true, Ordering::Release);
    }

    /// Tile `i`'s value, once its owner has published it, or `None` once any worker has
    /// panicked (the owner may be dead). Spins briefly, then yields, so a descheduled owner on
    /// a loaded machine gets the core back.
    pub(crate) fn wait(&self, i: usize) -> Option<T> {
        let slot = &self.slots[i];
        let mut spins = 0u32;
        while !slot.ready.load(Ordering::Acquire) {
            if self.failed.load(Ordering::Acquire) {
                return None;
            }
            if spins < 1 << 10 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
        // SAFETY: `ready` (acquire) orders this read after the owner's write.
        Some(unsafe { (*slot.value.get()).assume_init() })
    }
}
