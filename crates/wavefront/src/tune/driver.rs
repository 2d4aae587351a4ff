//! The search driver: every configuration of every instance, timed, written to a JSON-lines log
//! as it comes, so an interrupted search resumes where it stopped (digest §3.1, §8.3).
//!
//! Runs slower than the cap are cut after their first repetition and logged without a time
//! (the thesis's 90 s cap); configurations the executor cannot run (a GPU band without a GPU)
//! are logged as failed. A run whose table differs from the sequential reference is an error:
//! tuning must never trade correctness.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Result, WavefrontError};
use crate::tune::features::Features;
use crate::tune::learn::kind;
use crate::tune::rounds::{Retiming, remeasure};
use crate::tune::space::{Candidate, SpaceOptions, candidates};

/// The applications the driver knows how to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum App {
    /// The 2D synthetic kernel ([`crate::apps::synthetic::synthetic_2d`]), the training app.
    Synthetic,
    /// The 3D synthetic kernel ([`crate::apps::synthetic::synthetic_3d`]).
    Synthetic3,
    /// The integer synthetic kernel ([`crate::apps::synthetic::synthetic_int_2d`]): cheap
    /// payload-free cells for training.
    #[serde(rename = "synthetic-int")]
    SyntheticInt,
    /// Longest common subsequence through the generic executors.
    Lcs,
    /// Smith-Waterman (BLOSUM62, gaps 11/1) through the generic executors.
    Sw,
}

impl App {
    /// The name used in logs and tables.
    pub fn name(self) -> &'static str {
        match self {
            App::Synthetic => "synthetic",
            App::Synthetic3 => "synthetic3",
            App::SyntheticInt => "synthetic-int",
            App::Lcs => "lcs",
            App::Sw => "sw",
        }
    }
}

/// One problem instance: an application, its grid side and, for the synthetic kernels, the
/// grain (`grain` inner iterations over `dsize` doubles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Instance {
    /// The application.
    pub app: App,
    /// Grid side.
    pub dim: usize,
    /// Synthetic inner iterations per double, or hash rounds per integer cell (0 for the others).
    pub grain: u32,
    /// Synthetic doubles per cell, 0..=5 (0 for the others).
    pub dsize: usize,
}

impl Instance {
    /// A 2D synthetic instance.
    pub fn synthetic(dim: usize, grain: u32, dsize: usize) -> Self {
        Instance { app: App::Synthetic, dim, grain, dsize }
    }

    /// A 2D integer synthetic instance (`dsize` 0) of `rounds` hash rounds per cell.
    pub fn synthetic_int(dim: usize, rounds: u32) -> Self {
        Instance { app: App::SyntheticInt, dim, grain: rounds, dsize: 0 }
    }

    /// An instance of another application (no grain parameters).
    pub fn of(app: App, dim: usize) -> Self {
        Instance { app, dim, grain: 0, dsize: 0 }
    }
}

impl std::fmt::Display for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.app {
            App::Synthetic => {
                write!(f, "{} dim {} grain {} dsize {}", self.app.name(), self.dim, self.grain, self.dsize)
            }
            // Their cells are fixed (no payload parameter).
            App::Synthetic3 | App::SyntheticInt => {
                write!(f, "{} dim {} grain {}", self.app.name(), self.dim, self.grain)
            }
            _ => write!(f, "{} dim {}", self.app.name(), self.dim),
        }
    }
}

/// One logged measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The instance.
    pub instance: Instance,
    /// Its features, measured once per instance (and reused on resume).
    pub features: Features,
    /// The configuration.
    pub candidate: Candidate,
    /// Every timed run in milliseconds.
    pub times_ms: Vec<f64>,
    /// The fastest of the runs ([`SearchOptions::reps`]); `None` when the configuration was
    /// capped or failed.
    pub time_ms: Option<f64>,
    /// Why the configuration could not run (`None` for a timed or capped one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Re-timed by the search's refinement ([`Refine`]): `times_ms` are its rounds.
    #[serde(default, skip_serializing_if = "is_false")]
    pub refined: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// What the driver times: features once per instance, then single runs of configurations.
