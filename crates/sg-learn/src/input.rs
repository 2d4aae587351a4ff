//! Checks of the data handed to the learners.

use ndarray::{ArrayView1, ArrayView2};
use sg_core::{AdaptiveGrid, GridSpec};

use crate::error::{LearnError, Result};

/// Checks that `x` has rows and columns and every entry is finite and in `[0, 1]`.
pub(crate) fn check_points(x: ArrayView2<'_, f64>) -> Result<()> {
    if x.nrows() == 0 {
        return Err(LearnError::Empty { what: "the data set" });
    }
    if x.ncols() == 0 {
        return Err(LearnError::Empty { what: "the data set's columns" });
    }
    for ((row, col), &value) in x.indexed_iter() {
        if !value.is_finite() {
            return Err(LearnError::NonFinite { what: "data point", row, col, value });
        }
        if !(0.0..=1.0).contains(&value) {
            return Err(LearnError::OutsideDomain { row, col, value });
        }
    }
    Ok(())
}

/// Checks `x` against a grid of dimension `d`.
pub(crate) fn check_points_for(x: ArrayView2<'_, f64>, d: usize) -> Result<()> {
    check_points(x)?;
    if x.ncols() != d {
        return Err(LearnError::DimensionMismatch { grid: d, data: x.ncols() });
    }
    Ok(())
}

/// Checks targets: one per data point, all finite.
pub(crate) fn check_targets(y: ArrayView1<'_, f64>, m: usize) -> Result<()> {
    if y.len() != m {
        return Err(LearnError::LengthMismatch { what: "targets", expected: m, got: y.len() });
    }
    if let Some((row, &value)) = y.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(LearnError::NonFinite { what: "target", row, col: 0, value });
    }
    Ok(())
}

/// Where a learner's grid comes from.
#[derive(Debug, Clone)]
pub(crate) enum GridSource {
    Spec(GridSpec),
    Adaptive(AdaptiveGrid),
}

impl GridSource {
    /// The grid as an adaptive grid (a regular one keeps the `gp2idx` order).
    pub(crate) fn to_grid(&self) -> Result<AdaptiveGrid> {
        let g = match self {
            GridSource::Spec(spec) => AdaptiveGrid::from_spec(spec)?,
            GridSource::Adaptive(g) => g.clone(),
        };
        if g.is_empty() {
            return Err(LearnError::Empty { what: "the grid" });
        }
        Ok(g)
    }
}
