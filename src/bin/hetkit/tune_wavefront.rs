//! `hetkit tune wavefront`: calibrates the wavefront auto-tuner on this machine (the thesis's
//! "in the factory" step): times every configuration of the synthetic training instances with
//! a progress bar (resumable through `--log`), fits the models on the best five of each, and
//! stores them in the tuning cache where `Config2::auto` / `Config3::auto` look. With
//! `--evaluate` it then measures the prediction against the exhaustive best on held-out
//! instances (synthetic, LCS, Smith-Waterman).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hetero_sched::tune::TuningCache;
use hetkit::wavefront::tune::{
    self, CalibrateOptions, Event, Learner, Rank, SearchLog, SweepEvaluator, report,
};
use indicatif::{ProgressBar, ProgressStyle};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Options of `hetkit tune wavefront`.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The resumable JSON-lines search log.
    pub(crate) log: Option<PathBuf>,
    /// Timed runs per configuration.
    pub(crate) reps: usize,
    /// Per-run cap in milliseconds.
    pub(crate) cap_ms: u64,
    /// `model-tree`, `tree`, `linear` or `svm`.
    pub(crate) learner: String,
    /// The smaller 2D-only training grid.
    pub(crate) quick: bool,
    /// Also evaluate on held-out instances.
    pub(crate) evaluate: bool,
}

fn bar(msg: &str) -> ProgressBar {
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} configs {elapsed} (eta {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(msg.to_owned());
    pb
}

fn progress(pb: &ProgressBar) -> impl FnMut(Event<'_>) + '_ {
    move |e| match e {
        Event::Start { total, logged } => {
            pb.set_length(total as u64);
            pb.set_position(logged as u64);
        }
        Event::Done(r) => {
            pb.inc(1);
            pb.set_message(r.instance.to_string());
        }
    }
}

pub(crate) fn run(o: &Options) -> Result<(), Error> {
    // Every timed run finds its table's pages mapped (see `keep_heap_mapped`).
    tune::keep_heap_mapped();
    let cache = TuningCache::open_default()?;
    let mut opts = if o.quick { CalibrateOptions::quick() } else { CalibrateOptions::default() };
    opts.search.reps = o.reps.max(1);
    opts.search.cap = Duration::from_millis(o.cap_ms.max(1));
    opts.learner = Learner::by_name(&o.learner)?;
    opts.log = o.log.clone();
    println!(
        "calibrating on {} training instances (machine: {}; synthetic unit {:.2} ns/iteration)",
        opts.instances.len(),
        tune::fingerprint_here().as_str(),
        tune::synthetic_unit_ns()
    );
    let pb = bar("searching");
    let cal = tune::calibrate(&opts, &cache, &mut progress(&pb))?;
    pb.finish_and_clear();
    println!(
        "search: {} configurations timed, {} reused from the log, {} capped, {} failed, in {:.1} s",
        cal.summary.evaluated,
        cal.summary.reused,
        cal.summary.capped,
        cal.summary.failed,
        cal.search_time.as_secs_f64()
    );
    for ((rank, rows), path) in cal.rows.iter().zip(&cal.stored) {
        println!(
            "model {rank:?}: {rows} training rows ({}), stored in {}",
            opts.learner.name(),
            path.display()
        );
    }
    println!("training: {:.3} s", cal.train_time.as_secs_f64());
    if o.evaluate {
        evaluate(&opts, &cache)?;
    }
    Ok(())
}

fn evaluate(opts: &CalibrateOptions, cache: &TuningCache) -> Result<(), Error> {
    let held = report::held_out_instances();
    let mut log = match &opts.log {
        Some(p) => SearchLog::open(&p.with_extension("heldout.jsonl"))?,
        None => SearchLog::in_memory(),
    };
    let mut eval = SweepEvaluator::new();
    let pb = bar("exhaustive search, held-out");
    let t = Instant::now();
    tune::search(&held, &mut eval, &mut log, &opts.search, &mut progress(&pb))?;
    pb.finish_and_clear();
    println!("held-out search: {:.1} s", t.elapsed().as_secs_f64());
    let model = tune::model(cache, Rank::Two).ok_or("no 2D model stored")?;
    let predict = |f: &tune::Features| model.predict(f, tune::gpus_here());
    // Both scores time the prediction and the best the same way: from the search log, and
    // re-measured now (interleaved rounds of batched runs, the fastest round of each).
    let logged = report::from_log(log.records(), &held, &predict)?;
    let (mean, min) = report::mean_min(&logged, report::EvalRow::pct_of_best);
    println!("from the search log: mean {mean:.1} % of the best, min {min:.1} %");
    // Two passes pooled: a state that slows one configuration for a whole pass on a small
    // instance does not decide its score (see `report::pooled`).
    let passes = (0..2)
        .map(|_| report::evaluate(log.records(), &held, &predict, &mut eval, &report::Retiming::default()))
        .collect::<Result<Vec<_>, _>>()?;
    let rows = report::pooled(&passes)?;
    println!("re-measured (two passes pooled):\n{}", report::markdown(&rows));
    Ok(())
}
