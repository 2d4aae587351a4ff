//! Typed, unbounded FIFO channels with elastic two-phase pops and in-place reserves.
//!
//! Storage ([`segments`](super::segments)): a linked list of fixed-size segments of contiguous
//! items, recycled through a pool, so nothing is allocated per item. A push copies its items past
//! the published length of the tail segment (under a lock only producers take, which serialises
//! cloned senders) and publishes them with one atomic store; the receiver reads that counter,
//! caches it, and hands out slices of the head segment directly, copying into a private buffer
//! only when a batch must span two segments. A [`Slot`] of a sender that has no clones is the
//! tail segment's own memory (written in place, published by the commit); a sender with clones
//! or several receivers stages the slot in a buffer of its own and copies it in on commit, or,
//! when large and for one receiver, moves the buffer in as a segment without copying.
//!
//! Pacing: a receiver that keeps catching up with its producer waits a moment before it reads
//! the published count again, so that the two do not pass that count's cache line back and
//! forth on every item ([`pace`](super::pace)).
//!
//! Keeping near: the channel is unbounded, but a producer that starts a segment while more than
//! 256 KiB are queued waits, for a bounded time and only while the receiver progresses, so that
//! what is queued stays in the caches ([`segments`](super::segments), `Storage::keep_near`).
//!
//! Blocking: a receiver that needs more items than are published spins briefly, then parks on a
//! condition variable after announcing what it waits for in `want`. Both sides use the Dekker
//! pattern with sequentially consistent operations (the receiver stores `want` and then reads
//! the published count; a producer stores the count and then reads `want`), so at least one of
//! them sees the other: a producer takes the wake-up lock only when a receiver is parked and its
//! push reaches what the receiver waits for, and never makes a system call while the receiver is
//! running.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::error::{Result, StreamError};
use super::pace::{self, Pace};
use super::segments::{CHUNK, Head, Storage};
use super::stats;

/// State shared by every endpoint of one pipeline: whether the run was stopped, and the channels
/// to wake when it is.
#[derive(Default)]
pub(crate) struct RunState {
    cancelled: AtomicBool,
    channels: Mutex<Vec<Weak<dyn Wake>>>,
}

/// A channel whose blocked receiver can be woken on cancellation.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

impl RunState {
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Stops the run: every blocked `pop` returns [`StreamError::Cancelled`], and so does every
    /// later `pop`, `push` or `commit` on this pipeline's channels.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        let channels = lock(&self.channels).clone();
        for ch in channels.iter().filter_map(Weak::upgrade) {
            ch.wake();
        }
    }

    fn register(&self, ch: Weak<dyn Wake>) {
        let mut all = lock(&self.channels);
        all.retain(|w| w.strong_count() > 0);
        all.push(ch);
    }
}

/// How one stage ended, for bridges that must not report a clean end of stream for a producer
/// that failed: a stage's captured senders are dropped (closing its channels) before the run
/// learns that the stage returned an error.
#[derive(Default)]
pub(crate) struct StageDone {
    /// `Some(true)` when the stage returned `Ok`, `Some(false)` when it failed or panicked.
    outcome: Mutex<Option<bool>>,
    done: Condvar,
}

impl StageDone {
    /// Publishes the stage's outcome; called after a failure was recorded and the run stopped.
    pub(crate) fn finish(&self, ok: bool) {
        *lock(&self.outcome) = Some(ok);
        self.done.notify_all();
    }

