//! Typed, unbounded FIFO channels with elastic two-phase pops and in-place reserves.
//!
//! Storage: the shared part of a channel is a FIFO of *chunks* (vectors); the receiver keeps a
//! private vector that is the head of the queue. A pop that needs more items than the private
//! part holds takes the first chunk whole (a move, no copy) and appends following chunks only when
//! a batch must span them, so a batch is always one contiguous slice and the lock is taken once per
//! refill rather than once per pop. Consumed chunks go back to a pool that pushes and reserves draw
//! from, so once the pipeline has warmed up nothing is allocated; a committed [`Slot`] moves its
//! chunk into the queue without copying.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Instant;

use super::error::{Result, StreamError};
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

/// Items a fresh chunk has room for: pushes smaller than this share chunks.
const CHUNK: usize = 4096;
/// Empty chunks kept for reuse per channel; more are freed.
const POOL: usize = 32;
/// Rounds of spinning and yielding before a pop blocks on the condition variable: a producer
/// that is about to push costs less than a sleep and a wake-up.
const SPIN_ROUNDS: u32 = 12;

struct Queue<T> {
    /// Non-empty chunks in FIFO order.
    chunks: VecDeque<Vec<T>>,
    /// Items in `chunks`.
    count: usize,
    /// Chunks to reuse; their length is meaningless (stale but initialised values).
    pool: Vec<Vec<T>>,
    senders: usize,
    receiver_alive: bool,
    /// Shared items the blocked receiver waits for; 0 when it is not waiting (senders notify only
    /// when this many are there, so a receiver asking for 4096 is not woken 4096 times).
    want: usize,
    /// The stage whose drop of the last sender ended the stream (none when dropped off-stage).
    closed_by: Option<Arc<StageDone>>,
}

impl<T: Copy> Queue<T> {
    /// Appends a copy of `items`, into the last chunk when it has room, else a pooled one.
    fn append(&mut self, items: &[T]) {
        if items.is_empty() {
            return;
        }
        match self.chunks.back_mut() {
            Some(last) if last.capacity() - last.len() >= items.len() => last.extend_from_slice(items),
            _ => {
                let mut c = self.spare(items.len().max(CHUNK));
                c.clear();
                c.extend_from_slice(items);
                self.chunks.push_back(c);
            }
        }
        self.count += items.len();
    }

    /// Moves a filled chunk in (no copy).
    fn append_chunk(&mut self, chunk: Vec<T>) {
        if chunk.is_empty() {
            self.recycle(chunk);
        } else {
            self.count += chunk.len();
            self.chunks.push_back(chunk);
        }
    }

    /// A pooled chunk (any length) or a new one with room for `cap`.
    fn spare(&mut self, cap: usize) -> Vec<T> {
        self.pool.pop().unwrap_or_else(|| Vec::with_capacity(cap))
    }

    fn recycle(&mut self, chunk: Vec<T>) {
        if chunk.capacity() > 0 && self.pool.len() < POOL {
            self.pool.push(chunk);
        }
    }

    fn pop_chunk(&mut self) -> Option<Vec<T>> {
        let c = self.chunks.pop_front()?;
        self.count -= c.len();
        Some(c)
    }
}

struct Chan<T> {
    queue: Mutex<Queue<T>>,
    ready: Condvar,
    /// `count` as of the last change, read without the lock by a receiver that spins.
    hint: AtomicUsize,
    /// Every sender is gone (also set under the lock).
    closed: AtomicBool,
    run: Arc<RunState>,
}

impl<T: Send> Wake for Chan<T> {
    fn wake(&self) {
        let _q = lock(&self.queue);
        self.ready.notify_all();
    }
}

