//! Training sets and the chained predictor (digest §3.1, §3.3): the best five configurations of
//! each sampled instance, then one model per decision, each fed the ones before it, in the
//! thesis's chapter 5 order: parallel or not -> GPU or not -> CPU tile -> band -> halo.
//!
//! Binary decisions use smartcore's CART classifier (the thesis's REPTree role); parameters use
//! the in-house M5P-style [`ModelTree`] by default, or smartcore's CART regressor or linear
//! regression (the thesis's chapter 4 learner). Predictions are rounded and snapped to legal
//! values ([`crate::tune::space`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::linear::linear_regression::{LinearRegression, LinearRegressionParameters};
use smartcore::tree::decision_tree_classifier::{DecisionTreeClassifier, DecisionTreeClassifierParameters};
use smartcore::tree::decision_tree_regressor::{DecisionTreeRegressor, DecisionTreeRegressorParameters};

use crate::error::{Result, WavefrontError};
use crate::tune::driver::{Instance, Record};
use crate::tune::features::Features;
use crate::tune::model_tree::{LinearModel, ModelTree, TreeParams};
use crate::tune::space::{Candidate, snap_band, snap_halo, snap_tile};

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

/// The `k` fastest timed configurations of every instance in `records` (capped and failed ones
/// left out), ties broken by configuration so the set is deterministic; instances in order.
pub fn training_set(records: &[Record], k: usize) -> Vec<TrainRow> {
    let mut by_instance: BTreeMap<Instance, Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.time_ms.is_some()) {
        by_instance.entry(r.instance).or_default().push(r);
    }
    let mut out = Vec::new();
    for rs in by_instance.values_mut() {
        rs.sort_by(|a, b| {
            a.time_ms
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.time_ms.unwrap_or(f64::INFINITY))
                .then(a.candidate.cmp(&b.candidate))
        });
        out.extend(rs.iter().take(k).map(|r| TrainRow {
            features: r.features,
            candidate: r.candidate,
            time_ms: r.time_ms.unwrap_or(f64::NAN),
        }));
    }
    out
}

/// The regressor used for the CPU tile, band and halo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Learner {
    /// M5P-style model tree (in-house; the thesis's chapters 5 and 6).
    ModelTree,
    /// smartcore's CART regression tree (piecewise constant).
    Tree,
    /// smartcore's linear regression (the thesis's chapter 4).
    Linear,
}

impl Learner {
    /// Every learner, for comparisons.
    pub const ALL: [Learner; 3] = [Learner::ModelTree, Learner::Tree, Learner::Linear];

    /// The name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Learner::ModelTree => "model-tree",
            Learner::Tree => "tree",
            Learner::Linear => "linear",
        }
    }

    /// The learner called `name`.
    ///
    /// # Errors
    /// An unknown name.
    pub fn by_name(name: &str) -> Result<Self> {
        Learner::ALL.into_iter().find(|l| l.name() == name).ok_or_else(|| {
            WavefrontError::Tune(format!("unknown learner `{name}` (model-tree, tree, linear)"))
        })
    }
}

type Matrix = DenseMatrix<f64>;

/// A fitted real-valued model.
#[derive(Debug)]
enum Regressor {
    Constant(f64),
    ModelTree(ModelTree),
    Tree(DecisionTreeRegressor<f64, f64, Matrix, Vec<f64>>),
    Linear(LinearRegression<f64, f64, Matrix, Vec<f64>>),
    /// In-house least squares, where smartcore's solver rejects the data.
    LeastSquares(LinearModel),
}

fn matrix(xs: &[Vec<f64>]) -> Result<Matrix> {
    DenseMatrix::from_2d_vec(&xs.to_vec()).map_err(|e| WavefrontError::Tune(format!("training matrix: {e}")))
}

impl Regressor {
    fn fit(learner: Learner, xs: &[Vec<f64>], ys: &[f64]) -> Result<Self> {
        let Some(&first) = ys.first() else { return Ok(Regressor::Constant(0.0)) };
        if ys.iter().all(|&y| y == first) {
            // The thesis's SVM failed on constant targets (§3.2); a constant is the answer.
            return Ok(Regressor::Constant(first));
        }
        Ok(match learner {
            Learner::ModelTree => Regressor::ModelTree(ModelTree::fit(xs, ys, &TreeParams::default())),
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
        }
    }
}

/// A fitted yes/no model.
#[derive(Debug)]
enum Classifier {
    Constant(bool),
    Tree(DecisionTreeClassifier<f64, u32, Matrix, Vec<u32>>),
}

impl Classifier {
    fn fit(xs: &[Vec<f64>], ys: &[bool]) -> Result<Self> {
        let Some(&first) = ys.first() else { return Ok(Classifier::Constant(false)) };
        if ys.iter().all(|&y| y == first) {
            return Ok(Classifier::Constant(first));
        }
        let labels: Vec<u32> = ys.iter().map(|&y| u32::from(y)).collect();
        let mut p = DecisionTreeClassifierParameters::default().with_min_samples_leaf(2);
        p.seed = Some(0);
        DecisionTreeClassifier::fit(&matrix(xs)?, &labels, p)
            .map(Classifier::Tree)
            .map_err(|e| WavefrontError::Tune(format!("classification tree: {e}")))
    }