    /// Waits until the stage has returned; true when it succeeded.
    fn succeeded(&self) -> bool {
        let mut o = lock(&self.outcome);
        loop {
            if let Some(ok) = *o {
                return ok;
            }
            o = self.done.wait(o).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

thread_local! {
    /// The stage running on this thread, if any.
    static CURRENT_STAGE: std::cell::RefCell<Option<Arc<StageDone>>> = const { std::cell::RefCell::new(None) };
}

/// Marks this thread as running the stage `done` reports on (`None` when it returns).
pub(crate) fn set_current_stage(done: Option<Arc<StageDone>>) {
    CURRENT_STAGE.with(|c| *c.borrow_mut() = done);
}

fn current_stage() -> Option<Arc<StageDone>> {
    CURRENT_STAGE.with(|c| c.borrow().clone())
}

/// Locks, ignoring poisoning: no code of this module panics while holding a lock, and a stage
/// that panicked elsewhere must not make the others panic too.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a receiver spins and yields before it parks: long enough to cover a producer that
/// is preparing its next batch (a few microseconds at 4096 items), short enough not to burn a
/// core that another stage needs.
const SPIN: Duration = Duration::from_micros(50);
/// Busy-wait rounds before the spinning receiver starts yielding its core.
const SPIN_ROUNDS: u32 = 6;

struct Chan<T> {
    storage: Storage<T>,
    /// Position the parked receiver waits for; 0 when it is not parked (positions it waits for
    /// are at least 1). Written by the receiver only around parking, read by every push.
    want: CachePadded<AtomicUsize>,
    senders: AtomicUsize,
    /// Every sender is gone: the published count is final.
    closed: AtomicBool,
    receiver_alive: AtomicBool,
    /// The stage whose drop of the last sender ended the stream (none when dropped off-stage).
    closed_by: Mutex<Option<Arc<StageDone>>>,
    /// The lock and condition variable of parking; no item is behind them.
    park: Mutex<()>,
    ready: Condvar,
    run: Arc<RunState>,
}

impl<T: Send> Wake for Chan<T> {
    fn wake(&self) {
        let _g = lock(&self.park);
        self.ready.notify_all();
    }
}

impl<T: Item> Chan<T> {
    /// Publishes `n` items by `put` (which returns the new published count) and wakes the
    /// receiver if it waits for them; nothing is published when the run was stopped or the
    /// receiver is gone.
    #[inline]
    fn deliver(&self, n: usize, put: impl FnOnce() -> usize) -> Result<()> {
        if self.run.is_cancelled() {
            return Err(StreamError::Cancelled);
        }
        if !self.receiver_alive.load(Ordering::Acquire) {
            return finish_publish(false, n);
        }
        self.wake_for(put());
        finish_publish(true, n)
    }

    /// After a publication that reached position `pos`: wakes the receiver if it is parked
    /// waiting for at most `pos` (the producer's half of the handshake described above).
    #[inline]
    fn wake_for(&self, pos: usize) {
        let want = self.want.load(Ordering::SeqCst);
        if want != 0 && pos >= want {
            let _g = lock(&self.park);
            self.ready.notify_one();
        }
    }

    /// Whether a waiting receiver should stop waiting for position `target`.
    fn done_waiting(&self, target: usize) -> bool {
        self.storage.published() >= target || self.closed.load(Ordering::SeqCst) || self.run.is_cancelled()
    }

    /// Blocks until position `target` is published, the stream ended or the run was stopped:
    /// spinning, then yielding, then parked.
    fn wait(&self, target: usize) {
        let since = Instant::now();
        let mut round = 0u32;
        while !self.done_waiting(target) {
            if round < SPIN_ROUNDS {
                (0..1u32 << round).for_each(|_| std::hint::spin_loop());
                round += 1;
            } else if since.elapsed() < SPIN {
                std::thread::yield_now();
            } else {
                self.park(target);
                break;
            }
        }
        stats::blocked(since);
    }

    /// The receiver's half of the handshake: announce `want`, then re-check under the lock a
    /// waking producer must take.
    fn park(&self, target: usize) {
        let mut g = lock(&self.park);
        self.want.store(target, Ordering::SeqCst);
        while !self.done_waiting(target) {
            g = self.ready.wait(g).unwrap_or_else(PoisonError::into_inner);
        }
        self.want.store(0, Ordering::Relaxed);
    }
}

/// Creates one channel with no senders yet; the caller makes the endpoints.
fn new_chan<T: Item>(run: &Arc<RunState>) -> (Arc<Chan<T>>, Head<T>) {
    let (storage, head) = Storage::new();
    let ch = Arc::new(Chan {
        storage,
        want: CachePadded::new(AtomicUsize::new(0)),
        senders: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        receiver_alive: AtomicBool::new(true),
        closed_by: Mutex::new(None),
        park: Mutex::new(()),
        ready: Condvar::new(),
        run: Arc::clone(run),
    });
    let weak: Weak<dyn Wake> = Arc::downgrade(&ch) as Weak<Chan<T>>;
    run.register(weak);
    (ch, head)
}

/// Item types a channel carries: plain values copied in and out of contiguous storage.
pub trait Item: Copy + Default + Send + 'static {}
impl<T: Copy + Default + Send + 'static> Item for T {}

/// Makes a point-to-point channel.
pub(crate) fn channel<T: Item>(run: &Arc<RunState>) -> (Sender<T>, Receiver<T>) {
    let (ch, head) = new_chan::<T>(run);
    (Sender::new(vec![Arc::clone(&ch)]), Receiver::new(ch, head))
}

/// Makes one sender feeding `n` receivers that each see every item.
pub(crate) fn broadcast<T: Item>(run: &Arc<RunState>, n: usize) -> (Sender<T>, Vec<Receiver<T>>) {
    let (chans, heads): (Vec<_>, Vec<_>) = (0..n).map(|_| new_chan::<T>(run)).unzip();
    let receivers = chans.iter().zip(heads).map(|(c, h)| Receiver::new(Arc::clone(c), h)).collect();
    (Sender::new(chans), receivers)
}

/// The producing end of a channel (or of a broadcast group). Clone it to merge several producers
/// into one channel; the channel ends when every clone is dropped.
pub struct Sender<T: Item> {
    targets: Arc<[Arc<Chan<T>>]>,
    /// Where `reserve` hands out memory; a large commit moves it into the channel as a segment,
    /// smaller ones (and broadcasts) copy from it.
    staging: Vec<T>,
}

impl<T: Item> Sender<T> {
    fn new(targets: Vec<Arc<Chan<T>>>) -> Self {
        for t in &targets {
            t.senders.fetch_add(1, Ordering::Relaxed);
        }
        Sender { targets: targets.into(), staging: Vec::new() }
    }

    /// Appends `items` to the channel (to every receiver of a broadcast), in order.
    ///
    /// Errors: [`StreamError::Cancelled`] once the run was stopped by a failing stage (so an
    /// endless source stops too), [`StreamError::Disconnected`] when every receiver is gone.
    #[inline]
    pub fn push(&self, items: &[T]) -> Result<()> {
        let mut alive = false;
        for t in self.targets.iter() {
            if t.run.is_cancelled() {
                return Err(StreamError::Cancelled);
            }
            if !t.receiver_alive.load(Ordering::Acquire) {
                continue;
            }
            alive = true;
            if !items.is_empty() {
                let pos = t.storage.push(items);
                t.wake_for(pos);
            }
        }
        finish_publish(alive, items.len())
    }

    /// Hands out `n` items of channel memory to write in place; see [`Slot`]. The contents are
    /// unspecified (`T::default()` or earlier values) until written.
    #[inline]
    pub fn reserve(&mut self, n: usize) -> Slot<'_, T> {
        // With no clones (none can appear while the slot borrows this sender mutably, and the
        // `Acquire` count orders every dropped clone's pushes before us) nobody else touches the
        // tail, so the slot owns it without the lock for as long as the caller writes.
        if let [t] = &*self.targets
            && t.senders.load(Ordering::Acquire) == 1
        {
            let this: &Sender<T> = self;
            let chan = &*this.targets[0];
            // SAFETY: this sender is the only one (count 1) and is borrowed mutably by the
            // slot, so no other producer can exist until the slot is gone; the slot commits at
            // most once (`commit` or its drop) and at most `n` items.
            let items = unsafe { chan.storage.reserve_alone(n) };
            return Slot { place: Place::Direct { chan, items }, n };
        }
        if self.staging.len() < n {
            self.staging.resize(n, T::default());
        }
        Slot { place: Place::Staged(self), n }
    }

    /// Stops this sender's run (what cancelling an in-process transport means): every stage of
    /// the pipeline is woken and gets [`StreamError::Cancelled`].
    pub(crate) fn cancel_run(&self) {
        for t in self.targets.iter() {
            t.run.cancel();
        }
    }

    /// Whether this sender's run was stopped (polled by bridges blocked on a remote peer).
    pub(crate) fn run_cancelled(&self) -> bool {
        self.targets.iter().any(|t| t.run.is_cancelled())
    }

    /// Publishes the first `k` staged items: a single-target sender moves a large staging buffer
    /// into the channel as a segment (no copy) and gets a pooled one for the next reserve; small
    /// commits, and broadcasts, copy.
    fn publish_staged(&mut self, k: usize) -> Result<()> {
        if let ([t], true) = (&*self.targets, 4 * k >= CHUNK) {
            return t.deliver(k, || t.storage.push_buffer(&mut self.staging, k));
        }
        let staged = std::mem::take(&mut self.staging);
        let out = self.push(&staged[..k]);
        self.staging = staged;
        out
    }
}

#[inline]
fn finish_publish(alive: bool, n: usize) -> Result<()> {
    if !alive {
        return Err(StreamError::Disconnected);
    }
    stats::pushed(n);
    Ok(())
}

impl<T: Item> Clone for Sender<T> {
    fn clone(&self) -> Self {
        for t in self.targets.iter() {
            t.senders.fetch_add(1, Ordering::Relaxed);
        }
        Sender { targets: Arc::clone(&self.targets), staging: Vec::new() }
    }
}

impl<T: Item> Drop for Sender<T> {
    fn drop(&mut self) {
        for t in self.targets.iter() {
            // AcqRel: the last sender's drop happens after every other sender's pushes, so the
            // receiver that sees `closed` sees their publications too.
            if t.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
                *lock(&t.closed_by) = current_stage();
                t.closed.store(true, Ordering::SeqCst);
                let _g = lock(&t.park);
                t.ready.notify_all();
            }
        }
    }
}

/// Channel memory reserved by [`Sender::reserve`]: derefs to `&mut [T]` of the reserved length.
/// [`Slot::commit`] publishes a prefix; dropping the slot publishes all of it.
pub struct Slot<'a, T: Item> {
    place: Place<'a, T>,
    n: usize,
}

