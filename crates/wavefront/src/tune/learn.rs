//! Training sets and the chained predictor (digest §3.1, §3.3): the best configurations of
//! each sampled instance, then one model per decision, each fed the ones before it, in the
//! thesis's chapter 5 order: executor (sequential tiles or parallel) -> GPU or not -> CPU tile
//! (from the inputs, per executor) -> band (inputs and GPU tile) -> halo (inputs, band and CPU
//! tile).
//!
//! The two yes/no decisions are regressions of how much faster one side's best configuration
//! was (`log2` of the time ratio, one row per training instance), thresholded at 0: the
//! learner sees how clear-cut each training decision was, not only which side won, and a
//! decision near the break-even point costs little either way. The CPU tile is regressed as
//! tiles per side, `log2(dim / tile)` (the wavefront's parallelism and task count, which carry
//! over between grid sides where a tile side does not), and snapped to the nearest legal side
//! in `log2` space (tiles are powers of two apart); band and halo are rounded and clamped
//! (§6.4).
//!
//! Every model uses one [`Learner`]: the in-house M5P-style [`ModelTree`] (default),
//! smartcore's CART regressor, linear regression (the thesis's chapter 4) or epsilon-SVR (the
//! thesis's SMOreg). The ranking learners ([`crate::tune::neighbours`]) replace the executor
//! and CPU tile models by a ranking of whole configurations on the nearest training instances
//! and keep the model tree for the rest of the chain.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::linear::linear_regression::{LinearRegression, LinearRegressionParameters};
use smartcore::svm::Kernels;
use smartcore::svm::svr::{SVR, SVRParameters};
use smartcore::tree::decision_tree_regressor::{DecisionTreeRegressor, DecisionTreeRegressorParameters};

use crate::error::{Result, WavefrontError};
use crate::tune::driver::{Instance, Record};
use crate::tune::features::Features;
use crate::tune::model_tree::{LinearModel, ModelTree, TreeParams};
use crate::tune::neighbours::{Aggregate, Neighbours};
use crate::tune::space::{Candidate, snap_band, snap_halo, snap_tile, snap_tile_log2};

/// One training example: an instance's features and one of its best configurations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrainRow {
    /// The instance's features.
    pub features: Features,
    /// A configuration among its best.
    pub candidate: Candidate,
    /// Its time in milliseconds.
    pub time_ms: f64,
}

/// The three executors a configuration can run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Tiled,
    Parallel,
    Gpu,
}

pub(crate) fn kind(c: &Candidate) -> Kind {
    match (c.band >= 0, c.parallel) {
        (true, _) => Kind::Gpu,
        (false, true) => Kind::Parallel,
        (false, false) => Kind::Tiled,
    }
}

/// Training rows slower than this factor of their executor's best on the instance are left out
/// ([`training_set`]).
pub const BEST_WITHIN: f64 = 1.05;

/// The `k` fastest timed configurations of every instance in `records` on each executor
/// (sequential tiles, parallel CPU, GPU band), among those within a factor `within` of that
/// executor's best ([`BEST_WITHIN`]): the thesis's best five per instance, taken per executor
/// because the executor is decided first and the tile model of each executor needs that
/// executor's best tiles on every instance, also where the other executor won.
///
/// `within` keeps "best" meaning best where an instance has few legal tiles: a 3D box of side
/// 8 has four tile sides per executor, so its best five are all of them, and a tile model
/// fitted on them predicts the middle of the range whatever the timings say (at side 12,
/// grain 24, sequential tiles of 2 take 76 % of the time of tiles of 4 on the 2-core VM, and
/// the model fitted on every best five predicted 4). Where the optimum is flat, the five
/// rows stay. Capped and failed configurations are left out; ties are broken by configuration
/// so the set is deterministic; instances in order, then executors, then time.
pub fn training_set(records: &[Record], k: usize, within: f64) -> Vec<TrainRow> {
    let mut groups: BTreeMap<(Instance, Kind), Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.time_ms.is_some()) {
        groups.entry((r.instance, kind(&r.candidate))).or_default().push(r);
    }
    let mut out = Vec::new();
    for rs in groups.values_mut() {
        rs.sort_by(|a, b| {
            a.time_ms
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.time_ms.unwrap_or(f64::INFINITY))
                .then(a.candidate.cmp(&b.candidate))
        });
        let best = rs.first().and_then(|r| r.time_ms).unwrap_or(f64::INFINITY);
        // Divided, not multiplied: an infinite factor keeps every row, also after a 0 ms best.
        let good = |r: &&&Record| r.time_ms.is_some_and(|t| t / within <= best);
        out.extend(rs.iter().take(k).filter(good).map(|r| TrainRow {
            features: r.features,
            candidate: r.candidate,
            time_ms: r.time_ms.unwrap_or(f64::NAN),
        }));
    }
    out
}

