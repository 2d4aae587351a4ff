//! [`AdaptiveGrid`]: a spatially adaptive sparse grid without boundary points, stored as a level
//! and an index vector per point, with refinement and coarsening (thesis §6.2).
//!
//! A regular grid converted by [`AdaptiveGrid::from_spec`] keeps the point order of the
//! `gp2idx` bijection, so point `j` of both is the same and values carry over unchanged. Points
//! added by refinement are appended; coarsening keeps the relative order of the points it keeps.
//!
//! ```
//! use sg_core::{AdaptiveGrid, GridSpec};
//! let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(2, 2)?)?;
//! assert_eq!(g.len(), 5);
//! let j = g.find(&[2, 1], &[3, 1]).unwrap();
//! let added = g.refine(&[j])?;            // 4 children plus the parents they need
//! assert!(added >= 4 && g.is_consistent());
//! # Ok::<(), sg_core::SgError>(())
//! ```

use std::collections::HashMap;

use ndarray::ArrayView2;

use crate::error::{Result, SgError};
use crate::reference::check_point_coords;
use crate::spec::{GridSpec, MAX_DIM, MAX_LEVEL};

/// A consistent or inconsistent set of interior sparse grid points (levels `>= 1`, odd indices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdaptiveGrid {
    d: usize,
    levels: Vec<u32>,
    indices: Vec<u32>,
    lookup: HashMap<Box<[u32]>, usize>,
}

/// The key of a point: levels then indices.
fn key(levels: &[u32], indices: &[u32]) -> Box<[u32]> {
    levels.iter().chain(indices).copied().collect()
}

/// The hierarchical parent of the 1-D point `(l > 1, i)` one level up: the odd one of
/// `(i ± 1) / 2`.
#[inline]
fn parent_index(i: u32) -> u32 {
    let up = i.div_ceil(2);
    if up % 2 == 1 { up } else { (i - 1) / 2 }
}

impl AdaptiveGrid {
    /// An empty grid in `d` dimensions.
    ///
    /// # Errors
    /// `d = 0` or `d > MAX_DIM`.
    pub fn new(d: usize) -> Result<Self> {
        if d == 0 {
            return Err(SgError::ZeroDimension);
        }
        if d > MAX_DIM {
            return Err(SgError::DimensionTooLarge { d, max: MAX_DIM });
        }
        Ok(AdaptiveGrid { d, levels: Vec::new(), indices: Vec::new(), lookup: HashMap::new() })
    }

    /// The points of a grid without boundary points, in `gp2idx` order.
    ///
    /// # Errors
    /// A grid with boundary points ([`SgError::NotAGridPoint`] names the reason), or one too
    /// large for memory.
    pub fn from_spec(spec: &GridSpec) -> Result<Self> {
        if spec.has_boundary() {
            return Err(SgError::NotAGridPoint("adaptive grids hold no boundary points".into()));
        }
        let mut g = Self::new(spec.dim())?;
        let n = spec.len_usize()?;
        g.levels.reserve(n * g.d);
        g.indices.reserve(n * g.d);
        g.lookup.reserve(n);
        let (mut lv, mut iv) = (vec![0; g.d], vec![0; g.d]);
        for j in 0..spec.len() {
            spec.idx2gp_unchecked(j, &mut lv, &mut iv);
            g.push(&lv, &iv);
        }
        Ok(g)
    }

    /// The grid holding the given points (`levels` and `indices` row-major, `d` per point).
    ///
    /// # Errors
    /// Lengths that are not a multiple of `d` or differ, a level of 0 or above
    /// [`MAX_LEVEL`], an even index or one past `2^l`, or a duplicate point.
    pub fn from_points(d: usize, levels: &[u32], indices: &[u32]) -> Result<Self> {
        let mut g = Self::new(d)?;
        if !levels.len().is_multiple_of(d) {
            return Err(SgError::NotMultiple { what: "levels", len: levels.len(), row: d });
        }
        if indices.len() != levels.len() {
            return Err(SgError::LengthMismatch {
                what: "indices",
                expected: levels.len(),
                got: indices.len(),
            });
        }
        for (lv, iv) in levels.chunks_exact(d).zip(indices.chunks_exact(d)) {
            check_point(lv, iv)?;
            if g.find(lv, iv).is_some() {
                return Err(SgError::NotAGridPoint(format!("duplicate point {lv:?} {iv:?}")));
            }
            g.push(lv, iv);
        }
        Ok(g)
    }

