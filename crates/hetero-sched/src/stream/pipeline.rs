//! Pipelines: stages on their own threads joined by channels, run to completion or to the first
//! failure.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use super::channel::{self, Item, Receiver, RunState, Sender, StageDone};
use super::error::{BoxError, Result, StreamError};
use super::report::{Report, StageReport};
use super::stats;

type Body = Box<dyn FnOnce() -> std::result::Result<(), BoxError> + Send + 'static>;

/// A graph of stages joined by channels. Make the channels, move their endpoints into stage
/// closures with [`Pipeline::stage`], then [`Pipeline::run`].
///
/// ```
/// use hetero_sched::stream::Pipeline;
///
/// let mut p = Pipeline::new();
/// let (tx, mut rx) = p.channel::<u32>();
/// p.stage("source", move || tx.push(&[1, 2, 3]));
/// let total = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
/// let t = total.clone();
/// p.stage("sink", move || {
///     while let Some(batch) = rx.pop(1, 64)? {
///         t.fetch_add(batch.iter().sum::<u32>(), std::sync::atomic::Ordering::Relaxed);
///     }
///     Ok::<(), hetero_sched::stream::StreamError>(())
/// });
/// let report = p.run()?;
/// assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), 6);
/// assert_eq!(report.stage("sink").unwrap().items_popped, 3);
/// # Ok::<(), hetero_sched::stream::StreamError>(())
/// ```
pub struct Pipeline {
    run: Arc<RunState>,
    stages: Vec<(String, Body)>,
}

impl Default for Pipeline {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.stages.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Pipeline").field("stages", &names).finish_non_exhaustive()
    }
}

impl Pipeline {
    /// An empty pipeline.
    pub fn new() -> Self {
        Pipeline { run: Arc::new(RunState::default()), stages: Vec::new() }
    }

    /// A point-to-point channel: an unbounded FIFO. Clone the [`Sender`] to merge several
    /// producers; the stream ends when every sender is dropped.
    pub fn channel<T: Item>(&self) -> (Sender<T>, Receiver<T>) {
        channel::channel(&self.run)
    }

    /// One sender whose every item reaches each of `receivers` receivers (a broadcast group
    /// channel). With zero receivers every push fails with [`StreamError::Disconnected`].
    pub fn broadcast<T: Item>(&self, receivers: usize) -> (Sender<T>, Vec<Receiver<T>>) {
        channel::broadcast(&self.run, receivers)
    }

    /// A reduce group channel for a stage array: `senders` producers feeding one receiver
    /// (items of one producer keep their order; producers interleave per push).
    pub fn reduce<T: Item>(&self, senders: usize) -> (Vec<Sender<T>>, Receiver<T>) {
        let (tx, rx) = self.channel();
        let mut all: Vec<Sender<T>> = (1..senders).map(|_| tx.clone()).collect();
        if senders > 0 {
            all.push(tx);
        }
        (all, rx)
    }

    /// An all-to-all group channel for an array of `n` stages: `senders[i][j]` carries items from
    /// stage `i` to receiver `j`; receiver `j` merges what every stage sent to it.
    pub fn all_to_all<T: Item>(&self, n: usize) -> (Vec<Vec<Sender<T>>>, Vec<Receiver<T>>) {
        let (to, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| self.channel::<T>()).unzip();
        let senders = (0..n).map(|_| to.iter().map(Sender::clone).collect()).collect();
        (senders, receivers)
    }

    /// Adds a stage: `f` runs on its own thread and owns the endpoints it captured (dropping its
    /// senders when it returns is what ends its output streams).
    pub fn stage<E, F>(&mut self, name: &str, f: F) -> &mut Self
    where
        E: Into<BoxError>,
        F: FnOnce() -> std::result::Result<(), E> + Send + 'static,
    {
        self.stages.push((name.to_owned(), Box::new(move || f().map_err(Into::into))));
        self
    }

    /// Runs every stage to completion and reports what each did.
    ///
    /// A stage that returns an error or panics ends the run with [`StreamError::Stage`] or
    /// [`StreamError::StagePanicked`] naming it (the first failure wins); every other stage is
    /// woken and its endpoints return [`StreamError::Cancelled`], also when blocked in `pop`.
    /// Endpoints not moved into a stage keep their channels open: drop them before `run`, or a
    /// stage waiting on them waits forever.
    pub fn run(self) -> Result<Report> {
        let origin = Instant::now();
        let failure: Arc<Mutex<Option<StreamError>>> = Arc::new(Mutex::new(None));
        let mut handles = Vec::with_capacity(self.stages.len());
        for (name, body) in self.stages {
            let (run, fail) = (Arc::clone(&self.run), Arc::clone(&failure));
            let stage = name.clone();
            let spawned = thread::Builder::new()
                .name(format!("stage {name}"))
                .spawn(move || run_stage(stage, body, origin, &run, &fail));
            match spawned {
                Ok(h) => handles.push(h),
                Err(source) => record(&self.run, &failure, StreamError::Spawn { stage: name, source }),
            }
        }
        let stages: Vec<StageReport> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        let wall = origin.elapsed();
        match failure.lock().unwrap_or_else(PoisonError::into_inner).take() {
            Some(e) => Err(e),
            None => Ok(Report { stages, wall }),
        }
    }
}

/// Records the run's first failure and stops the others.
fn record(run: &RunState, failure: &Mutex<Option<StreamError>>, e: StreamError) {
    failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
    run.cancel();
}

fn run_stage(
    name: String,
    body: Body,
    origin: Instant,
    run: &RunState,
    failure: &Mutex<Option<StreamError>>,
) -> StageReport {
    stats::begin(origin);
    let done = Arc::new(StageDone::default());
    channel::set_current_stage(Some(Arc::clone(&done)));
    let start = origin.elapsed();
    let outcome = catch_unwind(AssertUnwindSafe(body));
    let end = origin.elapsed();
    let counters = stats::end();
    channel::set_current_stage(None);
    // The outcome is published only after a failure was recorded and the run stopped, so a
    // bridge waiting on it never reports a clean end for a stage that failed.
    let ok = matches!(outcome, Ok(Ok(())));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(source)) => record(run, failure, StreamError::Stage { stage: name.clone(), source }),
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_owned());
            record(run, failure, StreamError::StagePanicked { stage: name.clone(), message });
        }
    }
    done.finish(ok);
    let ns = |n: u64| Duration::from_nanos(n);
    let blocked = ns(counters.blocked_ns);
    StageReport {
        name,
        items_popped: counters.popped,
        items_pushed: counters.pushed,
        batches: counters.batches,
        busy: (end - start).saturating_sub(blocked),
        blocked,
        start,
        end,
        blocked_intervals: counters.blocked.iter().map(|&(a, b)| (ns(a), ns(b))).collect(),
        transfers: counters.transfers.iter().map(|&(a, b, l)| (ns(a), ns(b), l)).collect(),
    }
}
