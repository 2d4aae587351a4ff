//! "In the factory" tuning (digest §3.1): [`calibrate`] searches the synthetic training
//! instances on this machine, keeps the best five configurations of each, and stores them in
//! hetero-sched's tuning cache under this machine's fingerprint; [`choose`] (behind
//! `Config2::auto` / `Config3::auto`) predicts from the model fitted on them, or, without a
//! model, runs a short search on a small synthetic stand-in of the problem.
//!
//! The stored file is a Kernel Tuner cache file whose parameters are the features and the
//! configuration (one entry per training row), so `hetkit info` lists it; the model is refitted
//! from it when first needed (fitting is deterministic and takes milliseconds).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hetero_sched::tune::{CacheKey, Config as TuneConfig, Fingerprint, KtEntry, KtFile, TuningCache, Value};
use serde_json::json;

use crate::error::{Result, WavefrontError};
use crate::tune::driver::{App, Evaluate, Event, Instance, SearchLog, SearchOptions, SearchSummary, search};
use crate::tune::evaluate::SweepEvaluator;
use crate::tune::features::{Features, synthetic_unit_ns};
use crate::tune::learn::{BEST_WITHIN, Learner, Predictor, TrainRow, training_set};
use crate::tune::space::{CPU_TILES, Candidate, SpaceOptions};

/// Which grids a model is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rank {
    /// 2D tables.
    Two,
    /// 3D boxes.
    Three,
}

impl Rank {
    fn tag(self) -> &'static str {
        match self {
            Rank::Two => "2d",
            Rank::Three => "3d",
        }
    }
}

/// The regularly sampled 2D training grid. The float kernel: sides 32..512 (doubling), grains
/// 1, 4, 16, 64 over 1 to 5 doubles; then sides 1024 and 2048 with cheap cells (tsize 1 to
/// about 5), where large tables of cheap cells turn parallel. Every payload is sampled: the
/// best sequential tile is not smooth in the payload on every machine (on the 2-core VM it
/// jumps from 2 with one double to 32 with three at side 32, grain 16), so no payload is left
/// to interpolation. Payload-free cells (dsize 0, as in sequence comparison) come from the
/// integer kernel ([`App::SyntheticInt`]) at sides 32..2048 with 1 and 4 hash rounds (tsize
/// about 0.7 and 2.3): the float kernel's grain loop runs over its payload, so its payload-free
/// cell has no loop at all (tsize 0.3 whatever the grain) and is the one cell type whose
/// parallel gain on the 2-core VM disagreed with sequence comparison's (see the book's tuning
/// chapter). Evaluation instances should lie between these points.
pub fn training_instances_2d() -> Vec<Instance> {
    let mut out = Vec::new();
    for dim in [32, 64, 128, 256, 512] {
        for dsize in 1..=5 {
            for grain in [1, 4, 16, 64] {
                out.push(Instance::synthetic(dim, grain, dsize));
            }
        }
    }
    for (dim, grain, dsize) in [(1024, 1, 1), (1024, 4, 1), (1024, 1, 3), (2048, 1, 1), (2048, 4, 1)] {
        out.push(Instance::synthetic(dim, grain, dsize));
    }
    for dim in [32, 64, 128, 256, 512, 1024, 2048] {
        for rounds in [1, 4] {
            out.push(Instance::synthetic_int(dim, rounds));
        }
    }
    out
}

/// The 3D synthetic training grid: sides 8, 11, 16, 24, 32, 48 (about `sqrt 2` to `2` apart)
/// and every power-of-two grain from 1 to 64. On the 2-core VM the best configuration of a 3D
/// box changes between grains 8 and 64 at every side (side 16: sequential tiles of 4, then
/// parallel tiles of 10; side 24: sequential 4, then parallel 2), too coarse a step to
/// interpolate, so the grain is sampled at every factor of two; a 3D search is cheap (at most
/// 14 configurations of at most 110k cells).
pub fn training_instances_3d() -> Vec<Instance> {
    let mut out = Vec::new();
    for dim in [8, 11, 16, 24, 32, 48] {
        for grain in [1, 2, 4, 8, 16, 32, 64] {
            out.push(Instance { app: App::Synthetic3, dim, grain, dsize: 0 });
        }
    }
    out
}

