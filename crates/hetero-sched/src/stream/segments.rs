//! A channel's storage: an unbounded FIFO of items in a singly linked list of segments, written
//! by one producer at a time and read by one consumer, with no lock on the consumer's side; a push
//! costs a compare-and-swap on a line only producers touch and one store to the line the
//! consumer reads. This module holds all of the streaming runtime's `unsafe` code.
//!
//! # Layout
//!
//! Every item has a *position*: items are numbered 0, 1, 2, ... in the order they were pushed. A
//! [`Segment`] is a contiguous, initialised allocation holding the positions
//! `start .. start + len` for some `len <= cap`. Segments are linked oldest to newest through
//! `next`; the producer appends to the newest (the *tail*), the consumer reads from the oldest it
//! has not finished (the *head*). `published` counts the items made visible to the consumer; the
//! *tail lock* serialises producers (cloned senders).
//!
//! # Invariants (who may touch what)
//!
//! 1. **Writes.** Only the tail's *owner* touches the `Tail` and writes item memory, and only
//!    the tail segment's slots at or past its fill (positions `>= published`). Positions below
//!    `published` are never written again until their segment is recycled. The owner is the
//!    holder of the tail lock (taken by an `Acquire` compare-and-swap of `locked`, released by
//!    a `Release` store), or, without the lock, the only producer there is while it knows that
//!    no other can appear (an in-place slot of a sender without clones, see
//!    [`Storage::reserve_alone`]): no one else wants the lock then, and whoever takes it later
//!    is ordered after that producer by the way a second producer comes to exist (a clone made
//!    on the producer's thread and handed over, or a sender count read with `Acquire` after
//!    the other's `Release` decrement).
//! 2. **Publication.** The producer makes items visible by one store of the new count to
//!    `published` (`SeqCst`, which includes `Release`), while it owns the tail: every
//!    write of those items, and the link of a segment that holds them, happens before it. The
//!    consumer reads `published` with `Acquire` (or `SeqCst` in the parking handshake) and then
//!    reads only positions below the count it saw.
//! 3. **Sealing.** A segment is *sealed* when the producer stores a non-null `next` (`Release`),
//!    after writing `next`'s `start`. The producer never touches a segment again once it sealed
//!    it, so a sealed segment whose every position the consumer has passed belongs to the
//!    consumer alone, which recycles it (into `pool`) or frees it. If the consumer reads a null
//!    `next` after reading the published count, every published position it saw is in the head segment.
//! 4. **Ownership.** `first` is the oldest segment still linked (the consumer's head, updated
//!    when it moves on); every linked segment is reachable from it, so dropping the storage
//!    frees the chain from `first`, and the pool frees itself.

use std::cell::UnsafeCell;
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crossbeam_utils::{Backoff, CachePadded};

/// Items a standard segment holds: pushes share segments up to this many; bigger pushes get a
/// segment of their own size.
pub(super) const CHUNK: usize = 4096;
/// Unconsumed published bytes beyond which a producer starting a segment waits, for a bounded
/// time, for its consumer ([`Storage::keep_near`]): a quarter of a Zen 4 or Zen 5 core's 1 MiB
/// L2, so that what is queued stays in the caches.
const AHEAD_BYTES: usize = 256 << 10;
/// How long a producer ahead of its consumer waits for a consumer that makes no progress.
const STALL: std::time::Duration = std::time::Duration::from_micros(20);
/// Empty segments kept for reuse per channel; more are freed.
const POOL: usize = 32;

/// One block of item storage, owned through raw parts so that the producer can write some
/// positions while the consumer reads others without either holding a reference to the whole.
struct Segment<T> {
    /// Position of slot 0 (written before the segment is linked, constant while it is).
    start: usize,
    /// The allocation: `init` initialised items of `alloc` capacity (a `Vec`'s raw parts).
    ptr: NonNull<T>,
    init: usize,
    alloc: usize,
    /// Slots usable while linked (`cap <= init`).
    cap: usize,
    /// The next newer segment; null while this is the tail (invariant 3).
    next: AtomicPtr<Segment<T>>,
}

// SAFETY: a segment owns its allocation like a `Vec<T>`; moving it to another thread moves that
// ownership, which is sound for `T: Send`. Shared access is governed by invariants 1-3.
unsafe impl<T: Send> Send for Segment<T> {}

