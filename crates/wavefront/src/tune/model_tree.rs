//! Linear models and an M5P-style model tree (Quinlan's M5 as Weka's M5P builds it: a
//! regression tree split by standard-deviation reduction, a linear model at every node, pruned
//! bottom-up where a node's model is no worse than its subtree). No Rust crate offers model
//! trees; this one is small and deterministic.

use serde::{Deserialize, Serialize};

/// `y = intercept + sum coef[i] x[i]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// One coefficient per input.
    pub coef: Vec<f64>,
    /// The constant term.
    pub intercept: f64,
}

impl LinearModel {
    /// A model from its coefficients.
    pub fn new(coef: Vec<f64>, intercept: f64) -> Self {
        LinearModel { coef, intercept }
    }

    /// The model's value at `x` (inputs beyond the coefficients are ignored, missing ones are 0).
    pub fn predict(&self, x: &[f64]) -> f64 {
        self.intercept + self.coef.iter().zip(x).map(|(c, v)| c * v).sum::<f64>()
    }

    /// Least squares with a tiny ridge (so constant or collinear inputs give a model instead of
    /// a singular system): centred normal equations solved by Gaussian elimination.
    pub fn fit(xs: &[Vec<f64>], ys: &[f64]) -> Self {
        let n = ys.len();
        let p = xs.first().map_or(0, Vec::len);
        if n == 0 {
            return LinearModel::new(vec![0.0; p], 0.0);
        }
        let mean = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
        let xm: Vec<f64> = (0..p).map(|k| mean(&|r| xs[r][k])).collect();
        let ym = mean(&|r| ys[r]);
        let mut a = vec![vec![0.0; p + 1]; p];
        for r in 0..n {
            for i in 0..p {
                let xi = xs[r][i] - xm[i];
                for j in 0..p {
                    a[i][j] += xi * (xs[r][j] - xm[j]);
                }
                a[i][p] += xi * (ys[r] - ym);
            }
        }
        let trace: f64 = (0..p).map(|i| a[i][i]).sum();
        let ridge = 1e-11 * trace / p.max(1) as f64 + 1e-14;
        for (i, row) in a.iter_mut().enumerate() {
            row[i] += ridge;
        }
        let coef = solve(a);
        let intercept = ym - coef.iter().zip(&xm).map(|(c, m)| c * m).sum::<f64>();
        LinearModel { coef, intercept }
    }
}

/// Solves the augmented system `a` (p rows of p + 1) by elimination with partial pivoting;
/// a zero pivot leaves that coefficient 0.
fn solve(mut a: Vec<Vec<f64>>) -> Vec<f64> {
    let p = a.len();
    for c in 0..p {
        let piv = (c..p).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs())).unwrap_or(c);
        a.swap(c, piv);
        if a[c][c].abs() < 1e-300 {
            continue;
        }
        for r in c + 1..p {
            let f = a[r][c] / a[c][c];
            for k in c..=p {
                a[r][k] -= f * a[c][k];
            }
        }
    }
    let mut x = vec![0.0; p];
    for r in (0..p).rev() {
        if a[r][r].abs() < 1e-300 {
            continue;
        }
        let s: f64 = (r + 1..p).map(|k| a[r][k] * x[k]).sum();
        x[r] = (a[r][p] - s) / a[r][r];
    }
    x
}

/// How a [`ModelTree`] grows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TreeParams {
    /// Fewest training rows in a leaf (M5P's default: 4).
    pub min_leaf: usize,
    /// A node whose targets' standard deviation is below this fraction of the root's is a leaf.
    pub sd_fraction: f64,
    /// Prune subtrees whose node model does as well (M5P prunes by default).
    pub prune: bool,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams { min_leaf: 4, sd_fraction: 0.05, prune: true }
    }
}

/// A regression tree with linear models at the leaves (M5P-style).
///
/// Leaf predictions are clamped to the range of the leaf's training targets, so a linear model
/// fitted on a handful of rows never extrapolates far outside what was observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelTree {
    root: Node,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Node {
    Leaf { model: LinearModel, lo: f64, hi: f64 },
    Split { feature: usize, threshold: f64, left: Box<Node>, right: Box<Node> },
}

impl ModelTree {
    /// Grows (and prunes) a tree on rows `xs` with targets `ys`. An empty training set gives
    /// the constant 0; constant targets give that constant.
    pub fn fit(xs: &[Vec<f64>], ys: &[f64], params: &TreeParams) -> Self {
        let idx: Vec<usize> = (0..ys.len()).collect();
        let root_sd = sd(&idx, ys);
        let mut b = Builder { xs, ys, params, root_sd };
        ModelTree { root: b.grow(idx).0 }
    }