/// What [`calibrate`] does.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// Training instances (2D and 3D ones go to separate models).
    pub instances: Vec<Instance>,
    /// How each configuration is timed.
    pub search: SearchOptions,
    /// Best configurations kept per instance and executor (the thesis: 5).
    pub top_k: usize,
    /// Of which only those within this factor of the executor's best ([`BEST_WITHIN`]).
    pub within: f64,
    /// The parameter learner.
    pub learner: Learner,
    /// A JSON-lines log that makes the search resumable (none: in memory only).
    pub log: Option<PathBuf>,
}

impl Default for CalibrateOptions {
    /// The 2D and 3D training grids, 3 runs per configuration, top 5 within 5 % of the best,
    /// the model tree.
    fn default() -> Self {
        let mut instances = training_instances_2d();
        instances.extend(training_instances_3d());
        CalibrateOptions {
            instances,
            search: SearchOptions { space: space_here(), ..SearchOptions::default() },
            top_k: 5,
            within: BEST_WITHIN,
            learner: Learner::ModelTree,
            log: None,
        }
    }
}

impl CalibrateOptions {
    /// A smaller 2D-only grid (sides 32..256, grains 1, 8, 64 over 1 and 5 doubles, and the
    /// integer cell with one hash round): a couple of minutes on a loaded 2-core machine.
    pub fn quick() -> Self {
        let mut instances = Vec::new();
        for dim in [32, 64, 128, 256] {
            instances.push(Instance::synthetic_int(dim, 1));
            for dsize in [1, 5] {
                for grain in [1, 8, 64] {
                    instances.push(Instance::synthetic(dim, grain, dsize));
                }
            }
        }
        CalibrateOptions { instances, ..CalibrateOptions::default() }
    }
}

/// The search space on this machine: the CPU tiles, and GPU bands when device 0 answers.
pub fn space_here() -> SpaceOptions {
    SpaceOptions { gpus: gpus_here(), ..SpaceOptions::default() }
}

/// GPUs the executors can use here (0 or 1: the crate has no dual-GPU executor).
pub fn gpus_here() -> usize {
    static GPUS: OnceLock<usize> = OnceLock::new();
    *GPUS.get_or_init(|| usize::from(cuda_kernels::Gpu::new(0).is_ok()))
}

/// This machine's fingerprint: the CPU, and the GPU when there is one.
pub fn fingerprint_here() -> Fingerprint {
    let cpu = Fingerprint::cpu();
    match cuda_kernels::Gpu::new(0) {
        Ok(g) => Fingerprint::new(format!("{} + {}", cpu.as_str(), Fingerprint::gpu(&g).as_str())),
        Err(_) => cpu,
    }
}

fn model_key(rank: Rank, fp: &Fingerprint) -> CacheKey {
    CacheKey::new("wavefront::auto", fp, rank.tag(), "model")
}

/// What [`calibrate`] did.
#[derive(Debug)]
pub struct Calibration {
    /// The search's counts.
    pub summary: SearchSummary,
    /// Time spent searching.
    pub search_time: Duration,
    /// Time spent fitting the models.
    pub train_time: Duration,
    /// Training rows per model.
    pub rows: Vec<(Rank, usize)>,
    /// Where the models were stored.
    pub stored: Vec<PathBuf>,
    /// Every record of the search (for reports).
    pub records: Vec<crate::tune::driver::Record>,
}

