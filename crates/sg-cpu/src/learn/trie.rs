//! `B α` on a regular grid of linear hats by `sg-cpu`'s batched evaluation ([`Evaluator`]).
//!
//! `(B α)_i = Σ_j α_j φ_j(x_i)` is the sparse grid interpolant with surpluses `α` at the data
//! point `x_i`, so the evaluator's trie of blocks (shared prefix products and positions, point
//! tiles) computes it. The evaluator knows regular grids ([`GridSpec`]) and the hat basis only,
//! so this operator exists for exactly those; an [`AdaptiveGrid`] qualifies when it holds
//! every point of a regular grid (in any order: `α` is permuted into the bijection's order
//! when the grid's order differs). `Bᵀ v` is not an evaluation and stays with the other
//! operators.

use ndarray::{Array2, ArrayView2};
use sg_core::{AdaptiveGrid, Basis, GridSpec};

use super::{check_len, check_operator_input};
use crate::error::{Error, Result};
use crate::evaluate::{EvalTuning, Evaluator};

/// `B α` by the evaluation trie, for one data set and one regular grid of linear hats.
///
/// ```
/// use sg_core::{AdaptiveGrid, Basis, GridSpec};
/// use sg_cpu::learn::{SubspaceOperator, TrieOperator};
/// let grid = AdaptiveGrid::from_spec(&GridSpec::regular(3, 4)?)?;
/// let x = ndarray::Array2::from_shape_fn((40, 3), |(i, k)| ((i * 7 + k * 13) % 40) as f64 / 39.0);
/// let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
/// let (mut a, mut b) = (vec![0.0; 40], vec![0.0; 40]);
/// TrieOperator::new(&grid, Basis::Linear, x.view())?.mult(&alpha, &mut a)?;
/// SubspaceOperator::new(&grid, Basis::Linear, x.view(), Default::default())?.mult(&alpha, &mut b)?;
/// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TrieOperator {
    n: usize,
    data: Array2<f64>,
    evaluator: Evaluator,
    /// The bijection's index of grid point `g`; `None` when the grid is in the bijection's
    /// order already (a grid made by [`AdaptiveGrid::from_spec`]).
    position: Option<Vec<usize>>,
    /// The evaluator's parameters; `None`: its own dispatch (tuned per batch size,
    /// `hetkit tune kernel sg_eval`, else [`EvalTuning::DEFAULT`]).
    tuning: Option<EvalTuning>,
}

impl TrieOperator {
    /// Whether [`new`](Self::new) accepts `grid` and `basis`: the linear basis on a grid
    /// holding every point of a regular grid.
    pub fn supports(grid: &AdaptiveGrid, basis: Basis) -> bool {
        basis == Basis::Linear && regular_spec(grid).is_some()
    }

    /// The operator for the rows of `x` on `grid`.
    ///
    /// # Errors
    /// As [`StreamingOperator::new`](super::StreamingOperator::new), and [`Error::Shape`]
    /// for the modified basis or a grid that is not regular (see [`supports`](Self::supports)).
    pub fn new(grid: &AdaptiveGrid, basis: Basis, x: ArrayView2<'_, f64>) -> Result<Self> {
        check_operator_input(grid, x)?;
        if basis != Basis::Linear {
            return Err(Error::Shape("the evaluation trie has the linear hat basis only".into()));
        }
        let Some(spec) = regular_spec(grid) else {
            return Err(Error::Shape("the evaluation trie needs a regular grid".into()));
        };
        let (mut identity, mut position) = (true, Vec::with_capacity(grid.len()));
        for g in 0..grid.len() {
            let p = spec.gp2idx_unchecked(grid.levels_of(g), grid.indices_of(g)) as usize;
            identity &= p == g;
            position.push(p);
        }
        Ok(TrieOperator {
            n: grid.len(),
            data: x.to_owned(),
            evaluator: Evaluator::new(&spec)?,
            position: (!identity).then_some(position),
            tuning: None,
        })
    }

    /// The same operator with the evaluator's parameters fixed to `tuning`.
    pub fn with_tuning(self, tuning: EvalTuning) -> Self {
        TrieOperator { tuning: Some(tuning), ..self }
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// `m`.
    pub fn data_len(&self) -> usize {
        self.data.nrows()
    }

    /// `out = B α`.
    ///
    /// # Errors
    /// `alpha.len() != N` or `out.len() != m`.
    pub fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("alpha", self.n, alpha.len())?;
        check_len("output (B alpha)", self.data_len(), out.len())?;
        let evaluate = |values: &[f64]| match &self.tuning {
            None => self.evaluator.evaluate(values, 1, self.data.view()),
            Some(t) => self.evaluator.evaluate_tuned(values, 1, self.data.view(), t),
        };
        let values = match &self.position {
            None => evaluate(alpha)?,
            Some(position) => {
                let mut permuted = vec![0.0; self.n];
                position.iter().zip(alpha).for_each(|(&p, &a)| permuted[p] = a);
                evaluate(&permuted)?
            }
        };
        out.copy_from_slice(&values);
        Ok(())
    }
}

/// The regular grid `grid` is, if it is one. Its points are distinct, so when none lies
/// above the level of the deepest one and there are as many as the regular grid of that
/// level has, they are all of it.
fn regular_spec(grid: &AdaptiveGrid) -> Option<GridSpec> {
    let d = grid.dim();
    let top = (0..grid.len()).map(|g| grid.levels_of(g).iter().sum::<u32>()).max()?;
    let spec = GridSpec::regular(d, top.checked_sub(d as u32)? + 1).ok()?;
    (spec.len() == grid.len() as u64).then_some(spec)
}
