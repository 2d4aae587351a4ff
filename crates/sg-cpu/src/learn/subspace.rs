//! The subspace algorithm (thesis §7.2, Algs. 6–8) on the CPU.
//!
//! The grid is regrouped by level vector into subspaces in lexicographic order, each a dense
//! array over its `2^{|l|_1 − d}` possible points holding the grid number of the point or
//! [`MISSING`]. For a data point and a subspace only one function can be non-zero (the one of
//! the nearest odd index in every dimension), so an evaluation costs `O(d)` per subspace instead
//! of `O(d)` per grid point. Three optimisations are switchable ([`SubspaceTuning`]):
//!
//! * chunking: a chunk of data points walks the subspaces together, so a subspace's array is
//!   read once per chunk;
//! * subspace skipping: when the candidate point is missing, every child subspace (`l' >= l`
//!   componentwise) misses it too on a consistent grid, so the point jumps to the next subspace
//!   that is not a child (only used when the grid is consistent);
//! * reuse of intermediates: consecutive subspaces often share leading levels, so the prefix
//!   products and prefix flat indices of those dimensions are kept. After a skip the valid prefix
//!   is the minimum over every transition jumped over (digest §8.4's trap).
//!
//! The transposed operator traverses the same way and accumulates into one private array per
//! rayon task, summed at the end: no two threads ever write the same entry, so it needs neither
//! locks nor atomics.

use ndarray::ArrayView2;
use rayon::prelude::*;
use sg_core::basis::BELOW_ONE;
use sg_core::spec::MAX_DIM;
use sg_core::{AdaptiveGrid, Basis};

use super::tuning::SubspaceTuning;
use super::{check_len, check_operator_input};
use crate::error::{Error, Result};

mod lockstep;

use lockstep::Last;

/// Marks a possible point of a subspace that the grid does not hold.
pub const MISSING: u32 = u32::MAX;

/// Largest total size of the dense subspace arrays (entries).
const MAX_SLOTS: usize = 1 << 30;

/// `B` and `Bᵀ` by the subspace algorithm, for one data set and one grid.
#[derive(Debug, Clone)]
pub struct SubspaceOperator {
    d: usize,
    m: usize,
    n: usize,
    basis: Basis,
    /// Data row-major, `x = 1` kept (the index is computed from `min(x, BELOW_ONE)`).
    data: Vec<f64>,
    /// Level vectors of the subspaces, `S · d`, lexicographic.
    levels: Vec<u32>,
    /// Start of each subspace's array in `slots` (`S + 1` entries).
    offsets: Vec<usize>,
    slots: Vec<u32>,
    /// First subspace after `s` that is not a child of `s` (`S` when none).
    skip: Vec<usize>,
    /// First dimension where subspace `s` differs from `s − 1` (0 for the first).
    changed: Vec<usize>,
    /// Minimum of `changed` over `s + 1 ..= skip[s]`.
    skip_changed: Vec<usize>,
    consistent: bool,
    /// Every possible point of every subspace is in the grid (a regular grid): no point can
    /// skip, so a chunk walks in lockstep.
    full: bool,
    /// Deepest level per dimension (rows of the lockstep walk's tables).
    max_level: Vec<u32>,
    /// Slot of each grid point, when the subspace arrays are at most [`DENSE_RATIO`] times
    /// the grid: the lockstep products then gather from and scatter into vectors in slot
    /// order, without the slot-to-grid-point indirection and its test for missing points.
    position: Option<Vec<u32>>,
    tuning: SubspaceTuning,
}

/// Largest ratio of slots to grid points for which products run in slot order.
const DENSE_RATIO: usize = 4;

/// Per data point state while a chunk walks the subspaces.
struct Walk {
    next: Vec<usize>,
    valid: Vec<usize>,
    prod: Vec<f64>,
    flat: Vec<usize>,
}