/// The regressor used for every model of the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Learner {
    /// M5P-style model tree (in-house; the thesis's chapters 5 and 6).
    ModelTree,
    /// smartcore's CART regression tree (piecewise constant).
    Tree,
    /// smartcore's linear regression (the thesis's chapter 4).
    Linear,
    /// smartcore's epsilon-SVR with an RBF kernel on inputs scaled to [0, 1] (the thesis's
    /// chapter 4 SMOreg, which Weka also runs on normalised inputs).
    Svm,
    /// No per-parameter regression for the CPU configuration: every legal (executor, tile) is
    /// scored by its % of the best on the nearest training instances and the one with the
    /// best worst score is taken ([`crate::tune::neighbours`]); the GPU decision, band and
    /// halo come from the model-tree chain.
    NeighboursWorst,
    /// As [`Learner::NeighboursWorst`], ranking by the distance-weighted mean score.
    NeighboursMean,
}

impl Learner {
    /// Every learner, for comparisons.
    pub const ALL: [Learner; 6] = [
        Learner::ModelTree,
        Learner::Tree,
        Learner::Linear,
        Learner::Svm,
        Learner::NeighboursWorst,
        Learner::NeighboursMean,
    ];

    /// The name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Learner::ModelTree => "model-tree",
            Learner::Tree => "tree",
            Learner::Linear => "linear",
            Learner::Svm => "svm",
            Learner::NeighboursWorst => "neighbours-worst",
            Learner::NeighboursMean => "neighbours-mean",
        }
    }

    /// The regressor behind the chain's models: the ranking learners keep the model tree for
    /// the GPU decision, band and halo.
    fn regressor(self) -> Learner {
        match self {
            Learner::NeighboursWorst | Learner::NeighboursMean => Learner::ModelTree,
            l => l,
        }
    }

    /// The ranking aggregate, for the ranking learners.
    fn aggregate(self) -> Option<Aggregate> {
        match self {
            Learner::NeighboursWorst => Some(Aggregate::Worst),
            Learner::NeighboursMean => Some(Aggregate::Mean),
            _ => None,
        }
    }

    /// The learner called `name`.
    ///
    /// # Errors
    /// An unknown name.
    pub fn by_name(name: &str) -> Result<Self> {
        Learner::ALL.into_iter().find(|l| l.name() == name).ok_or_else(|| {
            WavefrontError::Tune(format!(
                "unknown learner `{name}` (model-tree, tree, linear, svm, neighbours-worst, neighbours-mean)"
            ))
        })
    }
}

type Matrix = DenseMatrix<f64>;

fn matrix(xs: &[Vec<f64>]) -> Result<Matrix> {
    DenseMatrix::from_2d_vec(&xs.to_vec()).map_err(|e| WavefrontError::Tune(format!("training matrix: {e}")))
}

/// An epsilon-SVR over owned, scaled training rows.
///
/// smartcore's `SVR` borrows its parameters (and ties its lifetime to its training matrix)
/// for as long as it lives, so it cannot be stored next to the rows it was fitted on; this
/// model keeps the rows and fits the SVR when a prediction is asked for. Fitting is
/// deterministic (SMO from zero multipliers), so every fit gives the same function.
#[derive(Debug, Clone)]
struct SvrModel {
    xs: Vec<Vec<f64>>,
    ys: Vec<f64>,
    lo: Vec<f64>,
    span: Vec<f64>,
}