    fn push(&mut self, lv: &[u32], iv: &[u32]) -> usize {
        let j = self.len();
        self.levels.extend_from_slice(lv);
        self.indices.extend_from_slice(iv);
        self.lookup.insert(key(lv, iv), j);
        j
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.lookup.len()
    }

    /// True when the grid has no point.
    pub fn is_empty(&self) -> bool {
        self.lookup.is_empty()
    }

    /// The level vector of point `j`.
    ///
    /// # Panics
    /// For `j >= len()`.
    pub fn levels_of(&self, j: usize) -> &[u32] {
        &self.levels[j * self.d..(j + 1) * self.d]
    }

    /// The index vector of point `j`.
    ///
    /// # Panics
    /// For `j >= len()`.
    pub fn indices_of(&self, j: usize) -> &[u32] {
        &self.indices[j * self.d..(j + 1) * self.d]
    }

    /// All level vectors, row-major (`len · d`).
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// All index vectors, row-major (`len · d`).
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The position of point `(levels, indices)`, if present.
    pub fn find(&self, levels: &[u32], indices: &[u32]) -> Option<usize> {
        if levels.len() != self.d || indices.len() != self.d {
            return None;
        }
        self.lookup.get(&key(levels, indices)).copied()
    }

    /// The coordinates of point `j`.
    ///
    /// # Panics
    /// For `j >= len()`.
    pub fn coordinates(&self, j: usize) -> Vec<f64> {
        self.levels_of(j)
            .iter()
            .zip(self.indices_of(j))
            .map(|(&l, &i)| i as f64 / (1u64 << l) as f64)
            .collect()
    }

    /// The child of point `j` in dimension `t` on the left (`right = false`) or right, if
    /// present.
    ///
    /// # Panics
    /// For `j >= len()` or `t >= d`.
    pub fn child(&self, j: usize, t: usize, right: bool) -> Option<usize> {
        let (mut lv, mut iv) = (self.levels_of(j).to_vec(), self.indices_of(j).to_vec());
        lv[t] += 1;
        iv[t] = if right { 2 * iv[t] + 1 } else { 2 * iv[t] - 1 };
        self.find(&lv, &iv)
    }

    /// The parent of point `j` in dimension `t` (one level up), or `None` at level 1 or when
    /// missing.
    ///
    /// # Panics
    /// For `j >= len()` or `t >= d`.
    pub fn parent(&self, j: usize, t: usize) -> Option<usize> {
        let (mut lv, mut iv) = (self.levels_of(j).to_vec(), self.indices_of(j).to_vec());
        if lv[t] == 1 {
            return None;
        }
        lv[t] -= 1;
        iv[t] = parent_index(iv[t]);
        self.find(&lv, &iv)
    }

    /// True when point `j` has no child in the grid.
    ///
    /// # Panics
    /// For `j >= len()`.
    pub fn is_leaf(&self, j: usize) -> bool {
        (0..self.d).all(|t| self.child(j, t, false).is_none() && self.child(j, t, true).is_none())
    }

    /// True when every point's parents (in every dimension with level `> 1`) are present.
    pub fn is_consistent(&self) -> bool {
        (0..self.len()).all(|j| (0..self.d).all(|t| self.levels_of(j)[t] == 1 || self.parent(j, t).is_some()))
    }