/// Creates one channel with no senders yet; the caller makes the endpoints.
fn new_chan<T: Item>(run: &Arc<RunState>) -> Arc<Chan<T>> {
    let ch = Arc::new(Chan {
        queue: Mutex::new(Queue {
            chunks: VecDeque::new(),
            count: 0,
            pool: Vec::new(),
            senders: 0,
            receiver_alive: true,
            want: 0,
            closed_by: None,
        }),
        ready: Condvar::new(),
        hint: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        run: Arc::clone(run),
    });
    let weak: Weak<dyn Wake> = Arc::downgrade(&ch) as Weak<Chan<T>>;
    run.register(weak);
    ch
}

/// Item types a channel carries: plain values copied in and out of contiguous storage.
pub trait Item: Copy + Default + Send + 'static {}
impl<T: Copy + Default + Send + 'static> Item for T {}

/// Makes a point-to-point channel.
pub(crate) fn channel<T: Item>(run: &Arc<RunState>) -> (Sender<T>, Receiver<T>) {
    let ch = new_chan::<T>(run);
    (Sender::new(vec![Arc::clone(&ch)]), Receiver::new(ch))
}

/// Makes one sender feeding `n` receivers that each see every item.
pub(crate) fn broadcast<T: Item>(run: &Arc<RunState>, n: usize) -> (Sender<T>, Vec<Receiver<T>>) {
    let chans: Vec<_> = (0..n).map(|_| new_chan::<T>(run)).collect();
    let receivers = chans.iter().map(|c| Receiver::new(Arc::clone(c))).collect();
    (Sender::new(chans), receivers)
}

/// The producing end of a channel (or of a broadcast group). Clone it to merge several producers
/// into one channel; the channel ends when every clone is dropped.
pub struct Sender<T: Item> {
    targets: Arc<[Arc<Chan<T>>]>,
    /// Where `reserve` hands out memory; published by swapping it into an empty channel, or by
    /// one copy when the channel still holds items.
    staging: Vec<T>,
}

impl<T: Item> Sender<T> {
    fn new(targets: Vec<Arc<Chan<T>>>) -> Self {
        for t in &targets {
            lock(&t.queue).senders += 1;
        }
        Sender { targets: targets.into(), staging: Vec::new() }
    }

    /// Appends `items` to the channel (to every receiver of a broadcast), in order.
    ///
    /// Errors: [`StreamError::Cancelled`] once the run was stopped by a failing stage (so an
    /// endless source stops too), [`StreamError::Disconnected`] when every receiver is gone.
    pub fn push(&self, items: &[T]) -> Result<()> {
        self.publish(items)
    }

    /// Hands out `n` items of channel memory to write in place; see [`Slot`]. The contents are
    /// unspecified (`T::default()` or earlier values) until written.
    pub fn reserve(&mut self, n: usize) -> Slot<'_, T> {
        if self.staging.len() < n {
            self.staging.resize(n, T::default());
        }
        Slot { sender: self, n, publish: Some(n) }
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

    fn publish(&self, items: &[T]) -> Result<()> {
        let mut alive = false;
        for t in self.targets.iter() {
            if t.run.is_cancelled() {
                return Err(StreamError::Cancelled);
            }
            let mut q = lock(&t.queue);
            if !q.receiver_alive {
                continue;
            }
            alive = true;
            q.append(items);
            t.hint.store(q.count, Ordering::Release);
            notify(t, &q);
        }
        finish_publish(alive, items.len())
    }

    /// Publishes the first `k` staged items: a single-target sender moves its staging chunk into
    /// the channel (no copy) and takes a pooled one for the next reserve; small commits, and
    /// broadcasts, copy.
    fn publish_staged(&mut self, k: usize) -> Result<()> {
        if let ([t], true) = (&*self.targets, 4 * k >= CHUNK) {
            if t.run.is_cancelled() {
                return Err(StreamError::Cancelled);
            }
            let mut q = lock(&t.queue);
            if !q.receiver_alive {
                return finish_publish(false, k);
            }
            let spare = q.spare(k);
            let mut chunk = std::mem::replace(&mut self.staging, spare);
            chunk.truncate(k);
            q.append_chunk(chunk);
            t.hint.store(q.count, Ordering::Release);
            notify(t, &q);
            drop(q);
            return finish_publish(true, k);
        }
        let staged = std::mem::take(&mut self.staging);
        let out = self.publish(&staged[..k]);
        self.staging = staged;
        out
    }
}