/// RBF width on inputs scaled to [0, 1], the error-free band and the penalty: a smooth
/// surface that follows training targets to within a tenth (of a `log2` tile or time ratio).
const SVR_GAMMA: f64 = 2.0;
const SVR_EPS: f64 = 0.1;
const SVR_C: f64 = 10.0;

impl SvrModel {
    fn fit(xs: &[Vec<f64>], ys: &[f64]) -> Result<Self> {
        let p = xs.first().map_or(0, Vec::len);
        let lo: Vec<f64> = (0..p).map(|k| xs.iter().map(|x| x[k]).fold(f64::INFINITY, f64::min)).collect();
        let hi: Vec<f64> =
            (0..p).map(|k| xs.iter().map(|x| x[k]).fold(f64::NEG_INFINITY, f64::max)).collect();
        let span: Vec<f64> = lo.iter().zip(&hi).map(|(l, h)| if h > l { h - l } else { 1.0 }).collect();
        let mut m = SvrModel { xs: Vec::new(), ys: ys.to_vec(), lo, span };
        m.xs = xs.iter().map(|x| m.scale(x)).collect();
        // Fit once now so bad data is reported by `fit`, not silently at prediction time.
        m.eval(&[m.xs[0].clone()])?;
        Ok(m)
    }

    fn scale(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.lo).zip(&self.span).map(|((v, l), s)| (v - l) / s).collect()
    }

    fn params() -> SVRParameters<f64> {
        SVRParameters::default()
            .with_kernel(Kernels::rbf().with_gamma(SVR_GAMMA))
            .with_eps(SVR_EPS)
            .with_c(SVR_C)
    }

    /// The fitted SVR's values at (already scaled) `queries`.
    fn eval(&self, queries: &[Vec<f64>]) -> Result<Vec<f64>> {
        let err = |e: smartcore::error::Failed| WavefrontError::Tune(format!("SVR: {e}"));
        let (x, q, params) = (matrix(&self.xs)?, matrix(queries)?, Self::params());
        let svr = SVR::fit(&x, &self.ys, &params).map_err(err)?;
        svr.predict(&q).map_err(err)
    }

    fn predict(&self, x: &[f64]) -> f64 {
        self.eval(&[self.scale(x)]).ok().and_then(|v| v.first().copied()).unwrap_or(f64::NAN)
    }
}

/// A fitted real-valued model.
#[derive(Debug)]
enum Regressor {
    Constant(f64),
    ModelTree(ModelTree),
    Tree(DecisionTreeRegressor<f64, f64, Matrix, Vec<f64>>),
    Linear(LinearRegression<f64, f64, Matrix, Vec<f64>>),
    /// In-house least squares, where smartcore's solver rejects the data.
    LeastSquares(LinearModel),
    Svm(SvrModel),
}

impl Regressor {
    /// A model of `ys` from `xs`; `empty` when there is no row at all (a decision never
    /// observed in training).
    fn fit(learner: Learner, xs: &[Vec<f64>], ys: &[f64], empty: f64) -> Result<Self> {
        let learner = learner.regressor();
        let Some(&first) = ys.first() else { return Ok(Regressor::Constant(empty)) };
        if ys.iter().all(|&y| y == first) {
            // The thesis's SVM failed on constant targets (§3.2); a constant is the answer.
            return Ok(Regressor::Constant(first));
        }
        Ok(match learner {
            Learner::ModelTree | Learner::NeighboursWorst | Learner::NeighboursMean => {
                Regressor::ModelTree(ModelTree::fit(xs, ys, &TreeParams::default()))
            }
            Learner::Tree => {
                let p = DecisionTreeRegressorParameters::default().with_min_samples_leaf(2);
                Regressor::Tree(
                    DecisionTreeRegressor::fit(&matrix(xs)?, &ys.to_vec(), p)
                        .map_err(|e| WavefrontError::Tune(format!("regression tree: {e}")))?,
                )
            }
            Learner::Linear => {
                match LinearRegression::fit(&matrix(xs)?, &ys.to_vec(), LinearRegressionParameters::default())
                {
                    Ok(m) => Regressor::Linear(m),
                    Err(e) => {
                        tracing::debug!(
                            "smartcore linear regression failed ({e}); least squares with a ridge instead"
                        );
                        Regressor::LeastSquares(LinearModel::fit(xs, ys))
                    }
                }
            }
            Learner::Svm => Regressor::Svm(SvrModel::fit(xs, ys)?),
        })
    }