pub trait Evaluate {
    /// The features of `instance`.
    ///
    /// # Errors
    /// When the instance cannot be built (an unsupported `dsize`, ...).
    fn features(&mut self, instance: &Instance) -> Result<Features>;

    /// One run of `instance` under `candidate`: `Ok(Ok(time))`, `Ok(Err(reason))` when the
    /// executor cannot run the configuration here (logged as failed, the search goes on).
    ///
    /// # Errors
    /// A result that differs from the sequential reference, or an instance that cannot be
    /// built: the search stops.
    fn run(
        &mut self,
        instance: &Instance,
        candidate: &Candidate,
    ) -> Result<std::result::Result<Duration, String>>;

    /// Whether the application has a GPU form (else GPU configurations are not tried).
    fn has_gpu_form(&self, app: App) -> bool {
        matches!(app, App::Synthetic | App::Lcs)
    }
}

/// The results so far: in memory, and appended line by line to a file when there is one.
#[derive(Debug, Default)]
pub struct SearchLog {
    path: Option<PathBuf>,
    records: Vec<Record>,
}

impl SearchLog {
    /// A log kept only in memory.
    pub fn in_memory() -> Self {
        SearchLog::default()
    }

    /// The log at `path`, with the records it already holds (none if it does not exist). A last
    /// line cut short by an interrupted write is dropped (and rewritten when its configuration
    /// is timed again).
    ///
    /// # Errors
    /// A file that cannot be read, or a line other than the last that is not a record.
    pub fn open(path: &Path) -> Result<Self> {
        let bad = |reason: String| WavefrontError::TuneFile { path: path.to_owned(), reason };
        let mut records = Vec::new();
        match std::fs::File::open(path) {
            Ok(f) => {
                let lines: Vec<String> = std::io::BufReader::new(f)
                    .lines()
                    .collect::<std::io::Result<_>>()
                    .map_err(|e| bad(e.to_string()))?;
                let last = lines.iter().rposition(|l| !l.trim().is_empty());
                let mut at: HashMap<(Instance, Candidate), usize> = HashMap::new();
                for (k, line) in lines.iter().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                    match serde_json::from_str::<Record>(line) {
                        // A later line for the same configuration (a refinement) replaces it.
                        Ok(r) => match at.get(&(r.instance, r.candidate)) {
                            Some(&i) => records[i] = r,
                            None => {
                                at.insert((r.instance, r.candidate), records.len());
                                records.push(r);
                            }
                        },
                        Err(_) if Some(k) == last && !line.trim_end().ends_with('}') => {
                            tracing::warn!("{}: dropping a line cut short", path.display());
                        }
                        Err(e) => return Err(bad(format!("line {}: {e}", k + 1))),
                    }
                }
                // Rewrite without the torn line (and superseded ones) so appends start on a
                // fresh line.
                let text: String = records
                    .iter()
                    .map(|r| serde_json::to_string(r).map(|s| s + "\n"))
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| bad(e.to_string()))?;
                std::fs::write(path, text).map_err(|e| bad(e.to_string()))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| bad(e.to_string()))?;
                }
            }
            Err(e) => return Err(bad(e.to_string())),
        }
        Ok(SearchLog { path: Some(path.to_owned()), records })
    }

    /// The records, in the order they were measured.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    fn append(&mut self, r: Record) -> Result<()> {
        self.write_line(&r)?;
        self.records.push(r);
        Ok(())
    }

    /// Logs `r` in place of the record of the same instance and configuration.
    fn replace(&mut self, r: Record) -> Result<()> {
        self.write_line(&r)?;
        match self.records.iter_mut().find(|o| o.instance == r.instance && o.candidate == r.candidate) {
            Some(old) => *old = r,
            None => self.records.push(r),
        }
        Ok(())
    }

    fn write_line(&self, r: &Record) -> Result<()> {
        if let Some(path) = &self.path {
            let bad = |e: String| WavefrontError::TuneFile { path: path.clone(), reason: e };
            let line = serde_json::to_string(&r).map_err(|e| bad(e.to_string()))?;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| bad(e.to_string()))?;
            writeln!(f, "{line}").and_then(|()| f.flush()).map_err(|e| bad(e.to_string()))?;
        }
        Ok(())
    }
}

