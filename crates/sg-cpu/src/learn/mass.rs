//! The L2 mass matrix of a grid of linear hats (thesis Alg. 10) and the density right-hand side
//! (Alg. 9).

use hetero_sched::tune::dispatch::Tunable;
use rayon::prelude::*;
use sg_core::{AdaptiveGrid, Basis};

use super::check_len;
use super::streaming::StreamingOperator;
use super::tuning::StreamTuning;
use crate::error::{Error, Result};

/// `R v` with `R_ij = ∏_k (φ_{l_ik, i_ik}, φ_{l_jk, i_jk})_{L2[0,1]}` computed on the fly:
/// `O(N²·d)` per product, no `N × N` storage.
#[derive(Debug, Clone)]
pub struct MassMatrix {
    d: usize,
    n: usize,
    /// Per point and dimension: `2^l`, `i`, `h = 2^−l`, centre `i·h` (point-major).
    factor: Vec<f64>,
    index: Vec<f64>,
    width: Vec<f64>,
    centre: Vec<f64>,
}

impl MassMatrix {
    /// The mass matrix of `grid`.
    ///
    /// # Errors
    /// An empty grid.
    pub fn new(grid: &AdaptiveGrid) -> Result<Self> {
        if grid.is_empty() {
            return Err(Error::Shape("the grid has no point".into()));
        }
        let levels = grid.levels().iter();
        let factor: Vec<f64> = levels.clone().map(|&l| (1u64 << l) as f64).collect();
        let index: Vec<f64> = grid.indices().iter().map(|&i| i as f64).collect();
        let width: Vec<f64> = factor.iter().map(|f| 1.0 / f).collect();
        let centre = index.iter().zip(&width).map(|(i, h)| i * h).collect();
        Ok(MassMatrix { d: grid.dim(), n: grid.len(), factor, index, width, centre })
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// One entry `R_ij`.
    ///
    /// # Panics
    /// For `i` or `j` at or past `N`.
    #[inline]
    pub fn entry(&self, i: usize, j: usize) -> f64 {
        let (a, b) = (i * self.d, j * self.d);
        let mut r = 1.0;
        for k in 0..self.d {
            let (p, q) = (a + k, b + k);
            let same = self.factor[p] == self.factor[q] && self.index[p] == self.index[q];
            let eq = 2.0 / 3.0 * self.width[p];
            let hat = |x: f64| (1.0 - x.abs()).max(0.0);
            let other = self.width[q] * hat(self.factor[p] * self.centre[q] - self.index[p])
                + self.width[p] * hat(self.factor[q] * self.centre[p] - self.index[q]);
            r *= if same { eq } else { other };
            if r == 0.0 {
                break; // disjoint supports in this dimension: the rest cannot change the product
            }
        }
        r
    }

    /// `out = R v`.
    ///
    /// # Errors
    /// `v.len() != N` or `out.len() != N`.
    pub fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("v", self.n, v.len())?;
        check_len("output (R v)", self.n, out.len())?;
        out.par_iter_mut().enumerate().for_each(|(i, o)| {
            *o = (0..self.n).map(|j| self.entry(i, j) * v[j]).sum();
        });
        Ok(())
    }
}

/// The density right-hand side `b_i = (1/m) Σ_j φ_i(x_j)` (linear hats), by streaming
/// (`Bᵀ 1 / m`), with the streaming parameters tuned for the problem (else the defaults).
///
/// # Errors
/// As [`StreamingOperator::new`].
pub fn density_rhs(grid: &AdaptiveGrid, x: ndarray::ArrayView2<'_, f64>) -> Result<Vec<f64>> {
    let op =
        StreamingOperator::new(grid, Basis::Linear, x, StreamTuning::tuned::<f64>((grid.len(), x.nrows())))?;
    let m = x.nrows();
    let mut b = vec![0.0; grid.len()];
    op.mult_transpose(&vec![1.0 / m as f64; m], &mut b)?;
    Ok(b)
}
