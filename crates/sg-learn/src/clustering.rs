//! Density-based clustering (thesis Ch. 8): a sparse grid density estimate, a kNN graph of the
//! data, pruning of low-density nodes and edges, and connected components.

use ndarray::{Array2, ArrayView2};
use sg_core::{AdaptiveGrid, GridSpec};

use crate::adjusted_rand_index;
use crate::density::{DensityEstimator, DensityModel, Regularization};
use crate::error::{LearnError, Result};
use crate::graph::{connected_components, knn_binned, knn_exact};
use crate::input::check_points;
use crate::solver::solver_builder;

/// Which kNN graph the clustering builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knn {
    /// Exact neighbours ([`knn_exact`]).
    Exact,
    /// The binned approximation of Alg. 11 with this many bins ([`knn_binned`]).
    Binned(usize),
}

/// The builder of a clustering.
///
/// `threshold` is relative: a node is pruned when the density estimate at it is below
/// `threshold · max_j f̂(x_j)`, and an edge when the estimate at any of its check points is
/// (the midpoint by default, or `q` evenly spaced inner points, [`edge_checks`](Self::edge_checks));
/// the estimate is neither positive nor bounded, so an absolute value would depend on the
/// data's scale.
///
/// ```
/// use sg_learn::{Clustering, GridSpec, adjusted_rand_index};
/// let (x, truth) = sg_learn::datasets::GaussianBlobs { clusters: 3, dim: 2, sigma: 0.04, separation: 7.0, noise: 0.0 }
///     .generate(300, 7)?;
/// let labels = Clustering::new(GridSpec::regular(2, 5)?).lambda(1e-3).neighbors(6).threshold(0.1).fit(x.view())?;
/// assert!(adjusted_rand_index(&labels, &truth) > 0.9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Clustering {
    density: DensityEstimator,
    neighbors: usize,
    threshold: f64,
    knn: Knn,
    edge_checks: usize,
}

impl Clustering {
    /// A clustering on the grid `spec`: `λ = 1e-5`, `k = 6`, threshold 0.1, binned kNN with 16
    /// bins (the thesis's settings), CG as in [`DensityEstimator`] with tolerance `1e-2`.
    pub fn new(spec: GridSpec) -> Self {
        Self::from_estimator(DensityEstimator::new(spec))
    }

    /// A clustering on an adaptive grid.
    pub fn with_grid(grid: AdaptiveGrid) -> Self {
        Self::from_estimator(DensityEstimator::with_grid(grid))
    }

    fn from_estimator(density: DensityEstimator) -> Self {
        Clustering {
            density: density.tolerance(1e-2),
            neighbors: 6,
            threshold: 0.1,
            knn: Knn::Binned(16),
            edge_checks: 1,
        }
    }

    // λ, the CG settings and the backend are the density estimate's (the kNN graph stays on
    // the CPU whatever the backend).
    solver_builder!(density.solver);

    /// `k` of the kNN graph.
    pub fn neighbors(mut self, k: usize) -> Self {
        self.neighbors = k;
        self
    }

    /// The relative density threshold in `[0, 1]`.
    pub fn threshold(mut self, t: f64) -> Self {
        self.threshold = t;
        self
    }

    /// The kNN graph variant.
    pub fn knn(mut self, knn: Knn) -> Self {
        self.knn = knn;
        self
    }

    /// The points at which an edge's density is checked: `q` evenly spaced inner points
    /// (`x_i + j/(q+1)·(x_j − x_i)`, `j = 1..=q`); 1 (the default) is the midpoint. A
    /// low-density gap away from an edge's midpoint escapes the midpoint check alone.
    pub fn edge_checks(mut self, q: usize) -> Self {
        self.edge_checks = q;
        self
    }

    /// The density system's regularisation operator (see [`Regularization`]).
    pub fn regularization(mut self, c: Regularization) -> Self {
        self.density = self.density.regularization(c);
        self
    }

    /// A cluster label per row of `x`, `None` for rows pruned as noise.
    ///
    /// # Errors
    /// As [`DensityEstimator::fit`], plus `k = 0`, fewer bins than `k`, or a threshold outside
    /// `[0, 1]`.
    pub fn fit(&self, x: ArrayView2<'_, f64>) -> Result<Vec<Option<usize>>> {
        check_threshold(self.threshold)?;
        let graph = self.graph(x)?;
        let model = self.density.fit(x)?;
        Ok(label(&densities(&model, x, &graph, self.edge_checks)?, self.threshold))
    }