impl SubspaceOperator {
    /// The operator for the rows of `x` on `grid`.
    ///
    /// # Errors
    /// As [`StreamingOperator::new`](super::StreamingOperator::new), plus subspace arrays of more
    /// than 2^30 entries in total (a very deep adaptive grid).
    pub fn new(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        tuning: SubspaceTuning,
    ) -> Result<Self> {
        check_operator_input(grid, x)?;
        tuning.check()?;
        let (d, m, n) = (grid.dim(), x.nrows(), grid.len());
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| grid.levels_of(a).cmp(grid.levels_of(b)));
        let mut op = SubspaceOperator {
            d,
            m,
            n,
            basis,
            data: x.iter().copied().collect(),
            levels: Vec::new(),
            offsets: vec![0],
            slots: Vec::new(),
            skip: Vec::new(),
            changed: Vec::new(),
            skip_changed: Vec::new(),
            consistent: grid.is_consistent(),
            full: false,
            max_level: vec![1; d],
            position: None,
            tuning,
        };
        for &g in &order {
            let l = grid.levels_of(g);
            if op.levels.len() < d || &op.levels[op.levels.len() - d..] != l {
                op.push_subspace(l)?;
            }
            let start = op.offsets[op.offsets.len() - 2];
            let f = flat_index(l, grid.indices_of(g));
            op.slots[start + f] = g as u32;
        }
        op.annotate();
        op.full = !op.slots.contains(&MISSING);
        for l in op.levels.chunks(d) {
            op.max_level.iter_mut().zip(l).for_each(|(m, &l)| *m = (*m).max(l));
        }
        if op.slots.len() <= DENSE_RATIO * n {
            let mut position = vec![0u32; n];
            for (slot, &g) in op.slots.iter().enumerate() {
                if g != MISSING {
                    position[g as usize] = slot as u32;
                }
            }
            op.position = Some(position);
        }
        Ok(op)
    }

    fn push_subspace(&mut self, l: &[u32]) -> Result<()> {
        let exp: u32 = l.iter().map(|&v| v - 1).sum();
        let size = 1usize.checked_shl(exp).filter(|&s| s > 0 && exp < 31);
        let total = size.and_then(|s| s.checked_add(self.slots.len())).filter(|&t| t <= MAX_SLOTS);
        let Some(total) = total else {
            return Err(Error::Shape(format!(
                "subspace arrays exceed 2^30 entries (level sum {})",
                exp as usize + self.d
            )));
        };
        self.levels.extend_from_slice(l);
        self.slots.resize(total, MISSING);
        self.offsets.push(total);
        Ok(())
    }

    /// Skip targets and first-changed dimensions (digest §12.1).
    fn annotate(&mut self) {
        let (d, s_count) = (self.d, self.offsets.len() - 1);
        let lv = |s: usize| &self.levels[s * d..(s + 1) * d];
        self.changed = (0..s_count)
            .map(|s| if s == 0 { 0 } else { (0..d).find(|&k| lv(s)[k] != lv(s - 1)[k]).unwrap_or(d) })
            .collect();
        self.skip = (0..s_count)
            .map(|s| {
                (s + 1..s_count).find(|&t| lv(t).iter().zip(lv(s)).any(|(a, b)| a < b)).unwrap_or(s_count)
            })
            .collect();
        self.skip_changed = (0..s_count)
            .map(|s| (s + 1..=self.skip[s].min(s_count - 1)).map(|t| self.changed[t]).min().unwrap_or(0))
            .collect();
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// `m`.
    pub fn data_len(&self) -> usize {
        self.m
    }

    /// Number of subspaces.
    pub fn subspaces(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The level vector of subspace `s` (lexicographic order).
    ///
    /// # Panics
    /// For `s >= subspaces()`.
    pub fn subspace_levels(&self, s: usize) -> &[u32] {
        &self.levels[s * self.d..(s + 1) * self.d]
    }

    /// The skip target of subspace `s` (`subspaces()` for "done").
    ///
    /// # Panics
    /// For `s >= subspaces()`.
    pub fn skip_target(&self, s: usize) -> usize {
        self.skip[s]
    }

    /// The first dimension (0-based) where subspace `s` differs from `s − 1`.
    ///
    /// # Panics
    /// For `s >= subspaces()`.
    pub fn first_changed(&self, s: usize) -> usize {
        self.changed[s]
    }

    /// `out = B α`.
    ///
    /// # Errors
    /// `alpha.len() != N` or `out.len() != m`.
    pub fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("alpha", self.n, alpha.len())?;
        check_len("output (B alpha)", self.m, out.len())?;
        let chunk = self.tuning.chunk_size;
        if self.position.is_some() && self.lockstep() {
            let a: Vec<f64> =
                self.slots.iter().map(|&g| if g == MISSING { 0.0 } else { alpha[g as usize] }).collect();
            out.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
                out.fill(0.0);
                self.walk_lockstep(c * chunk, out.len(), |_, last| last.gather(&a, out));
            });
        } else {
            out.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
                out.fill(0.0);
                self.walk(c * chunk, out.len(), |o, g, e| out[o] += alpha[g] * e);
            });
        }
        Ok(())
    }

    /// `out = Bᵀ v`.
    ///
    /// # Errors
    /// `v.len() != m` or `out.len() != N`.
    pub fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("v", self.m, v.len())?;
        check_len("output (B^T v)", self.n, out.len())?;
        match (&self.position, self.lockstep()) {
            (Some(position), true) => {
                let acc = self.accumulate(self.slots.len(), |begin, len, acc| {
                    let v = &v[begin..begin + len];
                    self.walk_lockstep(begin, len, |_, last| last.scatter(v, acc));
                });
                out.iter_mut().zip(position).for_each(|(o, &p)| *o = acc[p as usize]);
            }
            _ => {
                let acc = self.accumulate(self.n, |begin, len, acc| {
                    self.walk(begin, len, |o, g, e| acc[g] += v[begin + o] * e);
                });
                out.copy_from_slice(&acc);
            }
        }
        Ok(())
    }

    /// Runs `add(begin, len, acc)` over the chunks of data points in a few rayon tasks per
    /// thread, each adding into its own zeroed array of `size`, and returns their sum: no two
    /// tasks write one entry, so the transposed products need neither locks nor atomics.
    fn accumulate(&self, size: usize, add: impl Fn(usize, usize, &mut [f64]) + Sync) -> Vec<f64> {
        let chunk = self.tuning.chunk_size;
        let parts = (rayon::current_num_threads() * 2).min(self.m.div_ceil(chunk)).max(1);
        let per_part = self.m.div_ceil(chunk).div_ceil(parts) * chunk;
        (0..parts)
            .into_par_iter()
            .map(|p| {
                let mut acc = vec![0.0; size];
                let end = ((p + 1) * per_part).min(self.m);
                let mut begin = p * per_part;
                while begin < end {
                    let len = chunk.min(end - begin);
                    add(begin, len, &mut acc);
                    begin += len;
                }
                acc
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            })
            .unwrap_or_else(|| vec![0.0; size])
    }

    /// Whether the walk runs in lockstep (see [`walk`](Self::walk)).
    fn lockstep(&self) -> bool {
        self.full || !(self.tuning.skipping && self.consistent)
    }

    /// [`walk`](Self::walk) for the assembled operator, which records what it visits.
    pub(super) fn walk_chunk(&self, begin: usize, len: usize, visit: impl FnMut(usize, usize, f64)) {
        self.walk(begin, len, visit);
    }

    /// Walks the chunk of data points `begin .. begin + len` over the subspaces and calls
    /// `visit(o, g, φ_g(x_o))` for every grid point `g` whose function is the candidate of point
    /// `o` (chunk-relative).
    ///
    /// Without skipping (or on a full grid, where nothing can be skipped) every point of the
    /// chunk visits every subspace, so the chunk moves in lockstep and the loops can be swapped
    /// (subspaces outside, points inside: SIMD over points, [`walk_lockstep`](Self::walk_lockstep));
    /// with skipping each point keeps its own position ([`walk_points`](Self::walk_points)).
    fn walk(&self, begin: usize, len: usize, mut visit: impl FnMut(usize, usize, f64)) {
        if self.lockstep() {
            self.walk_lockstep(begin, len, |_, last: Last<'_>| {
                last.for_each(|o, slot, e| {
                    let g = self.slots[slot];
                    if g != MISSING {
                        visit(o, g as usize, e);
                    }
                });
            });
        } else {
            self.walk_points(begin, len, visit);
        }
    }

    /// The walk with per-point positions (subspace skipping).
    fn walk_points(&self, begin: usize, len: usize, mut visit: impl FnMut(usize, usize, f64)) {
        let d = self.d;
        let s_count = self.subspaces();
        let skipping = self.tuning.skipping && self.consistent;
        let mut w = Walk {
            next: vec![0; len],
            valid: vec![0; len],
            prod: vec![1.0; len * (d + 1)],
            flat: vec![0; len * (d + 1)],
        };
        for s in 0..s_count {
            let l = self.subspace_levels(s);
            let scales: [f64; MAX_DIM] =
                std::array::from_fn(|k| if k < d { (1u64 << l[k]) as f64 } else { 0.0 });
            let slots = &self.slots[self.offsets[s]..self.offsets[s + 1]];
            for o in 0..len {
                if w.next[o] != s {
                    continue;
                }
                let x = &self.data[(begin + o) * d..(begin + o + 1) * d];
                let (prod, flat) = (&mut w.prod[o * (d + 1)..], &mut w.flat[o * (d + 1)..]);
                let from = if self.tuning.reuse_intermediates { w.valid[o] } else { 0 };
                for k in from..d {
                    let (l, scale) = (l[k], scales[k]);
                    let t = scale * x[k];
                    let i = (scale * x[k].min(BELOW_ONE)) as u32 | 1;
                    prod[k + 1] = prod[k] * phi(self.basis, l, i, t);
                    flat[k + 1] = (flat[k] << (l - 1)) + (i >> 1) as usize;
                }
                let g = slots[flat[d]];
                let (target, keep) = if g != MISSING {
                    visit(o, g as usize, prod[d]);
                    (s + 1, self.changed.get(s + 1).copied().unwrap_or(0))
                } else if skipping {
                    (self.skip[s], self.skip_changed[s])
                } else {
                    (s + 1, self.changed.get(s + 1).copied().unwrap_or(0))
                };
                w.next[o] = target;
                w.valid[o] = keep;
            }
        }
    }
}