    fn predict(&self, x: &[f64]) -> bool {
        match self {
            Classifier::Constant(c) => *c,
            Classifier::Tree(t) => {
                matrix(&[x.to_vec()]).ok().and_then(|m| t.predict(&m).ok()).is_some_and(|v| v[0] == 1)
            }
        }
    }
}

/// The chained predictor of a configuration from features.
#[derive(Debug)]
pub struct Predictor {
    learner: Learner,
    tiles: Vec<usize>,
    parallel: Classifier,
    use_gpu: Classifier,
    /// `log2` of the CPU tile from the features and the parallel decision.
    tile: Regressor,
    /// From the features and the CPU tile, on GPU rows only.
    band: Regressor,
    /// From the features, band and CPU tile, on GPU rows only.
    halo: Regressor,
}

impl Predictor {
    /// Fits every model of the chain on `rows`; `tiles` are the legal CPU tile sides predictions
    /// snap to.
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
        let rows = &rows[..];
        let base: Vec<Vec<f64>> = rows.iter().map(|r| r.features.x().to_vec()).collect();
        let parallel =
            Classifier::fit(&base, &rows.iter().map(|r| r.candidate.parallel).collect::<Vec<_>>())?;
        let use_gpu =
            Classifier::fit(&base, &rows.iter().map(|r| r.candidate.band >= 0).collect::<Vec<_>>())?;
        let with =
            |extra: &dyn Fn(&TrainRow) -> Vec<f64>, keep: &dyn Fn(&TrainRow) -> bool| -> Vec<Vec<f64>> {
                rows.iter()
                    .zip(&base)
                    .filter(|(r, _)| keep(r))
                    .map(|(r, b)| [b.clone(), extra(r)].concat())
                    .collect()
            };
        let all = |_: &TrainRow| true;
        let gpu = |r: &TrainRow| r.candidate.band >= 0;
        let tile_x = with(&|r| vec![f64::from(u8::from(r.candidate.parallel))], &all);
        let tile_y: Vec<f64> = rows.iter().map(|r| (r.candidate.tile.max(1) as f64).log2()).collect();
        let band_x = with(&|r| vec![(r.candidate.tile.max(1) as f64).log2()], &gpu);
        let band_y: Vec<f64> = rows.iter().filter(|r| gpu(r)).map(|r| r.candidate.band as f64).collect();
        let halo_x = with(&|r| vec![r.candidate.band as f64, (r.candidate.tile.max(1) as f64).log2()], &gpu);
        let halo_y: Vec<f64> = rows.iter().filter(|r| gpu(r)).map(|r| r.candidate.halo as f64).collect();
        Ok(Predictor {
            learner,
            tiles: tiles.to_vec(),
            parallel,
            use_gpu,
            tile: Regressor::fit(learner, &tile_x, &tile_y)?,
            band: Regressor::fit(learner, &band_x, &band_y)?,
            halo: Regressor::fit(learner, &halo_x, &halo_y)?,
        })
    }

    /// The learner of the parameter models.
    pub fn learner(&self) -> Learner {
        self.learner
    }