    /// The prediction at `x`.
    pub fn predict(&self, x: &[f64]) -> f64 {
        let mut node = &self.root;
        loop {
            match node {
                Node::Leaf { model, lo, hi } => return model.predict(x).clamp(*lo, *hi),
                Node::Split { feature, threshold, left, right } => {
                    node = if x.get(*feature).copied().unwrap_or(0.0) <= *threshold { left } else { right };
                }
            }
        }
    }

    /// Leaves of the tree (Fig. 5.13 of the thesis shows a tree with 22).
    pub fn leaves(&self) -> usize {
        fn count(n: &Node) -> usize {
            match n {
                Node::Leaf { .. } => 1,
                Node::Split { left, right, .. } => count(left) + count(right),
            }
        }
        count(&self.root)
    }
}

fn sd(idx: &[usize], ys: &[f64]) -> f64 {
    if idx.is_empty() {
        return 0.0;
    }
    let m = idx.iter().map(|&i| ys[i]).sum::<f64>() / idx.len() as f64;
    (idx.iter().map(|&i| (ys[i] - m).powi(2)).sum::<f64>() / idx.len() as f64).sqrt()
}

struct Builder<'a> {
    xs: &'a [Vec<f64>],
    ys: &'a [f64],
    params: &'a TreeParams,
    root_sd: f64,
}