/// How the driver measures.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// Timed runs per configuration (the thesis: 3); the fastest is kept.
    pub reps: usize,
    /// A run longer than this is not repeated and the configuration is logged as capped.
    pub cap: Duration,
    /// Which configurations are tried.
    pub space: SpaceOptions,
    /// A configuration whose first run is shorter than this is timed in batches of back-to-back
    /// runs lasting about this long (each repetition's time is the batch's mean), so
    /// microsecond instances are not ranked by timer and scheduler noise.
    pub min_timing: Duration,
    /// A second look at each instance's best configurations once all are timed (`None`: the
    /// first timings stand).
    pub refine: Option<Refine>,
}

impl Default for SearchOptions {
    /// 3 runs, a 2 s cap, the CPU space, batches of at least 1 ms, refined.
    fn default() -> Self {
        SearchOptions {
            reps: 3,
            cap: Duration::from_secs(2),
            space: SpaceOptions::default(),
            min_timing: Duration::from_millis(1),
            refine: Some(Refine::default()),
        }
    }
}

/// The search's refinement: once every configuration of an instance is timed, the fastest few
/// of each executor are timed again together in interleaved rounds ([`Retiming`]), each keeping
/// its fastest round, and logged in place of their first timings.
///
/// Why: the training set is the best five per instance and executor, and the executor
/// decision is the ratio of the best tiled to the best parallel time; on a 2-core VM a
/// sub-millisecond configuration timed three times in a row can be ranked by one descheduled
/// run, which flipped the logged best of small instances between otherwise equal runs. The
/// rounds spread such a spike over one round of one configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refine {
    /// Fastest configurations per executor (tiled, parallel, GPU) re-timed.
    pub per_executor: usize,
    /// Instances whose fastest logged time is at least this long are left as timed: their runs
    /// outlast scheduler noise, and their rounds would cost seconds.
    pub below_ms: f64,
    /// How they are re-timed.
    pub timing: Retiming,
}

impl Default for Refine {
    /// The 6 fastest per executor (one more than the training set keeps) of instances under
    /// 20 ms, in batches of at least 2 ms, 24 ms per configuration, 5 to 100 rounds.
    fn default() -> Self {
        Refine {
            per_executor: 6,
            below_ms: 20.0,
            timing: Retiming { min_batch_ms: 2.0, min_total_ms: 24.0, min_rounds: 5, max_rounds: 100 },
        }
    }
}

/// Progress of a search, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The search starts: configurations in all, and how many the log already holds.
    Start {
        /// Configurations over all instances.
        total: usize,
        /// Of which already logged.
        logged: usize,
    },
    /// One configuration was timed (or capped, or failed).
    Done(&'a Record),
}

/// How a search went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchSummary {
    /// Configurations timed in this call.
    pub evaluated: usize,
    /// Configurations found in the log and not timed again.
    pub reused: usize,
    /// Configurations cut by the cap.
    pub capped: usize,
    /// Configurations the executor could not run.
    pub failed: usize,
    /// Configurations re-timed by the refinement in this call.
    pub refined: usize,
}

/// The configurations the driver tries on `instance` (GPU ones only for applications with a
/// GPU form).
pub fn instance_candidates(instance: &Instance, space: &SpaceOptions, gpu_form: bool) -> Vec<Candidate> {
    let mut space = space.clone();
    if !gpu_form {
        space.gpus = 0;
    }
    candidates(instance.dim, &space)
}