impl<T: Copy> Segment<T> {
    /// A segment made of `buf` (every element initialised), usable up to `cap <= buf.len()`.
    fn from_vec(buf: Vec<T>, cap: usize) -> Self {
        debug_assert!(cap <= buf.len());
        let mut buf = ManuallyDrop::new(buf);
        Segment {
            start: 0,
            ptr: NonNull::new(buf.as_mut_ptr()).unwrap_or(NonNull::dangling()),
            init: buf.len(),
            alloc: buf.capacity(),
            cap,
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// Swaps this (unlinked) segment's allocation for `buf`, returning the old one as a `Vec`.
    fn swap_vec(&mut self, buf: Vec<T>, cap: usize) -> Vec<T> {
        let mut other = Segment::from_vec(buf, cap);
        std::mem::swap(&mut self.ptr, &mut other.ptr);
        std::mem::swap(&mut self.init, &mut other.init);
        std::mem::swap(&mut self.alloc, &mut other.alloc);
        self.cap = cap;
        other.into_vec()
    }

    fn into_vec(self) -> Vec<T> {
        let s = ManuallyDrop::new(self);
        // SAFETY: `ptr`, `init` and `alloc` are the raw parts of a `Vec<T>` taken apart in
        // `from_vec`, and `ManuallyDrop` keeps `Drop` from rebuilding it a second time.
        unsafe { Vec::from_raw_parts(s.ptr.as_ptr(), s.init, s.alloc) }
    }
}

impl<T> Drop for Segment<T> {
    fn drop(&mut self) {
        // SAFETY: as in `into_vec`; `drop` runs at most once, and `into_vec` bypasses it.
        drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.init, self.alloc) });
    }
}

/// The producer's private view, behind the tail lock.
struct Tail<T> {
    seg: NonNull<Segment<T>>,
    /// Items written into `seg` (its slots `fill..cap` are free).
    fill: usize,
    /// Items published in all (the value of `published`, without reading it back).
    pos: usize,
    /// `Some(c)` while [`Storage::keep_near`] may not wait: set when a wait saw the consumer
    /// make no progress (it waits for this producer, or is gone, or had not started yet), `c`
    /// being the consumed count then; cleared once the consumer is seen within [`AHEAD_BYTES`]
    /// or has consumed a bound's worth since `c`: a consumer that only started late, or was
    /// descheduled once, must not leave the producer unthrottled for the rest of the stream.
    disarmed_at: Option<usize>,
}

/// The shared part of one channel's storage.
pub(super) struct Storage<T> {
    /// Items published (invariant 2): the only line both sides touch on every item, so it has
    /// a cache line of its own.
    published: CachePadded<AtomicUsize>,
    /// The tail lock and what it guards (invariant 1), on a line only producers touch: taking
    /// and releasing it costs no cache miss while one producer pushes.
    tail: CachePadded<TailLock<T>>,
    /// Unlinked segments for reuse, boxed because linking them is handing out the box's
    /// pointer: a recycled segment is relinked without allocating.
    #[allow(clippy::vec_box)]
    pool: Mutex<Vec<Box<Segment<T>>>>,
    /// The oldest linked segment (invariant 4).
    first: AtomicPtr<Segment<T>>,
    /// Items the consumer has finished, as of the start of its head segment: stored by the
    /// consumer when it moves to the next segment, read by the producer when it starts one
    /// (see [`Storage::keep_near`]); on a line of its own, so once per segment on each side.
    consumed: CachePadded<AtomicUsize>,
}

// SAFETY: item memory and `tail` are accessed per invariants 1-3 (one writer under the tail
// lock, one reader below the published count), and every other field is an atomic or behind a
// mutex.
unsafe impl<T: Send> Send for Storage<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Storage<T> {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A zero-filled (`T::default()`) buffer of `n` items.
fn fresh<T: Copy + Default>(n: usize) -> Vec<T> {
    vec![T::default(); n]
}

impl<T: Copy + Default + Send> Storage<T> {
    /// An empty storage and the consumer's end of it.
    pub(super) fn new() -> (Self, Head<T>) {
        let seg = NonNull::from(Box::leak(Box::new(Segment::from_vec(fresh(CHUNK), CHUNK))));
        let storage = Storage {
            published: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(TailLock {
                locked: AtomicBool::new(false),
                tail: UnsafeCell::new(Tail { seg, fill: 0, pos: 0, disarmed_at: None }),
            }),
            pool: Mutex::new(Vec::new()),
            first: AtomicPtr::new(seg.as_ptr()),
            consumed: CachePadded::new(AtomicUsize::new(0)),
        };
        (storage, Head { seg, pos: 0, seen: 0, readable: 0 })
    }