impl Builder<'_> {
    /// The subtree over rows `idx` and its pruning error (M5's adjusted mean absolute error).
    fn grow(&mut self, idx: Vec<usize>) -> (Node, f64) {
        let leaf = self.leaf(&idx);
        let leaf_err = self.adjusted_error(&idx, &leaf);
        let min = self.params.min_leaf.max(1);
        if idx.len() < 2 * min || sd(&idx, self.ys) <= self.params.sd_fraction * self.root_sd {
            return (leaf, leaf_err);
        }
        let Some((feature, threshold)) = self.best_split(&idx, min) else { return (leaf, leaf_err) };
        let (l, r): (Vec<usize>, Vec<usize>) = idx.iter().partition(|&&i| self.xs[i][feature] <= threshold);
        let n = idx.len() as f64;
        let (nl, nr) = (l.len() as f64, r.len() as f64);
        let (left, el) = self.grow(l);
        let (right, er) = self.grow(r);
        let subtree_err = (nl * el + nr * er) / n;
        // Ties (and rounding-level differences) go to the simpler model.
        if self.params.prune && leaf_err <= subtree_err + 1e-6 * self.root_sd {
            return (leaf, leaf_err);
        }
        (Node::Split { feature, threshold, left: Box::new(left), right: Box::new(right) }, subtree_err)
    }

    fn leaf(&self, idx: &[usize]) -> Node {
        let xs: Vec<Vec<f64>> = idx.iter().map(|&i| self.xs[i].clone()).collect();
        let ys: Vec<f64> = idx.iter().map(|&i| self.ys[i]).collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (0.0, 0.0) };
        Node::Leaf { model: LinearModel::fit(&xs, &ys), lo, hi }
    }

    /// Mean absolute residual times `(n + v) / (n - v)`, `v` the model's parameter count.
    fn adjusted_error(&self, idx: &[usize], leaf: &Node) -> f64 {
        let Node::Leaf { model, lo, hi } = leaf else { return f64::INFINITY };
        let n = idx.len() as f64;
        if n == 0.0 {
            return 0.0;
        }
        let mae =
            idx.iter().map(|&i| (model.predict(&self.xs[i]).clamp(*lo, *hi) - self.ys[i]).abs()).sum::<f64>()
                / n;
        let v = (model.coef.len() + 1) as f64;
        mae * if n > v { (n + v) / (n - v) } else { 10.0 }
    }

    /// The split that most reduces the standard deviation, thresholds at midpoints between
    /// distinct values, each side holding at least `min` rows; ties go to the lower feature,
    /// then the lower threshold.
    fn best_split(&self, idx: &[usize], min: usize) -> Option<(usize, f64)> {
        let base = sd(idx, self.ys);
        let n = idx.len() as f64;
        let p = self.xs.first().map_or(0, Vec::len);
        let mut best: Option<(f64, usize, f64)> = None;
        for f in 0..p {
            let mut order = idx.to_vec();
            order.sort_by(|&a, &b| self.xs[a][f].total_cmp(&self.xs[b][f]));
            // Running sums give every split's two standard deviations in one pass.
            let total: (f64, f64) =
                order.iter().fold((0.0, 0.0), |s, &i| (s.0 + self.ys[i], s.1 + self.ys[i].powi(2)));
            let mut left = (0.0, 0.0);
            for k in 1..order.len() {
                let y = self.ys[order[k - 1]];
                left = (left.0 + y, left.1 + y * y);
                let (a, b) = (self.xs[order[k - 1]][f], self.xs[order[k]][f]);
                if a == b || k < min || order.len() - k < min {
                    continue;
                }
                let (nl, nr) = (k as f64, n - k as f64);
                let var = |s: f64, s2: f64, m: f64| (s2 / m - (s / m).powi(2)).max(0.0).sqrt();
                let sdr = base
                    - nl / n * var(left.0, left.1, nl)
                    - nr / n * var(total.0 - left.0, total.1 - left.1, nr);
                if best.is_none_or(|(s, _, _)| sdr > s + 1e-12) {
                    best = Some((sdr, f, (a + b) / 2.0));
                }
            }
        }
        best.filter(|(s, _, _)| *s > 1e-12).map(|(_, f, t)| (f, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_fit_recovers_exact_coefficients() {
        let xs: Vec<Vec<f64>> = (0..20).map(|i| vec![i as f64, ((i * 7) % 5) as f64]).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 3.0 - 2.0 * x[0] + 0.5 * x[1]).collect();
        let m = LinearModel::fit(&xs, &ys);
        assert!((m.coef[0] + 2.0).abs() < 1e-6 && (m.coef[1] - 0.5).abs() < 1e-6, "{m:?}");
        assert!((m.intercept - 3.0).abs() < 1e-6);
        // A constant input gets coefficient 0 instead of a singular system.
        let xs: Vec<Vec<f64>> = (0..6).map(|i| vec![i as f64, 4.0]).collect();
        let m = LinearModel::fit(&xs, &[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
        assert!((m.predict(&[10.0, 4.0]) - 21.0).abs() < 1e-6, "{m:?}");
        assert_eq!(LinearModel::fit(&[], &[]).predict(&[]), 0.0);
    }

    /// The digest's §6.5 sanity oracle: a saw-tooth target (piecewise linear, the shape the
    /// thesis saw in best bands) is recovered on held-out points, >= 90% of them exactly after
    /// rounding.
    #[test]
    fn model_tree_recovers_a_saw_tooth() {
        let target = |x0: f64, x1: f64| 2.0 * (x0 % 10.0) + 3.0 * x1;
        let mut xs = Vec::new();
        for a in 0..40 {
            for b in 0..4 {
                xs.push(vec![a as f64, b as f64]);
            }
        }
        let ys: Vec<f64> = xs.iter().map(|x| target(x[0], x[1])).collect();
        let tree = ModelTree::fit(&xs, &ys, &TreeParams::default());
        let held: Vec<(f64, f64)> =
            (0..40).flat_map(|a| (0..4).map(move |b| (a as f64 + 0.3, b as f64))).collect();
        let hits = held.iter().filter(|&&(a, b)| (tree.predict(&[a, b]) - target(a, b)).abs() < 0.5).count();
        assert!(hits * 10 >= held.len() * 9, "{hits} of {}", held.len());
        assert!(tree.leaves() >= 4, "the four teeth need their own leaves");
        // A linear model alone cannot: the saw-tooth is not linear.
        let lin = LinearModel::fit(&xs, &ys);
        let lin_hits =
            held.iter().filter(|&&(a, b)| (lin.predict(&[a, b]) - target(a, b)).abs() < 0.5).count();
        assert!(lin_hits * 2 < held.len());
    }

    #[test]
    fn model_tree_handles_degenerate_targets() {
        let xs: Vec<Vec<f64>> = (0..12).map(|i| vec![i as f64]).collect();
        let tree = ModelTree::fit(&xs, &[-1.0; 12], &TreeParams::default());
        assert_eq!(tree.predict(&[100.0]), -1.0);
        assert_eq!(tree.leaves(), 1);
        let empty = ModelTree::fit(&[], &[], &TreeParams::default());
        assert_eq!(empty.predict(&[1.0]), 0.0);
        let one = ModelTree::fit(&[vec![1.0]], &[7.0], &TreeParams::default());
        assert_eq!(one.predict(&[-5.0]), 7.0);
    }

    #[test]
    fn pruning_keeps_a_linear_target_in_one_leaf() {
        let xs: Vec<Vec<f64>> = (0..50).map(|i| vec![i as f64]).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 1.5 * x[0] + 2.0).collect();
        let pruned = ModelTree::fit(&xs, &ys, &TreeParams::default());
        assert_eq!(pruned.leaves(), 1);
        assert!((pruned.predict(&[20.5]) - 32.75).abs() < 1e-6);
    }
}