    /// Adds `(levels, indices)` and, recursively, its missing parents. Returns the number of
    /// points added.
    fn insert_with_parents(&mut self, lv: &mut [u32], iv: &mut [u32]) -> usize {
        if self.find(lv, iv).is_some() {
            return 0;
        }
        self.push(lv, iv);
        let mut added = 1;
        for t in 0..self.d {
            if lv[t] > 1 {
                let (l, i) = (lv[t], iv[t]);
                lv[t] = l - 1;
                iv[t] = parent_index(i);
                added += self.insert_with_parents(lv, iv);
                lv[t] = l;
                iv[t] = i;
            }
        }
        added
    }

    /// Refines the given points: adds their `2d` children (left and right in every dimension)
    /// and every parent those children need for consistency. Returns the number of points added.
    ///
    /// # Errors
    /// A point number past `len()`, or a child beyond [`MAX_LEVEL`].
    pub fn refine(&mut self, points: &[usize]) -> Result<usize> {
        let len = self.len();
        if let Some(&bad) = points.iter().find(|&&j| j >= len) {
            return Err(SgError::IndexOutOfRange { what: "grid point", idx: bad as u64, len: len as u64 });
        }
        let mut added = 0;
        for &j in points {
            let (lv0, iv0) = (self.levels_of(j).to_vec(), self.indices_of(j).to_vec());
            for t in 0..self.d {
                if lv0[t] >= MAX_LEVEL {
                    return Err(SgError::LevelTooLarge { n: lv0[t] + 1, max: MAX_LEVEL });
                }
                for right in [false, true] {
                    let (mut lv, mut iv) = (lv0.clone(), iv0.clone());
                    lv[t] += 1;
                    iv[t] = if right { 2 * iv[t] + 1 } else { 2 * iv[t] - 1 };
                    added += self.insert_with_parents(&mut lv, &mut iv);
                }
            }
        }
        Ok(added)
    }

    /// Surplus refinement (thesis §6.2): refines the `count` points with the largest `|α|` among
    /// those that still miss a child. Returns the number of points added.
    ///
    /// # Errors
    /// `alpha.len() != len()`, a non-finite surplus, or a child beyond [`MAX_LEVEL`].
    pub fn refine_surplus(&mut self, alpha: &[f64], count: usize) -> Result<usize> {
        if alpha.len() != self.len() {
            return Err(SgError::LengthMismatch {
                what: "surpluses",
                expected: self.len(),
                got: alpha.len(),
            });
        }
        if let Some((j, &a)) = alpha.iter().enumerate().find(|(_, a)| !a.is_finite()) {
            return Err(SgError::NonFinite { row: j, dim: 0, value: a });
        }
        let mut order: Vec<usize> = (0..self.len()).filter(|&j| !self.is_full(j)).collect();
        order.sort_by(|&a, &b| alpha[b].abs().total_cmp(&alpha[a].abs()).then(a.cmp(&b)));
        order.truncate(count);
        self.refine(&order)
    }

    /// True when point `j` has all `2d` children.
    fn is_full(&self, j: usize) -> bool {
        (0..self.d).all(|t| self.child(j, t, false).is_some() && self.child(j, t, true).is_some())
    }