    fn predict(&self, x: &[f64]) -> f64 {
        let one = || matrix(&[x.to_vec()]);
        match self {
            Regressor::Constant(c) => *c,
            Regressor::ModelTree(t) => t.predict(x),
            Regressor::LeastSquares(m) => m.predict(x),
            Regressor::Tree(t) => one().ok().and_then(|m| t.predict(&m).ok()).map_or(f64::NAN, |v| v[0]),
            Regressor::Linear(l) => one().ok().and_then(|m| l.predict(&m).ok()).map_or(f64::NAN, |v| v[0]),
            Regressor::Svm(s) => s.predict(x),
        }
    }
}

/// Per training instance (rows with the same features), the best time on each executor.
fn best_per_instance(rows: &[TrainRow]) -> Vec<(Features, BTreeMap<Kind, f64>)> {
    let mut out: Vec<(Features, BTreeMap<Kind, f64>)> = Vec::new();
    for r in rows.iter().filter(|r| r.time_ms.is_finite() && r.time_ms > 0.0) {
        let i = match out.iter().position(|(f, _)| *f == r.features) {
            Some(i) => i,
            None => {
                out.push((r.features, BTreeMap::new()));
                out.len() - 1
            }
        };
        let t = out[i].1.entry(kind(&r.candidate)).or_insert(f64::INFINITY);
        *t = t.min(r.time_ms);
    }
    out
}

/// `log2(slow side's best / fast side's best)` per instance where both sides were timed:
/// positive where `yes` won.
fn decision_rows(
    per: &[(Features, BTreeMap<Kind, f64>)],
    yes: &[Kind],
    no: &[Kind],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let best = |m: &BTreeMap<Kind, f64>, ks: &[Kind]| {
        ks.iter().filter_map(|k| m.get(k)).copied().fold(f64::INFINITY, f64::min)
    };
    per.iter()
        .filter_map(|(f, m)| {
            let (y, n) = (best(m, yes), best(m, no));
            (y.is_finite() && n.is_finite()).then(|| (f.x(), (n / y).log2()))
        })
        .unzip()
}

/// The chained predictor of a configuration from features.
#[derive(Debug)]
pub struct Predictor {
    learner: Learner,
    tiles: Vec<usize>,
    /// `log2(best tiled / best parallel)`: parallel when positive.
    parallel: Regressor,
    /// `log2(best CPU-only / best GPU)`: a GPU band when positive.
    use_gpu: Regressor,
    /// `log2(dim / tile)`, one model per executor (sequential tiles, parallel, hybrid).
    tile: [Regressor; 3],
    /// From the features and the GPU tile, on GPU rows only.
    band: Regressor,
    /// From the features, band and `log2` CPU tile, on GPU rows only.
    halo: Regressor,
    /// The ranking learners' CPU configuration (replaces the executor and CPU tile models).
    neighbours: Option<Neighbours>,
}