/// Where a slot's items are written.
enum Place<'a, T: Item> {
    /// In the tail segment of the only channel, whose tail the slot owns: `items` are its
    /// reserved slots, published by [`Storage::commit_alone`].
    Direct { chan: &'a Chan<T>, items: &'a mut [T] },
    /// In the sender's staging buffer.
    Staged(&'a mut Sender<T>),
}

impl<T: Item> Place<'_, T> {
    /// Publishes the first `k <= n` items; called once per slot, by `commit` or by the drop.
    #[inline]
    fn publish(&mut self, k: usize) -> Result<()> {
        match self {
            Place::Direct { chan, .. } => {
                let chan: &Chan<T> = chan;
                // SAFETY: the slot's sender is still the only producer (it is borrowed by the
                // slot), this is the slot's one publication, and `k <= n` was checked.
                chan.deliver(k, || unsafe { chan.storage.commit_alone(k) })
            }
            Place::Staged(sender) => sender.publish_staged(k),
        }
    }
}

impl<T: Item> Slot<'_, T> {
    /// Publishes the first `k` items (`k <= len`), in order, and discards the rest.
    ///
    /// Errors: [`StreamError::CommitTooMany`] when `k` exceeds the slot (nothing is published),
    /// and those of [`Sender::push`].
    #[inline]
    pub fn commit(self, k: usize) -> Result<()> {
        // Not dropped: the drop would publish all `n` a second time. What the slot holds are
        // borrows, so forgetting it leaks nothing.
        let mut slot = ManuallyDrop::new(self);
        if k > slot.n {
            return Err(StreamError::CommitTooMany { k, n: slot.n });
        }
        slot.place.publish(k)
    }
}