    /// Items published so far (`SeqCst`: one side of the parking handshake).
    pub(super) fn published(&self) -> usize {
        self.published.load(Ordering::SeqCst)
    }

    /// Takes the tail lock (invariant 1), spinning and then yielding while another producer
    /// holds it: it is held for one copy into a segment, so waiting is short unless the holder
    /// was descheduled, and yielding lets it run.
    fn lock_tail(&self) -> TailGuard<'_, T> {
        let backoff = Backoff::new();
        let t = &*self.tail;
        while t.locked.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            while t.locked.load(Ordering::Relaxed) {
                backoff.snooze();
            }
        }
        TailGuard { storage: self, locked: true }
    }

    /// [`Storage::reserve`] without the tail lock, for a slot that its caller writes in place
    /// while it lives: makes room for `n` items and returns them, to be published by
    /// [`Storage::commit_alone`]. Only valid for the only producer there is, while no other can
    /// appear (the caller checks that it has no clones, and holds it exclusively while the
    /// reservation lives): then nobody else touches the tail (invariant 1), and an atomic
    /// read-modify-write per item is saved. The slots are a plain `&mut [T]` rather than a
    /// guard object, so that the caller's slot is two pointers and a length that stay in
    /// registers between the reserve, the caller's writes and the commit (a guard moved through
    /// memory was reloaded right after the item's store, which waits for that store whenever
    /// the consumer holds the item's cache line). A leaked reservation holds nothing.
    ///
    /// # Safety
    /// The caller is the channel's only producer and stays so while the returned slice lives:
    /// no other `reserve`, `reserve_alone`, `commit_alone` or `push` on this storage may run
    /// until the slice is no longer used (and, if it publishes, until its `commit_alone`).
    #[inline]
    // The exclusive borrow out of a shared one is what the precondition makes sound: the caller
    // is the only producer, and only a producer touches unpublished slots.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn reserve_alone(&self, n: usize) -> &mut [T] {
        let mut guard = TailGuard { storage: self, locked: false };
        let tail = guard.tail();
        // SAFETY: the tail segment stays linked and allocated while we own the tail
        // (invariant 3: the consumer frees only sealed segments, and only the owner seals).
        let cap = unsafe { tail.seg.as_ref().cap };
        if cap - tail.fill < n {
            self.start_segment(tail, n);
        }
        // SAFETY: slots `fill .. fill + n` of the tail segment are in bounds (room was made),
        // initialised and unpublished, so nobody else reads or writes them (invariant 1) while
        // the caller, the only producer, holds them (the precondition).
        unsafe { std::slice::from_raw_parts_mut(tail.seg.as_ref().ptr.as_ptr().add(tail.fill), n) }
    }

    /// Publishes the first `k` items of the last [`Storage::reserve_alone`]; returns the new
    /// published count.
    ///
    /// # Safety
    /// The caller made that reservation of at least `k` items as the channel's only producer,
    /// is so still, and has not committed it (nor reserved or pushed since).
    #[inline]
    pub(super) unsafe fn commit_alone(&self, k: usize) -> usize {
        let mut guard = TailGuard { storage: self, locked: false };
        guard.tail().fill += k;
        guard.publish(k)
    }

    /// Appends a copy of `items` and publishes them; returns the new published count.
    #[inline]
    pub(super) fn push(&self, items: &[T]) -> usize {
        let mut res = self.reserve(items.len());
        res.as_mut_slice().copy_from_slice(items);
        res.commit(items.len())
    }

    /// Takes the tail lock and makes room for `n` items in the tail segment (sealing it for a
    /// new one if it has less); the items are published by [`Reservation::commit`]. Other
    /// producers wait while the reservation lives.
    #[inline]
    pub(super) fn reserve(&self, n: usize) -> Reservation<'_, T> {
        Self::make_room(self.lock_tail(), n)
    }

    /// Makes room for `n` items past the tail's fill, as the tail's owner (`guard`).
    #[inline]
    fn make_room(mut guard: TailGuard<'_, T>, n: usize) -> Reservation<'_, T> {
        let storage = guard.storage;
        let tail = guard.tail();
        // SAFETY: the tail segment stays linked and allocated while we own the tail
        // (invariant 3: the consumer frees only sealed segments, and only the owner seals).
        let cap = unsafe { tail.seg.as_ref().cap };
        if cap - tail.fill < n {
            storage.start_segment(tail, n);
        }
        Reservation { guard, n }
    }

    /// Seals the tail for a pooled or new segment with room for `n` items: once per segment,
    /// kept out of line so that the per-push path stays small.
    #[cold]
    fn start_segment(&self, tail: &mut Tail<T>, n: usize) {
        self.keep_near(tail);
        Self::link(tail, self.take(n), 0);
    }

    /// Keeps a producer that outruns its consumer from running far ahead, for a bounded time:
    /// called once per new segment. While more than [`AHEAD_BYTES`] of published items are
    /// unconsumed, the producer waits (spinning, then yielding its core) for the consumer to
    /// finish segments, for as long as the consumer keeps doing so; a consumer that makes no
    /// progress for [`STALL`] (it waits for this producer, as on one thread or in a feedback
    /// loop, or is descheduled, late to start or gone) ends the wait and disarms it until the
    /// consumer is seen within the bound again or has consumed a bound's worth since. So a push
    /// never waits for a stopped consumer longer than `STALL` per bound's worth it consumes, and
    /// the channel stays unbounded. (Re-arming only within the bound, as first built, left a
    /// producer that had once got a bound ahead, e.g. of a consumer thread still starting,
    /// unthrottled for the rest of the stream: the slow state again, quietly measured.)
    ///
    /// Why: an unbounded queue whose producer is faster grows by hundreds of segments (8 MB at
    /// 4-byte items, measured at batches of 4096), beyond the caches, and each segment is then
    /// freshly allocated and zeroed by the producer and read from far away by the consumer,
    /// which makes the consumer slower still: a self-sustaining slow state at less than half
    /// the rate of the state in which the queue stays a few segments deep and cache-resident.
    fn keep_near(&self, tail: &mut Tail<T>) {
        let bound = AHEAD_BYTES / std::mem::size_of::<T>().max(1);
        let mut seen = self.consumed.load(Ordering::Acquire);
        if tail.pos - seen <= bound {
            tail.disarmed_at = None;
            return;
        }
        match tail.disarmed_at {
            Some(at) if seen - at < bound => return,
            _ => tail.disarmed_at = None,
        }
        let mut since = std::time::Instant::now();
        let backoff = Backoff::new();
        loop {
            backoff.snooze();
            let now = self.consumed.load(Ordering::Acquire);
            if tail.pos - now <= bound {
                return;
            }
            if now != seen {
                seen = now;
                since = std::time::Instant::now();
            } else if since.elapsed() > STALL {
                tail.disarmed_at = Some(now);
                return;
            }
        }
    }

    /// Moves the first `k` items of `buf` in as a segment of their own (no copy) and publishes
    /// them; `buf` gets a pooled buffer in exchange (of unspecified length). Returns the new
    /// published count.
    pub(super) fn push_buffer(&self, buf: &mut Vec<T>, k: usize) -> usize {
        debug_assert!(k <= buf.len());
        let pooled = lock(&self.pool).pop();
        let mut seg = pooled.unwrap_or_else(|| Box::new(Segment::from_vec(Vec::new(), 0)));
        *buf = seg.swap_vec(std::mem::take(buf), k);
        let mut guard = self.lock_tail();
        Self::link(guard.tail(), seg, k);
        guard.publish(k)
    }

    /// Seals the tail and links `seg` (already holding `fill` written items) after it.
    fn link(tail: &mut Tail<T>, mut seg: Box<Segment<T>>, fill: usize) {
        seg.start = tail.pos;
        *seg.next.get_mut() = ptr::null_mut();
        let new = NonNull::from(Box::leak(seg));
        // SAFETY: the tail is linked and allocated (see `push`); storing `next` is the seal of
        // invariant 3, after `start` was written.
        unsafe { tail.seg.as_ref().next.store(new.as_ptr(), Ordering::Release) };
        tail.seg = new;
        tail.fill = fill;
    }

    /// A pooled segment with room for `n` items, or a new one.
    fn take(&self, n: usize) -> Box<Segment<T>> {
        let pooled = lock(&self.pool).pop();
        match pooled {
            Some(mut seg) if seg.init >= n => {
                seg.cap = seg.init;
                seg
            }
            _ => {
                let len = n.max(CHUNK);
                Box::new(Segment::from_vec(fresh(len), len))
            }
        }
    }

    fn recycle(&self, seg: Box<Segment<T>>) {
        let mut pool = lock(&self.pool);
        if pool.len() < POOL {
            pool.push(seg);
        }
    }
}