fn notify<T>(t: &Chan<T>, q: &Queue<T>) {
    if q.want > 0 && q.count >= q.want {
        t.ready.notify_one();
    }
}

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
            lock(&t.queue).senders += 1;
        }
        Sender { targets: Arc::clone(&self.targets), staging: Vec::new() }
    }
}

impl<T: Item> Drop for Sender<T> {
    fn drop(&mut self) {
        for t in self.targets.iter() {
            let mut q = lock(&t.queue);
            q.senders -= 1;
            if q.senders == 0 {
                q.closed_by = current_stage();
                t.closed.store(true, Ordering::Release);
                t.ready.notify_all();
            }
        }
    }
}

/// Channel memory reserved by [`Sender::reserve`]: derefs to `&mut [T]` of the reserved length.
/// [`Slot::commit`] publishes a prefix; dropping the slot publishes all of it.
pub struct Slot<'a, T: Item> {
    sender: &'a mut Sender<T>,
    n: usize,
    publish: Option<usize>,
}

impl<T: Item> Slot<'_, T> {
    /// Publishes the first `k` items (`k <= len`), in order, and discards the rest.
    ///
    /// Errors: [`StreamError::CommitTooMany`] when `k` exceeds the slot (nothing is published),
    /// and those of [`Sender::push`].
    pub fn commit(mut self, k: usize) -> Result<()> {
        self.publish = None;
        if k > self.n {
            return Err(StreamError::CommitTooMany { k, n: self.n });
        }
        self.sender.publish_staged(k)
    }
}

impl<T: Item> Deref for Slot<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.sender.staging[..self.n]
    }
}

impl<T: Item> DerefMut for Slot<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.sender.staging[..self.n]
    }
}

impl<T: Item> Drop for Slot<'_, T> {
    fn drop(&mut self) {
        if let Some(k) = self.publish.take() {
            // A drop cannot report: a stopped run or a gone receiver loses the items, which is
            // what either of those means anyway. `commit` reports them.
            let _ = self.sender.publish_staged(k);
        }
    }
}

/// The consuming end of a channel: elastic, two-phase pops of contiguous batches.
pub struct Receiver<T: Item> {
    chan: Arc<Chan<T>>,
    /// The head of the queue, already taken from the shared part: `local[head..]`.
    local: Vec<T>,
    head: usize,
}

impl<T: Item> Receiver<T> {
    fn new(chan: Arc<Chan<T>>) -> Self {
        Receiver { chan, local: Vec::new(), head: 0 }
    }