impl Predictor {
    /// Fits every model of the chain on `rows` (as [`training_set`] builds them); `tiles` are
    /// the legal CPU tile sides predictions snap to.
    ///
    /// # Errors
    /// No rows, no legal tiles, or a learner that rejects the data.
    pub fn fit(rows: &[TrainRow], learner: Learner, tiles: &[usize]) -> Result<Self> {
        if rows.is_empty() {
            return Err(WavefrontError::Tune("the training set is empty".into()));
        }
        if tiles.is_empty() {
            return Err(WavefrontError::Tune("no legal tile sides".into()));
        }
        // A canonical order: the fitted models must not depend on how the rows were stored.
        let mut rows = rows.to_vec();
        rows.sort_by(|a, b| {
            let k = |r: &TrainRow| (r.features.dim, r.features.dsize, r.candidate);
            k(a).cmp(&k(b))
                .then(a.features.tsize.total_cmp(&b.features.tsize))
                .then(a.time_ms.total_cmp(&b.time_ms))
        });
        let per = best_per_instance(&rows);
        let (px, py) = decision_rows(&per, &[Kind::Parallel], &[Kind::Tiled]);
        let (gx, gy) = decision_rows(&per, &[Kind::Gpu], &[Kind::Tiled, Kind::Parallel]);
        let lt = |r: &TrainRow| (r.candidate.tile.max(1) as f64).log2();
        let tiles_per_side = |r: &TrainRow| (r.features.dim.max(1) as f64).log2() - lt(r);
        let fit_on = |keep: &dyn Fn(&TrainRow) -> bool,
                      extra: &dyn Fn(&TrainRow) -> Vec<f64>,
                      y: &dyn Fn(&TrainRow) -> f64,
                      empty: f64| {
            let (xs, ys): (Vec<Vec<f64>>, Vec<f64>) =
                rows.iter().filter(|r| keep(r)).map(|r| ([r.features.x(), extra(r)].concat(), y(r))).unzip();
            Regressor::fit(learner, &xs, &ys, empty)
        };
        let none = |_: &TrainRow| Vec::new();
        let tile_of = |k: Kind| fit_on(&|r| kind(&r.candidate) == k, &none, &tiles_per_side, 0.0);
        let gpu = |r: &TrainRow| r.candidate.band >= 0;
        Ok(Predictor {
            learner,
            tiles: tiles.to_vec(),
            // Never observed: stay on the side the executors default to (parallel, no GPU).
            parallel: if py.is_empty() {
                Regressor::Constant(1.0)
            } else {
                Regressor::fit(learner, &px, &py, 1.0)?
            },
            use_gpu: if gy.is_empty() {
                Regressor::Constant(-1.0)
            } else {
                Regressor::fit(learner, &gx, &gy, -1.0)?
            },
            tile: [tile_of(Kind::Tiled)?, tile_of(Kind::Parallel)?, tile_of(Kind::Gpu)?],
            band: fit_on(&gpu, &|r| vec![r.candidate.gpu_tile as f64], &|r| r.candidate.band as f64, -1.0)?,
            halo: fit_on(
                &gpu,
                &|r| vec![r.candidate.band as f64, lt(r)],
                &|r| r.candidate.halo as f64,
                -1.0,
            )?,
            neighbours: learner.aggregate().map(|a| Neighbours::fit(&rows, tiles, a)),
        })
    }

    /// The learner of the models.
    pub fn learner(&self) -> Learner {
        self.learner
    }

    /// The predicted configuration, snapped to legal values. `gpus` is how many GPUs this machine
    /// has: without one the GPU models are not consulted; with one the halo stays -1.
    pub fn predict(&self, f: &Features, gpus: usize) -> Candidate {
        let x = f.x();
        let gpu = gpus >= 1 && self.use_gpu.predict(&x) > 0.0;
        if let Some(c) = self.neighbours.as_ref().filter(|_| !gpu).and_then(|n| n.predict(f)) {
            return c;
        }
        let parallel = gpu || self.parallel.predict(&x) > 0.0;
        let k = match (gpu, parallel) {
            (true, _) => 2,
            (false, true) => 1,
            (false, false) => 0,
        };
        let log2_tile = (f.dim.max(1) as f64).log2() - self.tile[k].predict(&x);
        let tile = snap_tile_log2(log2_tile, &self.tiles, f.dim);
        if !gpu {
            return Candidate::cpu(parallel, tile);
        }
        // useGPU says yes: at least the main diagonal (digest §2.1); one thread per cell.
        let gpu_tile = 1;
        let band = snap_band(self.band.predict(&[x.clone(), vec![gpu_tile as f64]].concat()), f.dim).max(0);
        let halo = if gpus >= 2 {
            let lt = (tile as f64).log2();
            snap_halo(self.halo.predict(&[x, vec![band as f64, lt]].concat()), f.dim, band)
        } else {
            -1
        };
        Candidate { parallel: true, tile, band, gpu_tile, halo }
    }
}