    /// Support refinement (thesis Alg. 1): starting from the root, keeps a child when more than
    /// `threshold` data points lie in the open support of its function (where the hat is
    /// positive), down to points with `|l|_1 − d < max_level`. Solver-free; the result is
    /// consistent because children's supports partition their parent's.
    ///
    /// ```
    /// use sg_core::AdaptiveGrid;
    /// let x = ndarray::Array2::from_shape_fn((400, 2), |(i, t)| 0.1 + 0.3 * ((i * (t + 7)) % 97) as f64 / 97.0);
    /// let g = AdaptiveGrid::support_refinement(x.view(), 5, 10)?;
    /// assert!(g.is_consistent() && g.len() > 1);
    /// # Ok::<(), sg_core::SgError>(())
    /// ```
    ///
    /// # Errors
    /// Zero columns, points outside `[0, 1]^d` or not finite, `max_level` 0 or above
    /// [`MAX_LEVEL`].
    pub fn support_refinement(x: ArrayView2<'_, f64>, max_level: u32, threshold: usize) -> Result<Self> {
        let d = x.ncols();
        let mut g = Self::new(d)?;
        if max_level == 0 || max_level > MAX_LEVEL {
            return Err(SgError::LevelTooLarge { n: max_level, max: MAX_LEVEL });
        }
        for (row, p) in x.rows().into_iter().enumerate() {
            check_point_coords(d, &p.to_vec(), row)?;
        }
        if x.nrows() <= threshold {
            return Ok(g);
        }
        let mut candidates = vec![g.push(&vec![1; d], &vec![1; d])];
        for _ in 1..max_level {
            let mut next = Vec::new();
            for &j in &candidates {
                let (lv0, iv0) = (g.levels_of(j).to_vec(), g.indices_of(j).to_vec());
                for t in 0..d {
                    for right in [false, true] {
                        let (mut lv, mut iv) = (lv0.clone(), iv0.clone());
                        lv[t] += 1;
                        iv[t] = if right { 2 * iv[t] + 1 } else { 2 * iv[t] - 1 };
                        if g.find(&lv, &iv).is_none() && count_support(x, &lv, &iv) > threshold {
                            next.push(g.push(&lv, &iv));
                        }
                    }
                }
            }
            candidates = next;
        }
        Ok(g)
    }

    /// Weight-support coarsening (thesis Eq. 6.15): removes the leaves whose `weights` entry is
    /// below `threshold` (one pass; the root stays so the grid is never empty). Returns the old
    /// numbers of the points kept, in their new order, to carry values over.
    ///
    /// # Errors
    /// `weights.len() != len()`.
    pub fn coarsen(&mut self, weights: &[f64], threshold: f64) -> Result<Vec<usize>> {
        if weights.len() != self.len() {
            return Err(SgError::LengthMismatch {
                what: "weights",
                expected: self.len(),
                got: weights.len(),
            });
        }
        let keep: Vec<usize> = (0..self.len())
            .filter(|&j| {
                let root = self.levels_of(j).iter().all(|&l| l == 1);
                root || !(weights[j] < threshold && self.is_leaf(j))
            })
            .collect();
        let mut g = Self::new(self.d)?;
        for &j in &keep {
            g.push(self.levels_of(j), self.indices_of(j));
        }
        *self = g;
        Ok(keep)
    }
}

/// Checks one point: levels in `1..=MAX_LEVEL`, odd indices below `2^l`.
fn check_point(lv: &[u32], iv: &[u32]) -> Result<()> {
    for (&l, &i) in lv.iter().zip(iv) {
        if l == 0 || l > MAX_LEVEL || i % 2 == 0 || i as u64 >= 1u64 << l {
            return Err(SgError::NotAGridPoint(format!("levels {lv:?}, indices {iv:?}")));
        }
    }
    Ok(())
}