/// The producers' side: the tail and the lock that serialises them.
struct TailLock<T> {
    locked: AtomicBool,
    tail: UnsafeCell<Tail<T>>,
}

/// `n` unpublished slots at the end of the tail segment, owned (invariant 1): written in place,
/// published by [`Reservation::commit`]; dropping it publishes nothing.
pub(super) struct Reservation<'a, T> {
    guard: TailGuard<'a, T>,
    n: usize,
}

impl<T> Reservation<'_, T> {
    /// The reserved slots, to write.
    #[inline]
    pub(super) fn as_mut_slice(&mut self) -> &mut [T] {
        let tail = self.guard.tail();
        // SAFETY: we own the tail; slots `fill .. fill + n` of the tail segment are in bounds
        // (`reserve` made room), initialised and unpublished, so nobody else reads or writes them
        // (invariant 1), and the mutable borrow of the reservation makes this the only reference
        // to them.
        unsafe { std::slice::from_raw_parts_mut(tail.seg.as_ref().ptr.as_ptr().add(tail.fill), self.n) }
    }

    /// Publishes the first `k <= n` reserved items and gives up the tail; returns the new
    /// published count.
    #[inline]
    pub(super) fn commit(mut self, k: usize) -> usize {
        let k = k.min(self.n);
        self.guard.tail().fill += k;
        self.guard.publish(k)
    }
}