    /// Waits until at least `min` items are available (or the stream has ended), then returns up
    /// to `max` of them as one contiguous [`Batch`]. At end of stream it returns what remains even
    /// if fewer than `min`, and `Ok(None)` once nothing remains.
    ///
    /// Errors: [`StreamError::ZeroMin`], [`StreamError::MinAboveMax`], and
    /// [`StreamError::Cancelled`] when another stage failed (also while blocked here).
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
        if self.available() < max {
            self.refill(min, max)?;
        }
        let have = self.available();
        if have == 0 {
            return Ok(None);
        }
        stats::batch();
        let len = have.min(max);
        Ok(Some(Batch { receiver: self, len, consume: len }))
    }

    /// After the end of the stream: whether it ended cleanly, that is, the stage that dropped
    /// the last sender returned `Ok` (waiting for it to return if needed) and the run goes on.
    ///
    /// Errors: [`StreamError::Cancelled`] when that stage failed or the run was stopped.
    pub(crate) fn ended_cleanly(&self) -> Result<()> {
        let closer = lock(&self.chan.queue).closed_by.clone();
        // A stage asking about its own channel is still running, so it has not failed (and
        // waiting for itself to return would never end).
        let me = current_stage();
        let other = closer.filter(|c| !me.as_ref().is_some_and(|m| Arc::ptr_eq(c, m)));
        if other.is_some_and(|s| !s.succeeded()) || self.chan.run.is_cancelled() {
            return Err(StreamError::Cancelled);
        }
        Ok(())
    }

    /// Items already in the private head.
    fn available(&self) -> usize {
        self.local.len() - self.head
    }

    /// Waits until at least `min` items are there in all (or the stream has ended), then moves
    /// shared chunks to the private head until it holds `max` items or the channel is empty.
    fn refill(&mut self, min: usize, max: usize) -> Result<()> {
        let have = self.available();
        let chan = Arc::clone(&self.chan);
        let mut q = self.wait_for(&chan, min - have.min(min))?;
        if q.count == 0 {
            return Ok(());
        }
        if have == 0 {
            let old = std::mem::take(&mut self.local);
            q.recycle(old);
            self.local = q.pop_chunk().expect("count > 0");
            self.head = 0;
        } else if self.head > 0 {
            self.local.copy_within(self.head.., 0);
            self.local.truncate(have);
            self.head = 0;
        }
        while self.local.len() < max {
            let Some(c) = q.pop_chunk() else { break };
            self.local.extend_from_slice(&c);
            q.recycle(c);
        }
        chan.hint.store(q.count, Ordering::Release);
        Ok(())
    }

    /// Locks the queue once it holds `need` items, the stream has ended or the run was stopped:
    /// first spinning and yielding briefly on lock-free hints (a producer about to push costs less
    /// than a sleep and a wake-up, and the spinner must not contend for the lock), then blocking
    /// on the condition variable.
    fn wait_for<'q>(&self, chan: &'q Chan<T>, need: usize) -> Result<MutexGuard<'q, Queue<T>>> {
        let ready = |q: &Queue<T>| q.count >= need || q.senders == 0 || chan.run.is_cancelled();
        let mut q = lock(&chan.queue);
        if !ready(&q) {
            let since = Instant::now();
            drop(q);
            for round in 0..SPIN_ROUNDS {
                if chan.hint.load(Ordering::Acquire) >= need
                    || chan.closed.load(Ordering::Acquire)
                    || chan.run.is_cancelled()
                {
                    break;
                }
                if round < 6 {
                    (0..1 << round).for_each(|_| std::hint::spin_loop());
                } else {
                    std::thread::yield_now();
                }
            }
            q = lock(&chan.queue);
            while !ready(&q) {
                q.want = need;
                q = chan.ready.wait(q).unwrap_or_else(PoisonError::into_inner);
                q.want = 0;
            }
            stats::blocked(since);
        }
        if chan.run.is_cancelled() {
            return Err(StreamError::Cancelled);
        }
        Ok(q)
    }

    fn consume(&mut self, k: usize) {
        self.head += k;
        stats::popped(k);
    }
}

impl<T: Item> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut q = lock(&self.chan.queue);
        q.receiver_alive = false;
        q.chunks.clear();
        q.pool.clear();
        q.count = 0;
    }
}

/// Items handed out by [`Receiver::pop`]: derefs to one contiguous `&[T]`. Dropping it consumes
/// every item; [`Batch::finalize`] consumes a prefix and leaves the rest at the head.
pub struct Batch<'a, T: Item> {
    receiver: &'a mut Receiver<T>,
    len: usize,
    consume: usize,
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
    fn deref(&self) -> &[T] {
        let h = self.receiver.head;
        &self.receiver.local[h..h + self.len]
    }
}

impl<T: Item> Drop for Batch<'_, T> {
    fn drop(&mut self) {
        self.receiver.consume(self.consume);
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
        f.debug_struct("Receiver").field("taken", &self.available()).finish_non_exhaustive()
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
