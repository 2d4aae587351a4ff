//! The k-nearest-neighbour graph (thesis Eqs. 8.8–8.9 and the binned Alg. 11) and connected
//! components (Alg. 13, by union-find so deep graphs cannot overflow a stack).

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::error::{LearnError, Result};

/// Squared Euclidean distance of rows `i` and `j`.
fn dist2(x: ArrayView2<'_, f64>, i: usize, j: usize) -> f64 {
    x.row(i).iter().zip(x.row(j)).map(|(a, b)| (a - b) * (a - b)).sum()
}

/// The `k` nearest of `candidates` (distance, index), ties to the smaller index.
fn nearest_k(mut candidates: Vec<(f64, usize)>, k: usize) -> Vec<usize> {
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    candidates.into_iter().take(k).map(|c| c.1).collect()
}

fn check_k(x: ArrayView2<'_, f64>, k: usize) -> Result<()> {
    if k == 0 {
        return Err(LearnError::InvalidParameter { name: "neighbors", reason: "must be at least 1".into() });
    }
    if x.nrows() == 0 {
        return Err(LearnError::Empty { what: "the data set" });
    }
    Ok(())
}

/// The exact kNN graph: for every row, the `k` other rows nearest to it (fewer when
/// `m − 1 < k`), ties broken by the smaller row number. `O(m²·d)`.
///
/// ```
/// let x = ndarray::array![[0.0], [1.0], [2.0], [3.0]];
/// let g = sg_learn::graph::knn_exact(x.view(), 2)?;
/// assert_eq!(g[0], vec![1, 2]);
/// assert_eq!(g[1], vec![0, 2]);
/// assert_eq!(g[3], vec![2, 1]);
/// # Ok::<(), sg_learn::LearnError>(())
/// ```
///
/// # Errors
/// `k = 0` or no rows.
pub fn knn_exact(x: ArrayView2<'_, f64>, k: usize) -> Result<Vec<Vec<usize>>> {
    check_k(x, k)?;
    let m = x.nrows();
    Ok((0..m)
        .into_par_iter()
        .map(|i| nearest_k((0..m).filter(|&j| j != i).map(|j| (dist2(x, i, j), j)).collect(), k))
        .collect())
}

/// The binned approximate kNN graph (Alg. 11, corrected per the digest's errata): row `j` goes
/// to bin `j mod bins`; for each row only the nearest row per bin is kept, and the `k` nearest of
/// those winners are its neighbours. `O(m²·d)` with one comparison per pair; equal to
/// [`knn_exact`] when `bins >= m − 1`.
///
/// # Errors
/// `k = 0`, `bins < k`, or no rows.
pub fn knn_binned(x: ArrayView2<'_, f64>, k: usize, bins: usize) -> Result<Vec<Vec<usize>>> {
    check_k(x, k)?;
    if bins < k {
        return Err(LearnError::InvalidParameter { name: "bins", reason: format!("{bins} bins < k = {k}") });
    }
    let m = x.nrows();
    Ok((0..m)
        .into_par_iter()
        .map(|i| {
            let mut best = vec![(f64::INFINITY, usize::MAX); bins];
            for j in (0..m).filter(|&j| j != i) {
                let dd = dist2(x, i, j);
                let c = &mut best[j % bins];
                if dd < c.0 {
                    *c = (dd, j);
                }
            }
            nearest_k(best.into_iter().filter(|c| c.1 != usize::MAX).collect(), k)
        })
        .collect())
}

/// Union-find with path halving and union by size.
struct Forest {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Forest {
    fn find(&mut self, mut a: usize) -> usize {
        while self.parent[a] != a {
            self.parent[a] = self.parent[self.parent[a]];
            a = self.parent[a];
        }
        a
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

/// Connected components of the undirected graph with `m` nodes and `edges`, over the nodes
/// with `active[i]`: a label per active node (numbered in order of each component's first
/// node), `None` for inactive ones. Edges touching an inactive node are ignored.
///
/// ```
/// let labels = sg_learn::graph::connected_components(5, &[(0, 1), (3, 4), (1, 2)], &[true, true, true, false, true]);
/// assert_eq!(labels, vec![Some(0), Some(0), Some(0), None, Some(1)]);
/// ```
///
/// # Panics
/// When `active.len() != m` or an edge names a node `>= m`.
pub fn connected_components(m: usize, edges: &[(usize, usize)], active: &[bool]) -> Vec<Option<usize>> {
    assert_eq!(active.len(), m, "one activity flag per node");
    let mut forest = Forest { parent: (0..m).collect(), size: vec![1; m] };
    for &(a, b) in edges {
        if active[a] && active[b] {
            forest.union(a, b);
        }
    }
    let mut label_of_root = vec![usize::MAX; m];
    let mut next = 0;
    (0..m)
        .map(|i| {
            if !active[i] {
                return None;
            }
            let r = forest.find(i);
            if label_of_root[r] == usize::MAX {
                label_of_root[r] = next;
                next += 1;
            }
            Some(label_of_root[r])
        })
        .collect()
}
