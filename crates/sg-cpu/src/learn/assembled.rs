//! `B` assembled once as a sparse matrix (CSR) by the subspace walk, for the many products of
//! a CG solve on one data set: each row holds at most one entry per subspace (thesis §7.2), so
//! storing `B` costs `m · S` entries, and a product is then a gather (`B α`) or a scatter into
//! private per-task arrays (`Bᵀ v`) per entry instead of the `O(d)` basis arithmetic per
//! entry that the matrix-free walk repeats in every iteration. Values in `f32` or `f64`.

use ndarray::ArrayView2;
use rayon::prelude::*;
use sg_core::{AdaptiveGrid, Basis, Real};

use super::check_len;
use super::subspace::SubspaceOperator;
use super::tuning::SubspaceTuning;
use crate::error::{Error, Result};

/// Rows of `B` per rayon task in `B α`.
const ROWS_PER_TASK: usize = 256;

/// `B` (`B_ij = φ_j(x_i)`, `m × N`) stored as CSR with values of type `T`; products take and
/// return `f64` vectors and compute in `T`.
///
/// ```
/// use sg_core::{AdaptiveGrid, Basis, GridSpec};
/// use sg_cpu::learn::{AssembledOperator, SubspaceOperator};
/// let grid = AdaptiveGrid::from_spec(&GridSpec::regular(3, 4)?)?;
/// let x = ndarray::Array2::from_shape_fn((40, 3), |(i, k)| ((i * 7 + k * 13) % 40) as f64 / 39.0);
/// let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
/// let (mut a, mut b) = (vec![0.0; 40], vec![0.0; 40]);
/// AssembledOperator::<f64>::new(&grid, Basis::Linear, x.view(), usize::MAX)?.mult(&alpha, &mut a)?;
/// SubspaceOperator::new(&grid, Basis::Linear, x.view(), Default::default())?.mult(&alpha, &mut b)?;
/// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct AssembledOperator<T> {
    m: usize,
    n: usize,
    /// Row `r`'s entries are `row_start[r] .. row_start[r + 1]`.
    row_start: Vec<usize>,
    column: Vec<u32>,
    value: Vec<T>,
}

impl<T: Real> AssembledOperator<T> {
    /// Bytes the matrix of `m` rows on a grid of `subspaces` subspaces needs at most.
    pub fn bytes_needed(m: usize, subspaces: usize) -> u128 {
        m as u128 * subspaces as u128 * (size_of::<u32>() + size_of::<T>()) as u128
            + (m as u128 + 1) * size_of::<usize>() as u128
    }

    /// Assembles `B` for the rows of `x` on `grid`, unless it would take more than
    /// `max_bytes` (see [`bytes_needed`](Self::bytes_needed)).
    ///
    /// # Errors
    /// As [`SubspaceOperator::new`], or [`Error::Shape`] when the matrix exceeds `max_bytes`.
    pub fn new(grid: &AdaptiveGrid, basis: Basis, x: ArrayView2<'_, f64>, max_bytes: usize) -> Result<Self> {
        let walker = SubspaceOperator::new(grid, basis, x, SubspaceTuning::DEFAULT)?;
        Self::from_walker(&walker, max_bytes)
    }

    /// Assembles `B` by one walk of an existing subspace operator.
    ///
    /// # Errors
    /// [`Error::Shape`] when the matrix exceeds `max_bytes`.
    pub fn from_walker(walker: &SubspaceOperator, max_bytes: usize) -> Result<Self> {
        let (m, n) = (walker.data_len(), walker.grid_len());
        let need = Self::bytes_needed(m, walker.subspaces());
        if need > max_bytes as u128 {
            return Err(Error::Shape(format!(
                "the assembled B needs up to {need} bytes, more than the {max_bytes} allowed"
            )));
        }
        let chunk = SubspaceTuning::DEFAULT.chunk_size;
        let parts: Vec<(Vec<u32>, Vec<u32>, Vec<T>)> = (0..m.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let (begin, len) = (c * chunk, chunk.min(m - c * chunk));
                let mut rows: Vec<Vec<(u32, T)>> = vec![Vec::new(); len];
                walker.walk_chunk(begin, len, |o, g, e| {
                    if e != 0.0 {
                        rows[o].push((g as u32, T::from_f64(e)));
                    }
                });
                let counts = rows.iter().map(|r| r.len() as u32).collect();
                let (column, value) = rows.into_iter().flatten().unzip();
                (counts, column, value)
            })
            .collect();
        let mut row_start = Vec::with_capacity(m + 1);
        row_start.push(0);
        let total: usize = parts.iter().map(|p| p.1.len()).sum();
        let (mut column, mut value) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (counts, c, v) in parts {
            for k in counts {
                row_start.push(row_start[row_start.len() - 1] + k as usize);
            }
            column.extend(c);
            value.extend(v);
        }
        Ok(AssembledOperator { m, n, row_start, column, value })
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// `m`.
    pub fn data_len(&self) -> usize {
        self.m
    }

    /// Stored entries (non-zeros of `B`).
    pub fn entries(&self) -> usize {
        self.value.len()
    }

    /// `out = B α`.
    ///
    /// # Errors
    /// `alpha.len() != N` or `out.len() != m`.
    pub fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("alpha", self.n, alpha.len())?;
        check_len("output (B alpha)", self.m, out.len())?;
        let a: Vec<T> = alpha.iter().map(|&v| T::from_f64(v)).collect();
        out.par_chunks_mut(ROWS_PER_TASK).enumerate().for_each(|(c, out)| {
            for (o, y) in out.iter_mut().enumerate() {
                let r = c * ROWS_PER_TASK + o;
                let range = self.row_start[r]..self.row_start[r + 1];
                let mut s = T::zero();
                for (&g, &e) in self.column[range.clone()].iter().zip(&self.value[range]) {
                    s += e * a[g as usize];
                }
                *y = Real::to_f64(s);
            }
        });
        Ok(())
    }

    /// `out = Bᵀ v`: rows split between a few tasks per thread, each scattering into its own
    /// array of `N`, summed at the end (no two tasks write one entry).
    ///
    /// # Errors
    /// `v.len() != m` or `out.len() != N`.
    pub fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("v", self.m, v.len())?;
        check_len("output (B^T v)", self.n, out.len())?;
        let parts = (rayon::current_num_threads() * 2).min(self.m).max(1);
        let per_part = self.m.div_ceil(parts);
        let sum = (0..parts)
            .into_par_iter()
            .map(|p| {
                let mut acc = vec![T::zero(); self.n];
                for r in p * per_part..((p + 1) * per_part).min(self.m) {
                    let vr = T::from_f64(v[r]);
                    let range = self.row_start[r]..self.row_start[r + 1];
                    for (&g, &e) in self.column[range.clone()].iter().zip(&self.value[range]) {
                        acc[g as usize] += e * vr;
                    }
                }
                acc
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += *y);
                a
            });
        match sum {
            Some(s) => out.iter_mut().zip(&s).for_each(|(o, s)| *o = Real::to_f64(*s)),
            None => out.fill(0.0),
        }
        Ok(())
    }
}