impl<T: Item> Deref for Slot<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match &self.place {
            Place::Direct { items, .. } => items,
            Place::Staged(sender) => &sender.staging[..self.n],
        }
    }
}

impl<T: Item> DerefMut for Slot<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.place {
            Place::Direct { items, .. } => items,
            Place::Staged(sender) => &mut sender.staging[..self.n],
        }
    }
}

impl<T: Item> Drop for Slot<'_, T> {
    fn drop(&mut self) {
        // A drop cannot report: a stopped run or a gone receiver loses the items, which is what
        // either of those means anyway. `commit` reports them.
        let _ = self.place.publish(self.n);
    }
}

/// The consuming end of a channel: elastic, two-phase pops of contiguous batches.
pub struct Receiver<T: Item> {
    chan: Arc<Chan<T>>,
    /// Where the receiver reads the channel's storage.
    head: Head<T>,
    /// Items that precede `head`, copied out because a batch spanned two segments:
    /// `local[at..]`. Empty (`at == local.len()`) in the steady state of aligned batches.
    local: Vec<T>,
    at: usize,
    /// When to look at the published count (see [`pace`](super::pace)).
    pace: Pace,
}

impl<T: Item> Receiver<T> {
    fn new(chan: Arc<Chan<T>>, head: Head<T>) -> Self {
        Receiver { chan, head, local: Vec::new(), at: 0, pace: Pace::default() }
    }