    /// The predicted configuration, snapped to legal values. `gpus` is how many GPUs this machine
    /// has: without one the GPU models are not consulted; with one the halo stays -1.
    pub fn predict(&self, f: &Features, gpus: usize) -> Candidate {
        let x = f.x().to_vec();
        let parallel = self.parallel.predict(&x);
        let log_tile = self.tile.predict(&[x.clone(), vec![f64::from(u8::from(parallel))]].concat());
        let tile = snap_tile(log_tile.exp2(), &self.tiles).min(f.dim.max(1)).max(1);
        let mut c = Candidate::cpu(parallel, tile);
        if gpus >= 1 && self.use_gpu.predict(&x) {
            let lt = (tile as f64).log2();
            // useGPU says yes: at least the main diagonal (digest §2.1).
            let band = snap_band(self.band.predict(&[x.clone(), vec![lt]].concat()), f.dim).max(0);
            let halo = if gpus >= 2 {
                snap_halo(self.halo.predict(&[x, vec![band as f64, lt]].concat()), f.dim, band)
            } else {
                -1
            };
            c = Candidate { parallel: true, tile, band, gpu_tile: 1, halo };
        }
        c
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
        }
    }

    #[test]
    fn training_set_is_the_top_five_per_instance() {
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
        let rows = training_set(&recs, 5);
        assert_eq!(rows.len(), 10);
        let first: Vec<(bool, usize)> =
            rows[..5].iter().map(|r| (r.candidate.parallel, r.candidate.tile)).collect();
        assert_eq!(
            first,
            [(false, 1), (false, 2), (false, 4), (false, 8), (false, 10)],
            "dim 50 sorts first"
        );
        let second: Vec<(bool, usize)> =
            rows[5..].iter().map(|r| (r.candidate.parallel, r.candidate.tile)).collect();
        assert_eq!(
            second,
            [(false, 256), (true, 256), (false, 128), (true, 128), (false, 64)],
            "ties by config"
        );
        assert!(training_set(&recs, 0).is_empty());
        assert_eq!(training_set(&recs[..1], 5).len(), 1);
    }

    /// A known structure: parallel iff dim >= 256; tile = dim / 16 (a power of two); GPU band
    /// = dim / 4 when tsize >= 100. Every learner recovers the discrete parts on unseen
    /// instances; the model tree recovers all of it.
    #[test]
    fn learners_fit_and_predict_known_structure() {
        let truth = |dim: usize, tsize: f64| {
            let tile = (dim / 16).clamp(1, 256);
            if tsize >= 100.0 {
                Candidate { parallel: true, tile, band: (dim / 4) as isize, gpu_tile: 1, halo: -1 }
            } else {
                Candidate::cpu(dim >= 256, tile)
            }
        };
        let mut rows = Vec::new();
        for dim in [32usize, 64, 128, 256, 512, 1024, 2048] {
            for tsize in [1.0, 10.0, 30.0, 300.0, 1000.0] {
                for _ in 0..5 {
                    rows.push(TrainRow {
                        features: Features::new(dim, tsize, 1),
                        candidate: truth(dim, tsize),
                        time_ms: 1.0,
                    });
                }
            }
        }
        for learner in Learner::ALL {
            let p = Predictor::fit(&rows, learner, &CPU_TILES).unwrap();
            for (dim, tsize) in [(64usize, 3.0), (512, 20.0), (1024, 500.0), (128, 2000.0)] {
                let got = p.predict(&Features::new(dim, tsize, 1), 1);
                let want = truth(dim, tsize);
                assert_eq!(
                    (got.parallel, got.band >= 0),
                    (want.parallel, want.band >= 0),
                    "{learner:?} {dim} {tsize}"
                );
                if learner == Learner::ModelTree {
                    assert_eq!(got.tile, want.tile, "{dim} {tsize}");
                    assert!((got.band - want.band).abs() <= want.band / 10, "{got:?} {want:?}");
                }
                let cpu_only = p.predict(&Features::new(dim, tsize, 1), 0);
                assert_eq!(cpu_only.band, -1, "no GPU, no band");
            }
        }
        assert!(Predictor::fit(&[], Learner::Linear, &CPU_TILES).is_err());
        assert!(Predictor::fit(&rows, Learner::Linear, &[]).is_err());
        assert_eq!(Learner::by_name("tree").unwrap(), Learner::Tree);
        assert!(Learner::by_name("svm").is_err());
    }

    /// Degenerate training data (every target the same, as the thesis's CPU-only machines gave
    /// for band) predicts that constant instead of failing.
    #[test]
    fn constant_targets_give_constant_predictions() {
        let rows: Vec<TrainRow> = [16usize, 64, 256]
            .iter()
            .map(|&d| TrainRow {
                features: Features::new(d, 1.0, 0),
                candidate: Candidate::cpu(true, 32),
                time_ms: 1.0,
            })
            .collect();
        for learner in Learner::ALL {
            let p = Predictor::fit(&rows, learner, &CPU_TILES).unwrap();
            assert_eq!(p.predict(&Features::new(100, 7.0, 3), 1), Candidate::cpu(true, 32));
            assert_eq!(p.predict(&Features::new(8, 7.0, 3), 0).tile, 8, "tile never above the grid side");
        }
    }
}