/// Ownership of the tail (invariant 1): the tail lock, held when `locked` (dropping the guard
/// releases it), or the only producer's exclusive access.
struct TailGuard<'a, T> {
    storage: &'a Storage<T>,
    locked: bool,
}

impl<T> TailGuard<'_, T> {
    #[inline]
    fn tail(&mut self) -> &mut Tail<T> {
        // SAFETY: we own the tail (invariant 1), so this is the only reference to `tail`; it
        // borrows the guard mutably, so it ends before the ownership does.
        unsafe { &mut *self.storage.tail.tail.get() }
    }

    /// Publishes `n` more items (invariant 2) and gives up the tail; returns the new published
    /// count.
    #[inline]
    fn publish(mut self, n: usize) -> usize {
        let tail = self.tail();
        tail.pos += n;
        let pos = tail.pos;
        self.storage.published.store(pos, Ordering::SeqCst);
        pos
    }
}

impl<T> Drop for TailGuard<'_, T> {
    fn drop(&mut self) {
        if self.locked {
            self.storage.tail.locked.store(false, Ordering::Release);
        }
    }
}

impl<T> Drop for Storage<T> {
    fn drop(&mut self) {
        let mut at = *self.first.get_mut();
        while !at.is_null() {
            // SAFETY: `drop` has exclusive access; every linked segment is reachable from
            // `first` exactly once (invariant 4) and was leaked from a `Box`.
            let seg = unsafe { Box::from_raw(at) };
            at = seg.next.load(Ordering::Relaxed);
        }
    }
}

/// The consumer's end: where it reads, and what it last saw published. Used with the
/// [`Storage`] it was made with, by one thread at a time (it is moved, not shared).
pub(super) struct Head<T> {
    seg: NonNull<Segment<T>>,
    /// Position of the next unconsumed item.
    pos: usize,
    /// The published count as last read.
    seen: usize,
    /// Items readable contiguously at `pos` in `seg`, as of the last [`Head::contiguous`].
    readable: usize,
}

// SAFETY: the head is a position in the list plus counters; the consumer may run on any thread.
unsafe impl<T: Send> Send for Head<T> {}
// SAFETY: through `&Head` one can only read counters and published items (`slice`), which no one
// writes while they are published (invariant 1); sharing that read needs `T: Sync`.
unsafe impl<T: Sync> Sync for Head<T> {}

impl<T: Copy + Default + Send> Head<T> {
    /// Unconsumed items as of the last read of the published count.
    #[inline]
    pub(super) fn cached(&self) -> usize {
        self.seen - self.pos
    }