    /// Waits until at least `min` items are available (or the stream has ended), then returns up
    /// to `max` of them as one contiguous [`Batch`]. At end of stream it returns what remains even
    /// if fewer than `min`, and `Ok(None)` once nothing remains.
    ///
    /// Errors: [`StreamError::ZeroMin`], [`StreamError::MinAboveMax`], and
    /// [`StreamError::Cancelled`] when another stage failed (also while blocked here).
    #[inline]
    pub fn pop(&mut self, min: usize, max: usize) -> Result<Option<Batch<'_, T>>> {
        if min == 0 {
            return Err(StreamError::ZeroMin);
        }
        if min > max {
            return Err(StreamError::MinAboveMax { min, max });
        }
        if self.chan.run.is_cancelled() {
            return Err(StreamError::Cancelled);
        }
        let local = self.local.len() - self.at;
        let mut have = local + self.head.cached();
        if have < max {
            have = local + self.look(have == 0);
        }
        if have < min {
            self.chan.wait(self.head.pos() + (min - local));
            if self.chan.run.is_cancelled() {
                return Err(StreamError::Cancelled);
            }
            have = local + self.look(false);
        }
        if have == 0 {
            return Ok(None);
        }
        let len = have.min(max);
        // What the last look at the head segment found readable is still readable (only this
        // receiver consumes), so the common case of a batch inside it skips the segment walk.
        let direct =
            local == 0 && (self.head.readable() >= len || self.head.contiguous(&self.chan.storage) >= len);
        if !direct {
            self.gather(local, len);
        }
        stats::batch();
        Ok(Some(Batch { receiver: self, len, consume: len, direct }))
    }

    /// Re-reads the published count, settling first when the pacing says so (`empty`: nothing is
    /// left to return without it); returns the unconsumed items in the storage.
    fn look(&mut self, empty: bool) -> usize {
        let settled = empty && self.pace.settle_first();
        if settled {
            pace::settle();
        }
        let before = self.head.cached();
        let after = self.head.refresh(&self.chan.storage);
        self.pace.looked(after - before, settled);
        after
    }

    /// After the end of the stream: whether it ended cleanly, that is, the stage that dropped
    /// the last sender returned `Ok` (waiting for it to return if needed) and the run goes on.
    ///
    /// Errors: [`StreamError::Cancelled`] when that stage failed or the run was stopped.
    pub(crate) fn ended_cleanly(&self) -> Result<()> {
        let closer = lock(&self.chan.closed_by).clone();
        // A stage asking about its own channel is still running, so it has not failed (and
        // waiting for itself to return would never end).
        let me = current_stage();
        let other = closer.filter(|c| !me.as_ref().is_some_and(|m| Arc::ptr_eq(c, m)));
        if other.is_some_and(|s| !s.succeeded()) || self.chan.run.is_cancelled() {
            return Err(StreamError::Cancelled);
        }
        Ok(())
    }

    /// Makes `local[at..]` hold `len` items: the `local` it holds, then copies from the storage
    /// (which has at least `len - local` published items), segment by segment.
    fn gather(&mut self, local: usize, len: usize) {
        self.local.copy_within(self.at.., 0);
        self.local.truncate(local);
        self.at = 0;
        while self.local.len() < len {
            let n = self.head.contiguous(&self.chan.storage).min(len - self.local.len());
            debug_assert!(n > 0, "published items are readable");
            if n == 0 {
                break;
            }
            self.local.extend_from_slice(self.head.slice(n));
            self.head.advance(n);
        }
    }
}

impl<T: Item> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.receiver_alive.store(false, Ordering::Release);
    }
}

/// Items handed out by [`Receiver::pop`]: derefs to one contiguous `&[T]`. Dropping it consumes
/// every item; [`Batch::finalize`] consumes a prefix and leaves the rest at the head.
pub struct Batch<'a, T: Item> {
    receiver: &'a mut Receiver<T>,
    len: usize,
    consume: usize,
    /// The items are in the channel's storage (else in the receiver's `local`).
    direct: bool,
}

impl<T: Item> Batch<'_, T> {
    /// Consumes the first `k` items; the other `len - k` stay at the head of the channel, in
    /// order, and the next `pop` starts with them (the sliding-window case).
    ///
    /// Errors: [`StreamError::FinalizeTooMany`] when `k > len`; then nothing is consumed.
    pub fn finalize(mut self, k: usize) -> Result<()> {
        if k > self.len {
            self.consume = 0;
            return Err(StreamError::FinalizeTooMany { k, len: self.len });
        }
        self.consume = k;
        Ok(())
    }
}

impl<T: Item> Deref for Batch<'_, T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        let r = &*self.receiver;
        if self.direct { r.head.slice(self.len) } else { &r.local[r.at..r.at + self.len] }
    }
}

impl<T: Item> Drop for Batch<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.direct {
            self.receiver.head.advance(self.consume);
        } else {
            self.receiver.at += self.consume;
        }
        stats::popped(self.consume);
    }
}

impl std::fmt::Debug for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunState").field("cancelled", &self.is_cancelled()).finish_non_exhaustive()
    }
}

impl<T: Item> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").field("receivers", &self.targets.len()).finish_non_exhaustive()
    }
}

impl<T: Item> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").field("taken", &(self.local.len() - self.at)).finish_non_exhaustive()
    }
}

impl<T: Item> std::fmt::Debug for Slot<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot").field("len", &self.n).finish_non_exhaustive()
    }
}

impl<T: Item> std::fmt::Debug for Batch<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch").field("len", &self.len).finish_non_exhaustive()
    }
}