    /// The kNN graph of the rows of `x` (checked here: the graph is built before the density).
    fn graph(&self, x: ArrayView2<'_, f64>) -> Result<Vec<Vec<usize>>> {
        check_points(x)?;
        if self.edge_checks == 0 {
            return Err(LearnError::InvalidParameter {
                name: "edge_checks",
                reason: "at least one point per edge".into(),
            });
        }
        match self.knn {
            Knn::Exact => knn_exact(x, self.neighbors),
            Knn::Binned(bins) => knn_binned(x, self.neighbors, bins),
        }
    }
}

/// Checks a relative density threshold.
fn check_threshold(t: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&t) {
        return Err(LearnError::InvalidParameter {
            name: "threshold",
            reason: format!("{t} is not in [0, 1]"),
        });
    }
    Ok(())
}

/// The density at the data points, and its minimum over each edge's check points.
struct Densities {
    nodes: Vec<f64>,
    edges: Vec<(usize, usize)>,
    edge_min: Vec<f64>,
}

fn densities(
    model: &DensityModel,
    x: ArrayView2<'_, f64>,
    graph: &[Vec<usize>],
    checks: usize,
) -> Result<Densities> {
    let nodes = model.evaluate(x)?.to_vec();
    let edges: Vec<(usize, usize)> =
        graph.iter().enumerate().flat_map(|(i, ns)| ns.iter().map(move |&j| (i, j))).collect();
    let d = x.ncols();
    // row e·checks + c: the (c+1)-th check point of edge e (a dummy row for no edge)
    let points =
        Array2::from_shape_fn(((edges.len() * checks).max(1), d), |(r, k)| match edges.get(r / checks) {
            Some(&(i, j)) => {
                let t = (r % checks + 1) as f64 / (checks + 1) as f64;
                (x[[i, k]] + t * (x[[j, k]] - x[[i, k]])).clamp(0.0, 1.0)
            }
            None => 0.5,
        });
    let along = model.evaluate(points.view())?.to_vec();
    let edge_min = (0..edges.len())
        .map(|e| along[e * checks..(e + 1) * checks].iter().copied().fold(f64::INFINITY, f64::min))
        .collect();
    Ok(Densities { nodes, edges, edge_min })
}

/// Prunes nodes and edges below `threshold · max f̂(x_j)` (Alg. 12) and labels the components.
fn label(f: &Densities, threshold: f64) -> Vec<Option<usize>> {
    let cut = threshold * f.nodes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let active: Vec<bool> = f.nodes.iter().map(|&v| v >= cut).collect();
    let kept: Vec<(usize, usize)> = f
        .edges
        .iter()
        .zip(&f.edge_min)
        .filter(|&(&(i, j), &v)| active[i] && active[j] && v >= cut)
        .map(|(e, _)| *e)
        .collect();
    connected_components(f.nodes.len(), &kept, &active)
}

/// The best `(λ, t)` of a grid search scored by the ARI against known labels (the thesis's
/// parameter selection, as a plain grid instead of its adaptive refinement).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The best `λ`.
    pub lambda: f64,
    /// The best threshold.
    pub threshold: f64,
    /// Its ARI.
    pub ari: f64,
    /// Its labels.
    pub labels: Vec<Option<usize>>,
}

impl Clustering {
    /// Tries every `λ` in `lambdas` and `t` in `thresholds` (the kNN graph is built once, the
    /// density once per `λ`) and returns the pair with the highest ARI against `truth` (the
    /// first on ties).
    ///
    /// # Errors
    /// As [`fit`](Self::fit), plus empty candidate lists, `truth.len() != x.nrows()`, or a
    /// threshold outside `[0, 1]`.
    pub fn search(
        &self,
        x: ArrayView2<'_, f64>,
        truth: &[Option<usize>],
        lambdas: &[f64],
        thresholds: &[f64],
    ) -> Result<SearchResult> {
        if truth.len() != x.nrows() {
            return Err(LearnError::LengthMismatch {
                what: "reference labels",
                expected: x.nrows(),
                got: truth.len(),
            });
        }
        if lambdas.is_empty() || thresholds.is_empty() {
            return Err(LearnError::Empty { what: "the candidate list" });
        }
        thresholds.iter().try_for_each(|&t| check_threshold(t))?;
        let graph = self.graph(x)?;
        let mut best: Option<SearchResult> = None;
        for &lambda in lambdas {
            let model = self.density.clone().lambda(lambda).fit(x)?;
            let f = densities(&model, x, &graph, self.edge_checks)?;
            for &threshold in thresholds {
                let labels = label(&f, threshold);
                let ari = adjusted_rand_index(&labels, truth);
                if best.as_ref().is_none_or(|b| ari > b.ari) {
                    best = Some(SearchResult { lambda, threshold, ari, labels });
                }
            }
        }
        Ok(best.expect("non-empty candidate lists"))
    }
}