/// Times every configuration of every instance that `log` does not hold yet, appending each
/// result to `log` as it comes.
///
/// # Errors
/// Those of the evaluator (a wrong result stops the search) and of writing the log.
pub fn search(
    instances: &[Instance],
    eval: &mut dyn Evaluate,
    log: &mut SearchLog,
    opts: &SearchOptions,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<SearchSummary> {
    let done: HashSet<(Instance, Candidate)> =
        log.records.iter().map(|r| (r.instance, r.candidate)).collect();
    let mut features: HashMap<Instance, Features> =
        log.records.iter().map(|r| (r.instance, r.features)).collect();
    let plan: Vec<(Instance, Vec<Candidate>)> = instances
        .iter()
        .map(|i| (*i, instance_candidates(i, &opts.space, eval.has_gpu_form(i.app))))
        .collect();
    let total = plan.iter().map(|(_, c)| c.len()).sum();
    let logged =
        plan.iter().flat_map(|(i, cs)| cs.iter().map(move |c| (*i, *c))).filter(|k| done.contains(k)).count();
    on_event(Event::Start { total, logged });
    let mut summary = SearchSummary { reused: logged, ..SearchSummary::default() };
    for (inst, cands) in plan {
        for cand in cands.into_iter().filter(|c| !done.contains(&(inst, *c))) {
            let f = match features.get(&inst) {
                Some(f) => *f,
                None => *features.entry(inst).or_insert(eval.features(&inst)?),
            };
            let record = time_one(eval, &inst, &cand, f, opts)?;
            summary.evaluated += 1;
            match (&record.time_ms, &record.failure) {
                (None, Some(_)) => summary.failed += 1,
                (None, None) => summary.capped += 1,
                _ => {}
            }
            log.append(record)?;
            on_event(Event::Done(log.records.last().expect("just appended")));
        }
        if let Some(refine) = &opts.refine {
            summary.refined += refine_instance(&inst, eval, log, refine)?;
        }
    }
    Ok(summary)
}

/// [`Refine`]s the configurations of `inst` in `log`, unless they are refined already (a
/// resumed search) or too slow to need it; returns how many were re-timed.
fn refine_instance(
    inst: &Instance,
    eval: &mut dyn Evaluate,
    log: &mut SearchLog,
    refine: &Refine,
) -> Result<usize> {
    let mut mine: Vec<&Record> =
        log.records.iter().filter(|r| r.instance == *inst && r.time_ms.is_some()).collect();
    if mine.is_empty() || log.records.iter().any(|r| r.instance == *inst && r.refined) {
        return Ok(0);
    }
    let time = |r: &Record| r.time_ms.unwrap_or(f64::INFINITY);
    mine.sort_by(|a, b| {
        (kind(&a.candidate).cmp(&kind(&b.candidate)))
            .then(time(a).total_cmp(&time(b)))
            .then(a.candidate.cmp(&b.candidate))
    });
    let best_ms = mine.iter().map(|r| time(r)).fold(f64::INFINITY, f64::min);
    if best_ms >= refine.below_ms {
        return Ok(0);
    }
    let mut chosen: Vec<Record> = Vec::new();
    for r in mine {
        let same = chosen.iter().filter(|c| kind(&c.candidate) == kind(&r.candidate)).count();
        if same < refine.per_executor {
            chosen.push(r.clone());
        }
    }
    let cands: Vec<Candidate> = chosen.iter().map(|r| r.candidate).collect();
    let batch = refine.timing.batch_runs(best_ms);
    let times = remeasure(inst, &cands, eval, batch, refine.timing.rounds(best_ms, batch))?;
    let n = chosen.len();
    for mut r in chosen {
        r.times_ms = times[&r.candidate].clone();
        r.time_ms = Some(fastest(&r.times_ms));
        r.refined = true;
        log.replace(r)?;
    }
    Ok(n)
}

fn time_one(
    eval: &mut dyn Evaluate,
    inst: &Instance,
    cand: &Candidate,
    features: Features,
    opts: &SearchOptions,
) -> Result<Record> {
    let mut times = Vec::new();
    let mut record = Record {
        instance: *inst,
        features,
        candidate: *cand,
        times_ms: Vec::new(),
        time_ms: None,
        failure: None,
        refined: false,
    };
    // The first run tells whether to batch; unbatched, it is the first repetition.
    let first = match eval.run(inst, cand)? {
        Ok(t) => t,
        Err(reason) => {
            record.failure = Some(reason);
            return Ok(record);
        }
    };
    if first > opts.cap {
        record.times_ms = vec![first.as_secs_f64() * 1e3];
        return Ok(record);
    }
    let batch = if first.is_zero() || first >= opts.min_timing {
        1
    } else {
        (opts.min_timing.as_secs_f64() / first.as_secs_f64()).ceil().min(10_000.0) as usize
    };
    if batch == 1 {
        times.push(first.as_secs_f64() * 1e3);
    }
    while times.len() < opts.reps.max(1) {
        let mut total = Duration::ZERO;
        for _ in 0..batch {
            match eval.run(inst, cand)? {
                Ok(t) => total += t,
                Err(reason) => {
                    record.failure = Some(reason);
                    record.times_ms = times;
                    return Ok(record);
                }
            }
        }
        let t = total / batch as u32;
        times.push(t.as_secs_f64() * 1e3);
        if t > opts.cap {
            record.times_ms = times;
            return Ok(record);
        }
    }
    record.time_ms = Some(fastest(&times));
    record.times_ms = times;
    Ok(record)
}

/// Keeps freed heap memory mapped for the rest of the process (glibc: no trimming of the heap's
/// top, and blocks up to 32 MiB from the heap instead of fresh `mmap`s), so every timed run of a
/// configuration writes its table into pages that are already mapped. Call it once at the start
/// of a search or report; it changes how this process's allocator returns memory to the OS.
///
/// Why: glibc gives the top of the heap back to the OS when a large block there is freed, and
/// the next run's table then page-faults on first touch. The cost depends on the tile (the
/// order in which the table's pages are first written): on the 2-core VM a search of side 48,
/// grain 8 measured sequential tiles of 2 at 0.0665 ms against 0.0444 ms with the heap kept
/// (tiles of 32: 0.0728 against 0.0690), which reversed the ranking of the small instances
/// depending on what the heap held before, and made the search's log and the re-timing
/// disagree. Elsewhere (other allocators or systems) this does nothing.
pub fn keep_heap_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it has no memory-safety preconditions.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}