/// The 1-D function `(l, i)` at `t = 2^l·x` (`i` the nearest odd index, so only the outermost
/// modified functions need their own formula: thesis Eq. 6.13 with its branches, which are on
/// `(l, i)` and predictable, not on `x`).
#[inline(always)]
fn phi(basis: Basis, l: u32, i: u32, t: f64) -> f64 {
    let hat = (1.0 - (t - i as f64).abs()).max(0.0);
    match basis {
        Basis::Linear => hat,
        Basis::ModifiedLinear if l == 1 => 1.0,
        Basis::ModifiedLinear if i == 1 => (2.0 - t).max(0.0),
        Basis::ModifiedLinear if i as u64 == (1u64 << l) - 1 => (t + 1.0 - i as f64).max(0.0),
        Basis::ModifiedLinear => hat,
    }
}

/// Position of `indices` inside the subspace array of `levels` (Horner, dimension 0 most
/// significant).
fn flat_index(levels: &[u32], indices: &[u32]) -> usize {
    levels.iter().zip(indices).fold(0usize, |acc, (&l, &i)| (acc << (l - 1)) + (i >> 1) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sg_core::GridSpec;

    #[test]
    fn skip_targets_and_changed_dimensions_match_the_digest() {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 3).unwrap()).unwrap();
        let x = ndarray::array![[0.3, 0.7]];
        let op = SubspaceOperator::new(&grid, Basis::Linear, x.view(), SubspaceTuning::default()).unwrap();
        let want = [[1, 1], [1, 2], [1, 3], [2, 1], [2, 2], [3, 1]];
        assert_eq!(op.subspaces(), 6);
        for (s, l) in want.iter().enumerate() {
            assert_eq!(op.subspace_levels(s), l);
        }
        assert_eq!((0..6).map(|s| op.skip_target(s)).collect::<Vec<_>>(), [6, 3, 3, 6, 5, 6]);
        assert_eq!((1..6).map(|s| op.first_changed(s) + 1).collect::<Vec<_>>(), [2, 2, 1, 2, 1]);
    }

    #[test]
    fn flat_indices_match_the_digest() {
        assert_eq!(flat_index(&[2, 3], &[3, 5]), 6);
        assert_eq!(flat_index(&[3, 2], &[7, 3]), 7);
        assert_eq!(flat_index(&[1, 1], &[1, 1]), 0);
    }
}