    /// Re-reads the published count; returns the unconsumed items.
    pub(super) fn refresh(&mut self, s: &Storage<T>) -> usize {
        self.seen = s.published.load(Ordering::Acquire);
        self.cached()
    }

    /// Position of the next unconsumed item.
    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    /// Items readable as one slice at the head (at most [`Head::cached`]); moves past, and
    /// recycles, segments the consumer has finished.
    pub(super) fn contiguous(&mut self, s: &Storage<T>) -> usize {
        loop {
            // SAFETY: the head segment is linked and only the consumer (us) frees it.
            let seg = unsafe { self.seg.as_ref() };
            let next = seg.next.load(Ordering::Acquire);
            // SAFETY: a non-null `next` was linked with `Release` after its `start` was written,
            // and stays allocated while it is linked.
            let end = NonNull::new(next).map_or(usize::MAX, |n| unsafe { n.as_ref().start });
            let hi = self.seen.min(end);
            if hi > self.pos || next.is_null() || self.pos < end {
                self.readable = hi.saturating_sub(self.pos);
                return self.readable;
            }
            // Sealed and every position passed: the segment is ours (invariant 3).
            let done = self.seg;
            self.seg = NonNull::new(next).expect("checked non-null");
            s.first.store(next, Ordering::Relaxed);
            // SAFETY: as above, `next` is linked and allocated.
            s.consumed.store(unsafe { (*next).start }, Ordering::Release);
            // SAFETY: `done` was leaked from a `Box` when linked, is no longer reachable from
            // `first`, and neither the producer nor anyone else touches it again.
            s.recycle(unsafe { Box::from_raw(done.as_ptr()) });
        }
    }

    /// Items readable as one slice at the head as of the last [`Head::contiguous`], less those
    /// consumed since: a lower bound of what it would return now.
    #[inline]
    pub(super) fn readable(&self) -> usize {
        self.readable
    }

    /// The first `len` readable items (at most what [`Head::contiguous`] returned).
    #[inline]
    pub(super) fn slice(&self, len: usize) -> &[T] {
        let len = len.min(self.readable);
        // SAFETY: the head segment is linked and allocated (only we free it, and we are
        // borrowed); positions `pos .. pos + readable` lie in it and below the published count, so
        // they are initialised and nobody writes them (invariants 1, 2).
        unsafe {
            let seg = self.seg.as_ref();
            std::slice::from_raw_parts(seg.ptr.as_ptr().add(self.pos - seg.start), len)
        }
    }

    /// Consumes the first `k` readable items (at most what [`Head::contiguous`] returned).
    #[inline]
    pub(super) fn advance(&mut self, k: usize) {
        let k = k.min(self.readable);
        self.pos += k;
        self.readable -= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disarmed_at(s: &Storage<u32>) -> Option<usize> {
        s.lock_tail().tail().disarmed_at
    }

    /// Consumes `n` published items and moves past the segments finished.
    fn consume(s: &Storage<u32>, head: &mut Head<u32>, n: usize) {
        head.refresh(s);
        let mut left = n;
        while left > 0 {
            let k = head.contiguous(s).min(left);
            assert!(k > 0, "{left} items short");
            head.advance(k);
            left -= k;
        }
        head.contiguous(s);
    }

    /// A consumer that did not move disarms the producer's wait; once it has consumed a bound's
    /// worth, the wait arms again although the producer is still more than a bound ahead (a
    /// consumer that started late must not leave the producer unthrottled for good).
    #[test]
    fn the_wait_rearms_once_the_consumer_has_consumed_a_bound() {
        let bound = AHEAD_BYTES / std::mem::size_of::<u32>();
        let (s, mut head) = Storage::<u32>::new();
        let chunk = vec![7u32; CHUNK];
        for _ in 0..3 * bound / CHUNK + 1 {
            s.push(&chunk);
        }
        assert_eq!(disarmed_at(&s), Some(0), "a consumer that never moved disarms the wait");
        consume(&s, &mut head, bound + CHUNK);
        assert!(s.published() - s.consumed.load(Ordering::Relaxed) > bound, "still far ahead");
        s.push(&chunk);
        let again = disarmed_at(&s).expect("the consumer stalled again");
        assert!(again >= bound, "the wait armed again after a bound's worth was consumed: {again}");
    }
}