/// The fastest run: on a shared machine interference only ever adds time (a descheduled
/// thread stalls a whole wavefront), so the minimum estimates a configuration's own cost best.
/// (The thesis averaged 3 runs on dedicated machines.) NaN for none.
pub(crate) fn fastest(xs: &[f64]) -> f64 {
    xs.iter().copied().reduce(f64::min).unwrap_or(f64::NAN)
}

/// The median (mean of the middle two for an even count); NaN for none.
pub(crate) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Wall-clock of one call.
pub(crate) fn timed<R>(f: impl FnOnce() -> R) -> (R, Duration) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake machine: time grows with the tile's distance from an ideal tile; counts runs.
    #[derive(Default)]
    struct Fake {
        runs: usize,
        features: usize,
        fail_after: Option<usize>,
    }

    impl Evaluate for Fake {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            self.features += 1;
            Ok(Features::new(i.dim, f64::from(i.grain), i.dsize))
        }
        fn run(&mut self, i: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            if self.fail_after == Some(self.runs) {
                return Err(WavefrontError::Tune("interrupted".into()));
            }
            self.runs += 1;
            if c.band >= 0 {
                return Ok(Err("no GPU".into()));
            }
            let ideal = (i.dim / 8).max(1) as f64;
            let ms = 1.0 + (c.tile as f64 / ideal).log2().abs() + if c.parallel { 0.0 } else { 0.5 };
            Ok(Ok(Duration::from_secs_f64(ms / 1e3)))
        }
    }

    fn instances() -> Vec<Instance> {
        vec![Instance::synthetic(64, 1, 1), Instance::synthetic(100, 4, 3), Instance::of(App::Lcs, 30)]
    }

    #[test]
    fn resume_does_not_repeat_work() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let opts = SearchOptions { reps: 3, refine: None, ..SearchOptions::default() };
        let total: usize = instances().iter().map(|i| instance_candidates(i, &opts.space, true).len()).sum();
        // Interrupted after 10 runs: 3 configurations complete (3 runs each), the 4th lost.
        let mut first = Fake { fail_after: Some(10), ..Fake::default() };
        let mut log = SearchLog::open(&path).unwrap();
        assert!(search(&instances(), &mut first, &mut log, &opts, &mut |_| {}).is_err());
        assert_eq!(log.records().len(), 3);
        // Resumed: only the rest is timed, and features are not measured again for the first instance.
        let mut second = Fake::default();
        let mut log = SearchLog::open(&path).unwrap();
        assert_eq!(log.records().len(), 3);
        let mut events = 0;
        let s = search(&instances(), &mut second, &mut log, &opts, &mut |_| events += 1).unwrap();
        assert_eq!(s.evaluated, total - 3);
        assert_eq!(s.reused, 3);
        assert_eq!(second.runs, 3 * (total - 3));
        assert_eq!(second.features, 2);
        assert_eq!(events, 1 + total - 3);
        // A third pass times nothing.
        let mut third = Fake::default();
        let mut log = SearchLog::open(&path).unwrap();
        assert_eq!(log.records().len(), total);
        let s = search(&instances(), &mut third, &mut log, &opts, &mut |_| {}).unwrap();
        assert_eq!((s.evaluated, s.reused, third.runs), (0, total, 0));
    }

    /// A machine whose runs take 50 us (or fail under tile 1), counting them.
    struct Quick(usize);
    impl Evaluate for Quick {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Ok(Features::new(i.dim, 1.0, 1))
        }
        fn run(&mut self, _: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            self.0 += 1;
            if c.tile == 1 {
                return Ok(Err("not here".into()));
            }
            Ok(Ok(Duration::from_micros(50)))
        }
    }

    #[test]
    fn short_runs_are_timed_in_batches() {
        let opts = SearchOptions {
            reps: 3,
            space: SpaceOptions { tiles: vec![1, 2], ..SpaceOptions::default() },
            refine: None,
            ..SearchOptions::default()
        };
        let mut q = Quick(0);
        let mut log = SearchLog::in_memory();
        let s = search(&[Instance::synthetic(4, 1, 1)], &mut q, &mut log, &opts, &mut |_| {}).unwrap();
        assert_eq!((s.evaluated, s.failed), (4, 2));
        // Tile 2 (tiled and parallel): a probe, then 3 batches of 1 ms / 50 us = 20 runs.
        assert_eq!(q.0, 2 + 2 * (1 + 3 * 20));
        for r in log.records().iter().filter(|r| r.candidate.tile == 2) {
            assert_eq!(r.times_ms.len(), 3);
            assert!((r.time_ms.unwrap() - 0.05).abs() < 1e-9, "{r:?}");
        }
        // Without batching each repetition is one run.
        let mut q = Quick(0);
        let once = SearchOptions { min_timing: Duration::ZERO, ..opts };
        search(&[Instance::synthetic(4, 1, 1)], &mut q, &mut SearchLog::in_memory(), &once, &mut |_| {})
            .unwrap();
        assert_eq!(q.0, 2 + 2 * 3);
    }

    #[test]
    fn torn_last_line_is_dropped_and_other_garbage_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut log = SearchLog::open(&path).unwrap();
        search(&instances()[..1], &mut Fake::default(), &mut log, &SearchOptions::default(), &mut |_| {})
            .unwrap();
        let n = log.records().len();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"instance\": {\"app\": \"synth");
        std::fs::write(&path, &text).unwrap();
        let reopened = SearchLog::open(&path).unwrap();
        assert_eq!(reopened.records().len(), n);
        assert_eq!(reopened.records(), log.records());
        std::fs::write(&path, format!("not json\n{text}")).unwrap();
        assert!(matches!(SearchLog::open(&path), Err(WavefrontError::TuneFile { .. })));
    }

    #[test]
    fn caps_and_failures_are_logged_without_times() {
        struct Slow;
        impl Evaluate for Slow {
            fn features(&mut self, i: &Instance) -> Result<Features> {
                Ok(Features::new(i.dim, 1.0, 1))
            }
            fn run(&mut self, _: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
                Ok(if c.band >= 0 {
                    Err("no GPU".into())
                } else {
                    Ok(Duration::from_millis(if c.tile == 1 { 50 } else { 1 }))
                })
            }
        }
        let opts = SearchOptions {
            reps: 3,
            cap: Duration::from_millis(10),
            space: SpaceOptions { tiles: vec![1, 2], gpus: 1, bands: 2, halos: 0 },
            refine: None,
            ..SearchOptions::default()
        };
        let mut log = SearchLog::in_memory();
        let s = search(&[Instance::synthetic(8, 1, 1)], &mut Slow, &mut log, &opts, &mut |_| {}).unwrap();
        assert_eq!(s.capped, 2, "tile 1, tiled and parallel");
        assert_eq!(s.failed, 4, "two bands, two tiles");
        for r in log.records() {
            match (r.candidate.tile, r.candidate.band) {
                (_, b) if b >= 0 => assert!(r.failure.is_some() && r.time_ms.is_none()),
                (1, _) => assert!(r.time_ms.is_none() && r.times_ms.len() == 1 && r.failure.is_none()),
                _ => assert_eq!((r.time_ms, r.times_ms.len()), (Some(1.0), 3)),
            }
        }
    }

    /// A machine on which parallel tiles of 16 are fastest (10 us; parallel 8: 12 us, the rest
    /// 20 us), but the first three runs of parallel 16 take 15 us (a cold start, a descheduled
    /// thread), so the first timings rank parallel 8 first.
    #[derive(Default)]
    struct Spiky {
        runs: usize,
        per: HashMap<Candidate, usize>,
    }
    impl Evaluate for Spiky {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Ok(Features::new(i.dim, 1.0, 1))
        }
        fn run(&mut self, _: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            self.runs += 1;
            let k = self.per.entry(*c).or_default();
            *k += 1;
            let us = match (c.parallel, c.tile) {
                (true, 16) if *k <= 3 => 15,
                (true, 16) => 10,
                (true, 8) => 12,
                _ => 20,
            };
            Ok(Ok(Duration::from_micros(us)))
        }
    }

    #[test]
    fn refinement_reranks_the_best_in_rounds_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let timing = Retiming { min_batch_ms: 0.0, min_total_ms: 0.0, min_rounds: 4, max_rounds: 4 };
        let opts = SearchOptions {
            reps: 3,
            min_timing: Duration::ZERO,
            space: SpaceOptions { tiles: vec![2, 4, 8, 16], ..SpaceOptions::default() },
            refine: Some(Refine { per_executor: 2, below_ms: 20.0, timing }),
            ..SearchOptions::default()
        };
        let inst = [Instance::synthetic(64, 1, 1)];
        let mut spiky = Spiky::default();
        let mut log = SearchLog::open(&path).unwrap();
        let s = search(&inst, &mut spiky, &mut log, &opts, &mut |_| {}).unwrap();
        // Unrefined, parallel tiles of 8 would be the best at 12 us.
        assert_eq!((s.evaluated, s.refined), (8, 4));
        // 8 configurations x 3 runs, then 2 per executor: one warm-up and 4 rounds each.
        assert_eq!(spiky.runs, 8 * 3 + 4 * (1 + 4));
        let best =
            log.records().iter().min_by(|a, b| a.time_ms.unwrap().total_cmp(&b.time_ms.unwrap())).unwrap();
        assert_eq!(best.candidate, Candidate::cpu(true, 16));
        assert!(best.refined && best.times_ms.len() == 4 && (best.time_ms.unwrap() - 0.01).abs() < 1e-9);
        assert_eq!(log.records().iter().filter(|r| r.refined).count(), 4);
        // The file holds the refined lines after the first ones; reopened, they replace them.
        let reopened = SearchLog::open(&path).unwrap();
        assert_eq!(reopened.records(), log.records());
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 8);
        // Resumed: nothing is timed or refined again.
        let mut again = Spiky::default();
        let mut log = reopened;
        let s = search(&inst, &mut again, &mut log, &opts, &mut |_| {}).unwrap();
        assert_eq!((s.evaluated, s.refined, again.runs), (0, 0, 0));
        // Instances slower than `below_ms` keep their first timings.
        let slow = SearchOptions { refine: Some(Refine { below_ms: 0.001, ..opts.refine.unwrap() }), ..opts };
        let s =
            search(&inst, &mut Spiky::default(), &mut SearchLog::in_memory(), &slow, &mut |_| {}).unwrap();
        assert_eq!(s.refined, 0);
    }

    #[test]
    fn median_and_fastest() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(fastest(&[3.0, 1.0, 2.0]), 1.0);
        assert!(fastest(&[]).is_nan());
    }
}