/// Number of rows of `x` strictly inside the support of point `(lv, iv)`.
fn count_support(x: ArrayView2<'_, f64>, lv: &[u32], iv: &[u32]) -> usize {
    x.rows()
        .into_iter()
        .filter(|p| {
            p.iter().zip(lv.iter().zip(iv)).all(|(&xv, (&l, &i))| {
                let h = 1.0 / (1u64 << l) as f64;
                xv > (i - 1) as f64 * h && xv < (i + 1) as f64 * h
            })
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_grids_are_consistent_and_keep_the_bijection_order() {
        let spec = GridSpec::regular(3, 4).unwrap();
        let g = AdaptiveGrid::from_spec(&spec).unwrap();
        assert_eq!(g.len() as u64, spec.len());
        assert!(g.is_consistent());
        for j in 0..g.len() {
            assert_eq!(spec.gp2idx(g.levels_of(j), g.indices_of(j)).unwrap(), j as u64);
        }
    }

    #[test]
    fn a_point_without_its_parent_is_inconsistent() {
        let g = AdaptiveGrid::from_points(2, &[1, 1, 1, 3], &[1, 1, 1, 5]).unwrap();
        assert!(!g.is_consistent());
        assert!(AdaptiveGrid::from_points(2, &[1, 1, 1, 1], &[1, 1, 1, 1]).is_err());
        assert!(AdaptiveGrid::from_points(2, &[1, 2], &[1, 2]).is_err());
        assert!(AdaptiveGrid::from_points(2, &[0, 1], &[1, 1]).is_err());
    }

    #[test]
    fn refinement_adds_children_and_missing_parents() {
        let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(2, 2).unwrap()).unwrap();
        let root = g.find(&[1, 1], &[1, 1]).unwrap();
        assert_eq!(g.refine(&[root]).unwrap(), 0); // all four children exist already
        // Refined in dimension 0 only: root, (2,1)|(1,1), (2,1)|(3,1).
        let mut g = AdaptiveGrid::from_points(2, &[1, 1, 2, 1, 2, 1], &[1, 1, 1, 1, 3, 1]).unwrap();
        assert!(g.is_consistent());
        let j = g.find(&[2, 1], &[1, 1]).unwrap();
        // Four children; the two in dimension 1, (2,2)|(1,1) and (2,2)|(1,3), need their
        // dimension-0 parents (1,2)|(1,1) and (1,2)|(1,3).
        assert_eq!(g.refine(&[j]).unwrap(), 6);
        assert!(g.is_consistent());
        assert!(g.find(&[1, 2], &[1, 3]).is_some());
        assert!(g.refine(&[99]).is_err());
    }

    #[test]
    fn surplus_refinement_picks_the_largest_surpluses() {
        let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(1, 2).unwrap()).unwrap();
        let right = g.find(&[2], &[3]).unwrap();
        let mut alpha = vec![0.0; g.len()];
        alpha[right] = -5.0;
        assert_eq!(g.refine_surplus(&alpha, 1).unwrap(), 2);
        assert!(g.find(&[3], &[5]).is_some() && g.find(&[3], &[7]).is_some());
        assert!(g.find(&[3], &[1]).is_none());
        assert!(g.refine_surplus(&[1.0], 1).is_err());
    }

    #[test]
    fn support_refinement_follows_the_data() {
        // All data in [0, 0.25): only the left branch is refined.
        let x = ndarray::Array2::from_shape_fn((200, 1), |(i, _)| 0.001 + 0.24 * i as f64 / 200.0);
        let g = AdaptiveGrid::support_refinement(x.view(), 4, 5).unwrap();
        assert!(g.is_consistent());
        for j in 0..g.len() {
            let c = g.coordinates(j)[0];
            assert!(c <= 0.5, "point at {c}");
        }
        assert!(g.find(&[4], &[1]).is_some());
        // |l|_1 - d < max_level
        assert!((0..g.len()).all(|j| g.levels_of(j)[0] <= 4));
        let few = AdaptiveGrid::support_refinement(x.view(), 4, 500).unwrap();
        assert!(few.is_empty());
        let bad = ndarray::array![[1.5]];
        assert!(AdaptiveGrid::support_refinement(bad.view(), 4, 0).is_err());
    }

    #[test]
    fn coarsening_removes_light_leaves_only() {
        let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(1, 3).unwrap()).unwrap();
        let w: Vec<f64> = (0..g.len())
            .map(|j| if g.levels_of(j)[0] == 3 && g.indices_of(j)[0] < 4 { 0.0 } else { 1.0 })
            .collect();
        let kept = g.coarsen(&w, 0.5).unwrap();
        assert_eq!(g.len(), 5);
        assert_eq!(kept.len(), 5);
        assert!(g.is_consistent());
        assert!(g.find(&[3], &[1]).is_none() && g.find(&[3], &[5]).is_some());
        // non-leaves survive whatever their weight
        let mut g2 = AdaptiveGrid::from_spec(&GridSpec::regular(1, 2).unwrap()).unwrap();
        g2.coarsen(&[0.0, 0.0, 0.0], 1.0).unwrap();
        assert_eq!(g2.len(), 1);
    }
}