/// Searches `opts.instances` on this machine, fits the models on the best `top_k`
/// configurations of each instance, and stores the training sets in `cache` under this
/// machine's fingerprint, where [`choose`] finds them. `on_event` sees the search's progress.
///
/// # Errors
/// A wrong result during the search, an unwritable log or cache, no successful configuration.
pub fn calibrate(
    opts: &CalibrateOptions,
    cache: &TuningCache,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Calibration> {
    calibrate_with(opts, cache, &mut SweepEvaluator::new(), on_event)
}

/// [`calibrate`] with another evaluator (a recorded or simulated machine).
///
/// # Errors
/// As [`calibrate`].
pub fn calibrate_with(
    opts: &CalibrateOptions,
    cache: &TuningCache,
    eval: &mut dyn Evaluate,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Calibration> {
    let mut log = match &opts.log {
        Some(p) => SearchLog::open(p)?,
        None => SearchLog::in_memory(),
    };
    let t = Instant::now();
    let summary = search(&opts.instances, eval, &mut log, &opts.search, on_event)?;
    let search_time = t.elapsed();
    let t = Instant::now();
    let fp = fingerprint_here();
    let mut rows_per = Vec::new();
    let mut stored = Vec::new();
    for rank in [Rank::Two, Rank::Three] {
        let recs: Vec<_> = log
            .records()
            .iter()
            .filter(|r| opts.instances.contains(&r.instance) && rank_of(r.instance.app) == rank)
            .cloned()
            .collect();
        if recs.is_empty() {
            continue;
        }
        let rows = training_set(&recs, opts.top_k, opts.within);
        let predictor = Predictor::fit(&rows, opts.learner, &opts.search.space.tiles)?;
        let path = store(cache, &model_key(rank, &fp), &rows, opts.learner, &opts.search.space.tiles)?;
        models()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((cache.dir().to_owned(), rank), Some(Arc::new(predictor)));
        rows_per.push((rank, rows.len()));
        stored.push(path);
    }
    if stored.is_empty() {
        return Err(WavefrontError::Tune("no training instances were searched".into()));
    }
    Ok(Calibration {
        summary,
        search_time,
        train_time: t.elapsed(),
        rows: rows_per,
        stored,
        records: log.records().to_vec(),
    })
}

fn rank_of(app: App) -> Rank {
    if app == App::Synthetic3 { Rank::Three } else { Rank::Two }
}

fn distinct(vals: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in vals {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

const PARAMS: [&str; 8] = ["dim", "tsize", "dsize", "parallel", "tile", "band", "gpu_tile", "halo"];

fn row_values(r: &TrainRow) -> [Value; 8] {
    let c = &r.candidate;
    [
        Value::Int(r.features.dim as i64),
        Value::Float(r.features.tsize),
        Value::Int(r.features.dsize as i64),
        Value::Bool(c.parallel),
        Value::Int(c.tile as i64),
        Value::Int(c.band as i64),
        Value::Int(c.gpu_tile as i64),
        Value::Int(c.halo as i64),
    ]
}

/// Writes the training rows as a Kernel Tuner file (one entry per row, `time` its time).
fn store(
    cache: &TuningCache,
    key: &CacheKey,
    rows: &[TrainRow],
    learner: Learner,
    tiles: &[usize],
) -> Result<PathBuf> {
    let path = cache.path_for(key);
    let values: Vec<[Value; 8]> = rows.iter().map(row_values).collect();
    let params = PARAMS
        .iter()
        .enumerate()
        .map(|(k, name)| (name.to_string(), distinct(values.iter().map(|v| v[k].clone()))))
        .collect();
    let entries = rows
        .iter()
        .zip(&values)
        .map(|(r, v)| {
            let cfg = TuneConfig::new(PARAMS.iter().map(|p| p.to_string()).zip(v.iter().cloned()).collect());
            KtEntry::measured(&cfg, &[r.time_ms], None)
        })
        .collect();
    let mut extra = serde_json::Map::new();
    extra.insert("objective".into(), json!("time"));
    extra.insert(
        "hetkit".into(),
        json!({"kernel": key.kernel, "element_type": key.element_type, "bucket": key.bucket, "fingerprint": key.fingerprint.as_str()}),
    );
    extra.insert(
        "hetkit_wavefront".into(),
        json!({"learner": learner.name(), "tiles": tiles, "unit_ns": synthetic_unit_ns(), "rows": rows.len()}),
    );
    let file = KtFile {
        device_name: key.fingerprint.as_str().to_owned(),
        kernel_name: key.kernel.clone(),
        problem_size: json!(key.bucket),
        params,
        entries,
        extra,
    };
    file.write(&path).map_err(|e| WavefrontError::TuneFile { path: path.clone(), reason: e.to_string() })?;
    Ok(path)
}

/// The model stored in `cache` for this machine and `rank`, refitted; `None` when there is none
/// (a corrupt or foreign file is reported as an error).
///
/// # Errors
/// A stored file that cannot be read or does not hold training rows.
pub fn load(cache: &TuningCache, rank: Rank) -> Result<Option<Predictor>> {
    let key = model_key(rank, &fingerprint_here());
    let path = cache.path_for(&key);
    if !path.exists() {
        return Ok(None);
    }
    let bad = |reason: String| WavefrontError::TuneFile { path: path.clone(), reason };
    let file = KtFile::read(&path).map_err(|e| bad(e.to_string()))?;
    if file.device_name != key.fingerprint.as_str() || file.keys() != PARAMS {
        return Err(bad("not a wavefront model of this machine".into()));
    }
    let meta =
        file.extra.get("hetkit_wavefront").ok_or_else(|| bad("no hetkit_wavefront metadata".into()))?;
    let learner = Learner::by_name(meta.get("learner").and_then(|l| l.as_str()).unwrap_or(""))?;
    let tiles: Vec<usize> = meta
        .get("tiles")
        .and_then(|t| t.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_u64()).map(|v| v as usize).collect())
        .unwrap_or_else(|| CPU_TILES.to_vec());
    let rows = file
        .entries
        .iter()
        .map(|e| {
            row_of(&e.values, e.time).ok_or_else(|| bad(format!("entry {} is not a training row", e.key())))
        })
        .collect::<Result<Vec<_>>>()?;
    Predictor::fit(&rows, learner, &tiles).map(Some)
}

fn row_of(v: &[Value], time: Option<f64>) -> Option<TrainRow> {
    let int = |k: usize| v.get(k)?.as_i64();
    let tsize = match v.get(1)? {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        _ => return None,
    };
    let parallel = match v.get(3)? {
        Value::Bool(b) => *b,
        _ => return None,
    };
    Some(TrainRow {
        features: Features::new(usize::try_from(int(0)?).ok()?, tsize, usize::try_from(int(2)?).ok()?),
        candidate: Candidate {
            parallel,
            tile: usize::try_from(int(4)?).ok()?.max(1),
            band: isize::try_from(int(5)?).ok()?,
            gpu_tile: usize::try_from(int(6)?).ok()?,
            halo: isize::try_from(int(7)?).ok()?,
        },
        time_ms: time.unwrap_or(f64::NAN),
    })
}

type Models = Mutex<HashMap<(PathBuf, Rank), Option<Arc<Predictor>>>>;

fn models() -> &'static Models {
    static MODELS: OnceLock<Models> = OnceLock::new();
    MODELS.get_or_init(Default::default)
}

/// The model of `rank` in `cache`, loaded once per process (a file that cannot be used counts
/// as none, with a warning).
pub fn model(cache: &TuningCache, rank: Rank) -> Option<Arc<Predictor>> {
    let key = (cache.dir().to_owned(), rank);
    let mut m = models().lock().unwrap_or_else(|e| e.into_inner());
    m.entry(key)
        .or_insert_with(|| match load(cache, rank) {
            Ok(p) => p.map(Arc::new),
            Err(e) => {
                tracing::warn!("wavefront auto-tuning model unusable: {e}");
                None
            }
        })
        .clone()
}

/// How [`choose`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Predicted by the stored model.
    Model,
    /// Found by the short search (no model stored).
    ShortSearch,
}

/// The configuration for a problem with `features`: the stored model's prediction, or the best
/// of a short search on a small synthetic stand-in (memoised per process).
pub fn choose(features: &Features, rank: Rank) -> (Candidate, Source) {
    let cache = TuningCache::open_default().ok();
    choose_in(cache.as_ref(), features, rank)
}

/// [`choose`] with the models of `cache` (`None`: no model, short search).
pub fn choose_in(cache: Option<&TuningCache>, features: &Features, rank: Rank) -> (Candidate, Source) {
    if let Some(p) = cache.and_then(|c| model(c, rank)) {
        return (p.predict(features, gpus_here()), Source::Model);
    }
    (short_search(features, rank), Source::ShortSearch)
}

/// tsize of one hash round of the integer kernel, about (tsize 0.7 with one round and 2.3 with
/// four on the 2-core VM).
const INT_ROUND_TSIZE: f64 = 0.5;

/// The stand-in instance: the synthetic kernel at a side of at most 192 (2D) or 24 (3D), with
/// the grain that gives `features.tsize` (bounded so one sweep stays around a few milliseconds);
/// the integer kernel for payload-free 2D cells, as in training.
fn stand_in(f: &Features, rank: Rank) -> Instance {
    if rank == Rank::Two && f.dsize == 0 {
        let rounds = (f.tsize / INT_ROUND_TSIZE).round().clamp(0.0, 4096.0) as u32;
        let side = f.dim.clamp(1, 192);
        let rounds = rounds.min((4e6 / (side * side) as f64).max(1.0) as u32);
        return Instance::synthetic_int(side, rounds);
    }
    let dsize = f.dsize.min(5);
    let grain = (f.tsize / dsize.max(1) as f64).round().clamp(0.0, 4096.0) as u32;
    let (app, side) = match rank {
        Rank::Two => (App::Synthetic, f.dim.clamp(1, 192)),
        Rank::Three => (App::Synthetic3, f.dim.clamp(1, 24)),
    };
    let cells = side.pow(if rank == Rank::Two { 2 } else { 3 }) as f64;
    let grain = grain.min((4e6 / (cells * dsize.max(1) as f64)).max(1.0) as u32);
    Instance { app, dim: side, grain, dsize: if rank == Rank::Two { dsize } else { 0 } }
}

fn short_search(f: &Features, rank: Rank) -> Candidate {
    type Memo = Mutex<HashMap<(Rank, Instance), Candidate>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let inst = stand_in(f, rank);
    if let Some(c) =
        MEMO.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner()).get(&(rank, inst))
    {
        return *c;
    }
    let opts = SearchOptions {
        reps: 1,
        cap: Duration::from_millis(200),
        space: SpaceOptions { tiles: vec![4, 16, 64], gpus: 0, ..SpaceOptions::default() },
        refine: None,
        ..SearchOptions::default()
    };
    let mut log = SearchLog::in_memory();
    let found =
        search(&[inst], &mut SweepEvaluator::new(), &mut log, &opts, &mut |_| {}).ok().and_then(|_| {
            log.records()
                .iter()
                .filter_map(|r| Some((r.time_ms?, r.candidate)))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|b| b.1)
        });
    // Scale the stand-in's tile to the real grid (same tiles per side), within the legal set.
    let best = found.map_or(Candidate::cpu(true, 16), |c| {
        let tile = if f.dim > inst.dim { c.tile * f.dim / inst.dim.max(1) } else { c.tile };
        Candidate::cpu(c.parallel, crate::tune::space::snap_tile(tile as f64, &CPU_TILES).min(f.dim.max(1)))
    });
    MEMO.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner()).insert((rank, inst), best);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulated machine whose best tile is dim / 8 and which prefers the parallel executor
    /// from side 128 on.
    struct Sim;
    impl Evaluate for Sim {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Ok(Features::new(i.dim, f64::from(i.grain) * i.dsize.max(1) as f64, i.dsize))
        }
        fn run(&mut self, i: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            let ideal = (i.dim / 8).max(1) as f64;
            let par = (i.dim >= 128) == c.parallel;
            let ms = 1.0 + (c.tile as f64 / ideal).log2().abs() + if par { 0.0 } else { 5.0 };
            Ok(Ok(Duration::from_secs_f64(ms / 1e3)))
        }
    }

    #[test]
    fn calibrate_stores_a_model_that_auto_uses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        let instances: Vec<Instance> = [32, 64, 128, 256, 512]
            .iter()
            .flat_map(|&d| [1, 8].map(|g| Instance::synthetic(d, g, 1)))
            .collect();
        let opts = CalibrateOptions {
            instances,
            search: SearchOptions { reps: 1, space: SpaceOptions::default(), ..SearchOptions::default() },
            log: Some(dir.path().join("log.jsonl")),
            ..CalibrateOptions::default()
        };
        let cal = calibrate_with(&opts, &cache, &mut Sim, &mut |_| {}).unwrap();
        // The best of each executor only: the next tile side is at least 30 % slower.
        assert_eq!(cal.rows, vec![(Rank::Two, 20)]);
        assert!(cal.stored[0].exists());
        // The stored file round-trips into the same predictions, and `hetkit info` can read it.
        let loaded = load(&cache, Rank::Two).unwrap().expect("stored");
        assert!(cache.files().iter().all(|f| f.is_ok()));
        for dim in [48usize, 80, 192, 512] {
            let f = Features::new(dim, 4.0, 1);
            let got = loaded.predict(&f, 0);
            let ideal = dim as f64 / 8.0;
            assert!(got.tile as f64 >= ideal / 2.0 && got.tile as f64 <= ideal * 2.0, "{dim}: {got:?}");
            assert_eq!(got.parallel, dim >= 128, "{dim}");
            assert_eq!(choose_in(Some(&cache), &f, Rank::Two), (got, Source::Model));
        }
        assert!(load(&cache, Rank::Three).unwrap().is_none());
        // A corrupt model file is an error for `load`, and no model (short search) for `choose`.
        std::fs::write(&cal.stored[0], "{").unwrap();
        assert!(load(&cache, Rank::Two).is_err());
        let other = TuningCache::at(dir.path().join("empty"));
        assert_eq!(choose_in(Some(&other), &Features::new(40, 2.0, 1), Rank::Two).1, Source::ShortSearch);
    }

    #[test]
    fn stand_in_instances_stay_small() {
        let i = stand_in(&Features::new(5000, 30.0, 3), Rank::Two);
        assert_eq!((i.app, i.dim, i.grain, i.dsize), (App::Synthetic, 192, 10, 3));
        let big = stand_in(&Features::new(5000, 1e6, 5), Rank::Two);
        assert!(big.grain as f64 * 192.0 * 192.0 * 5.0 <= 4.1e6);
        let int = stand_in(&Features::new(700, 0.33, 0), Rank::Two);
        assert_eq!((int.app, int.dim, int.grain, int.dsize), (App::SyntheticInt, 192, 1, 0));
        assert_eq!(stand_in(&Features::new(9, 1e9, 0), Rank::Two).grain, 4096);
        let three = stand_in(&Features::new(100, 0.2, 9), Rank::Three);
        assert_eq!((three.app, three.dim, three.dsize), (App::Synthetic3, 24, 0));
    }

    #[test]
    fn short_search_picks_a_legal_cpu_configuration() {
        for (f, rank) in [
            (Features::new(300, 2.0, 1), Rank::Two),
            (Features::new(3, 0.5, 0), Rank::Two),
            (Features::new(20, 5.0, 0), Rank::Three),
        ] {
            let c = short_search(&f, rank);
            assert!(
                c.band < 0 && c.tile >= 1 && c.tile <= f.dim.max(1) && CPU_TILES.contains(&c.tile),
                "{c:?}"
            );
            assert_eq!(short_search(&f, rank), c, "memoised");
        }
    }
}