/// The thesis's chapter 4 pair of linear models, each using the other's output (Fig. 4.6):
/// `tile(dim, band, tsize)` and `band(dim, tile, tsize)`. Resolved by the digest's fixed point:
/// start from tile 1, alternate up to 5 times, rounding and snapping each value.
pub fn chapter4_fixed_point(
    tile: &LinearModel,
    band: &LinearModel,
    dim: usize,
    tsize: f64,
    tiles: &[usize],
) -> (usize, isize) {
    let mut t = 1usize;
    let mut b = snap_band(band.predict(&[dim as f64, t as f64, tsize]), dim);
    for _ in 0..5 {
        let nt = snap_tile(tile.predict(&[dim as f64, b as f64, tsize]), tiles);
        let nb = snap_band(band.predict(&[dim as f64, nt as f64, tsize]), dim);
        if (nt, nb) == (t, b) {
            break;
        }
        (t, b) = (nt, nb);
    }
    (t, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::space::{CPU_TILES, THESIS_CPU_TILES};

    /// The Fig. 4.6 linear-regression models, coefficients verbatim.
    fn fig46() -> (LinearModel, LinearModel) {
        (
            LinearModel::new(vec![0.0005, 0.0005, -0.555], 4.7045),
            LinearModel::new(vec![0.7983, 32.7188, 334.0289], -1236.2804),
        )
    }

    /// Digest §6.5: BAND(1000, 4, 1) = 26.9237 -> 27; TILE(1000, 27, 1) = 4.663 -> 5 -> 4.
    #[test]
    fn worked_predictor_values_come_out_exactly() {
        let (tile, band) = fig46();
        let b = band.predict(&[1000.0, 4.0, 1.0]);
        assert!((b - 26.9237).abs() < 1e-9, "{b}");
        assert_eq!(snap_band(b, 1000), 27);
        let t = tile.predict(&[1000.0, 27.0, 1.0]);
        assert!((t - 4.663).abs() < 1e-9, "{t}");
        assert_eq!(t.round(), 5.0);
        assert_eq!(snap_tile(t, &THESIS_CPU_TILES), 4);
        // The fixed point from tile 1: band -71 -> -1, tile 4.649 -> 4, band 26.92 -> 27, tile 4.663 -> 4.
        assert_eq!(chapter4_fixed_point(&tile, &band, 1000, 1.0, &THESIS_CPU_TILES), (4, 27));
        // Table 4.2's summaries (§6.5): best universal mean and class-specific LR mean.
        let universal: f64 = (87.18 + 57.61 + 48.23) / 3.0;
        let class_lr: f64 = (94.5 + 89.5 + 91.7) / 3.0;
        assert_eq!(((universal * 100.0).round() / 100.0, (class_lr * 10.0).round() / 10.0), (64.34, 91.9));
    }

    fn record(dim: usize, grain: u32, c: Candidate, ms: Option<f64>) -> Record {
        Record {
            instance: Instance::synthetic(dim, grain, 1),
            features: Features::new(dim, f64::from(grain), 1),
            candidate: c,
            times_ms: ms.into_iter().collect(),
            time_ms: ms,
            failure: None,
            refined: false,
        }
    }

    #[test]
    fn training_set_is_the_top_five_per_instance_and_executor() {
        let mut recs = Vec::new();
        for (k, tile) in CPU_TILES.iter().enumerate() {
            recs.push(record(100, 1, Candidate::cpu(true, *tile), Some(10.0 - k as f64)));
            recs.push(record(100, 1, Candidate::cpu(false, *tile), Some(10.0 - k as f64))); // ties
            recs.push(record(
                50,
                4,
                Candidate::cpu(false, *tile),
                if k == 9 { None } else { Some(k as f64) },
            ));
        }
        let rows = training_set(&recs, 5, f64::INFINITY);
        let got: Vec<(usize, bool, usize)> =
            rows.iter().map(|r| (r.features.dim, r.candidate.parallel, r.candidate.tile)).collect();
        let mut want = vec![(50, false, 1), (50, false, 2), (50, false, 4), (50, false, 8), (50, false, 10)];
        for parallel in [false, true] {
            want.extend([256, 128, 64, 32, 16].map(|t| (100, parallel, t)));
        }
        assert_eq!(got, want, "instances in order, then executors, fastest first");
        assert!(training_set(&recs, 0, f64::INFINITY).is_empty());
        assert_eq!(training_set(&recs[..1], 5, f64::INFINITY).len(), 1);
        // Within 5 % of each executor's best: at side 100 the times are 1, 2, 3 ... ms, so
        // only the best is kept; at side 50 the fastest is 0 ms (nothing else is within 5 %).
        let close = training_set(&recs, 5, 1.05);
        let got: Vec<(usize, bool, usize)> =
            close.iter().map(|r| (r.features.dim, r.candidate.parallel, r.candidate.tile)).collect();
        assert_eq!(got, vec![(50, false, 1), (100, false, 256), (100, true, 256)]);
        // Near-ties stay: five configurations within 2 % of one another are all kept.
        let flat: Vec<Record> = CPU_TILES[..5]
            .iter()
            .enumerate()
            .map(|(k, &t)| record(64, 1, Candidate::cpu(true, t), Some(1.0 + 0.004 * k as f64)))
            .collect();
        assert_eq!(training_set(&flat, 5, 1.05).len(), 5);
    }

    /// A machine with known structure, as the search would log it: per instance the best
    /// configurations of each executor with their times. Parallel beats sequential tiles by
    /// `2^((log2 dim - 7.5) / 2)` (so from side 256 on); the GPU beats the CPU by
    /// `2^((log2 tsize - 6.5) / 2)` (from tsize about 100 on); the best tile is dim / 16 in
    /// parallel, dim / 64 sequentially; the band is dim / 4.
    fn known_rows() -> Vec<TrainRow> {
        let mut rows = Vec::new();
        for dim in [32usize, 64, 128, 256, 512, 1024, 2048] {
            let d = dim as f64;
            for tsize in [1.0f64, 10.0, 30.0, 300.0, 1000.0] {
                let par = 1.0;
                let tiled = par * ((d.log2() - 7.5) / 2.0).exp2();
                let gpu = par.min(tiled) / ((tsize.log2() - 6.5) / 2.0).exp2();
                let f = Features::new(dim, tsize, 1);
                let row = |candidate, time_ms| TrainRow { features: f, candidate, time_ms };
                for k in 0..3 {
                    let slower = 1.0 + 0.01 * k as f64;
                    rows.push(row(Candidate::cpu(true, (dim / 16).clamp(1, 256)), par * slower));
                    rows.push(row(Candidate::cpu(false, (dim / 64).clamp(1, 256)), tiled * slower));
                    let g = Candidate {
                        parallel: true,
                        tile: (dim / 16).clamp(1, 256),
                        band: (dim / 4) as isize,
                        gpu_tile: 1,
                        halo: -1,
                    };
                    rows.push(row(g, gpu * slower));
                }
            }
        }
        rows
    }

    #[test]
    fn learners_fit_and_predict_known_structure() {
        let rows = known_rows();
        for learner in Learner::ALL {
            let p = Predictor::fit(&rows, learner, &CPU_TILES).unwrap();
            for (dim, tsize) in [(64usize, 3.0), (512, 20.0), (1024, 500.0), (128, 2000.0), (100, 5.0)] {
                let got = p.predict(&Features::new(dim, tsize, 1), 1);
                let (parallel, gpu) = (dim >= 256, tsize >= 100.0);
                assert_eq!(
                    (got.parallel, got.band >= 0),
                    (parallel || gpu, gpu),
                    "{learner:?} {dim} {tsize}"
                );
                let cpu_only = p.predict(&Features::new(dim, tsize, 1), 0);
                assert_eq!(cpu_only.band, -1, "no GPU, no band");
                assert_eq!(cpu_only.parallel, parallel, "{learner:?} {dim} {tsize}");
                if matches!(learner, Learner::ModelTree | Learner::Svm) {
                    let want = if parallel { dim / 16 } else { (dim / 64).max(1) };
                    let w = (want as f64).log2();
                    let g = (cpu_only.tile as f64).log2();
                    assert!(
                        (g - w).abs() <= 1.0,
                        "{learner:?} {dim} {tsize}: tile {} for {want}",
                        cpu_only.tile
                    );
                }
                if learner == Learner::ModelTree && gpu {
                    let want = (dim / 4) as isize;
                    assert!((got.band - want).abs() <= want / 10, "{got:?} {want}");
                }
            }
        }
        assert!(Predictor::fit(&[], Learner::Linear, &CPU_TILES).is_err());
        assert!(Predictor::fit(&rows, Learner::Linear, &[]).is_err());
        assert_eq!(Learner::by_name("tree").unwrap(), Learner::Tree);
        assert_eq!(Learner::by_name("svm").unwrap(), Learner::Svm);
        assert!(Learner::by_name("svr").is_err());
    }

    /// The SVR on its own: a smooth surface of two inputs is recovered between the training
    /// points, and the fit does not depend on the inputs' scale (they are normalised).
    #[test]
    fn svr_fits_a_smooth_surface() {
        let target = |a: f64, b: f64| 1.5 * a - 0.5 * b + (a * 0.8).sin();
        let mut xs = Vec::new();
        for a in 0..10 {
            for b in 0..5 {
                xs.push(vec![a as f64, 1000.0 * b as f64]);
            }
        }
        let ys: Vec<f64> = xs.iter().map(|x| target(x[0], x[1] / 1000.0)).collect();
        let m = Regressor::fit(Learner::Svm, &xs, &ys, 0.0).unwrap();
        // Between training points, away from the edges (the targets span about 16).
        for (a, b) in [(2.5, 1.5), (4.5, 2.5), (7.5, 2.5), (6.5, 1.5)] {
            let got = m.predict(&[a, 1000.0 * b]);
            assert!((got - target(a, b)).abs() < 0.4, "{a} {b}: {got} vs {}", target(a, b));
        }
        let k = Regressor::fit(Learner::Svm, &xs, &vec![2.5; xs.len()], 0.0).unwrap();
        assert_eq!(k.predict(&[3.0, 7.0]), 2.5);
        assert_eq!(Regressor::fit(Learner::Svm, &[], &[], -1.0).unwrap().predict(&[1.0]), -1.0);
    }

    /// Degenerate training data (every target the same, as the thesis's CPU-only machines gave
    /// for band) predicts that constant instead of failing. Tiles are learnt per side: four
    /// tiles per side everywhere gives 32 at side 100 (25 snapped in `log2` space).
    #[test]
    fn constant_targets_give_constant_predictions() {
        let rows: Vec<TrainRow> = [16usize, 64, 256]
            .iter()
            .flat_map(|&d| {
                [(true, d / 4, 1.0), (false, d / 4, 2.0)].map(|(parallel, tile, time_ms)| TrainRow {
                    features: Features::new(d, 1.0, 0),
                    candidate: Candidate::cpu(parallel, tile),
                    time_ms,
                })
            })
            .collect();
        for learner in Learner::ALL {
            let p = Predictor::fit(&rows, learner, &CPU_TILES).unwrap();
            assert_eq!(p.predict(&Features::new(100, 7.0, 3), 1), Candidate::cpu(true, 32), "{learner:?}");
            assert_eq!(p.predict(&Features::new(8, 7.0, 3), 0).tile, 2, "{learner:?}");
            assert_eq!(p.predict(&Features::new(3, 7.0, 3), 0).tile, 1, "{learner:?}");
        }
    }
}
