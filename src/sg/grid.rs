//! [`Grid`]: a sparse grid of scalars whose methods run the multi-core kernels.

use std::sync::{Arc, OnceLock};

use ndarray::{Array1, ArrayView2};
use rayon::prelude::*;
use sg_core::GridSpec;
use sg_cpu::{Evaluator, Hierarchizer};

use crate::{Real, Result};

/// Plans depend only on the grid's description, so clones of a grid share them.
#[derive(Debug, Default)]
pub(crate) struct Plans {
    hierarchizer: OnceLock<Hierarchizer>,
    evaluator: OnceLock<Evaluator>,
}

impl Plans {
    pub(crate) fn hierarchizer(&self, spec: &GridSpec) -> Result<&Hierarchizer> {
        if let Some(plan) = self.hierarchizer.get() {
            return Ok(plan);
        }
        let plan = Hierarchizer::new(spec)?;
        Ok(self.hierarchizer.get_or_init(|| plan))
    }

    pub(crate) fn evaluator(&self, spec: &GridSpec) -> Result<&Evaluator> {
        if let Some(plan) = self.evaluator.get() {
            return Ok(plan);
        }
        let plan = Evaluator::new(spec)?;
        Ok(self.evaluator.get_or_init(|| plan))
    }
}

/// A [`GridSpec`] plus one value per point in `gp2idx` order, with the fast operations.
///
/// The values are nodal (function values, after [`from_fn`](Self::from_fn) or
/// [`dehierarchize`](Self::dehierarchize)) or hierarchical surpluses (after
/// [`hierarchize`](Self::hierarchize)); evaluation, the integral and the error read them as
/// surpluses. [`hierarchize`](Self::hierarchize), [`dehierarchize`](Self::dehierarchize),
/// [`evaluate_batch`](Self::evaluate_batch) and [`error`](Self::error) run on all cores; the
/// first call builds the plan (the bijection's integer work, once per grid shape).
///
/// ```
/// use hetkit::sg::{Grid, GridSpec};
/// let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
/// let mut grid = Grid::from_fn(GridSpec::regular(4, 6)?, f)?;
/// grid.hierarchize()?;
/// let test = hetkit::ndarray::Array2::from_shape_fn((1000, 4), |(i, t)| ((i * 7 + t * 13) % 97) as f64 / 96.0);
/// assert!(grid.error(test.view(), f)? < 0.05);
/// # Ok::<(), hetkit::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Grid<T> {
    grid: sg_core::Grid<T>,
    plans: Arc<Plans>,
}

impl<T: Real> Grid<T> {
    /// The grid with the nodal values `f(x)` at every point.
    ///
    /// # Errors
    /// A grid too large to index or allocate.
    pub fn from_fn(spec: GridSpec, f: impl FnMut(&[T]) -> T) -> Result<Self> {
        Ok(sg_core::Grid::from_fn(spec, f)?.into())
    }

    /// The grid holding `values` (one per point, in storage order).
    ///
    /// # Errors
    /// `values.len() != spec.len()`.
    pub fn from_values(spec: GridSpec, values: Vec<T>) -> Result<Self> {
        Ok(sg_core::Grid::from_values(spec, values)?.into())
    }

    /// A grid of zeros.
    ///
    /// # Errors
    /// A grid too large to index or allocate.
    pub fn zeros(spec: GridSpec) -> Result<Self> {
        Ok(sg_core::Grid::zeros(spec)?.into())
    }

    /// The grid's description.
    pub fn spec(&self) -> &GridSpec {
        self.grid.spec()
    }

    /// The values, in storage order.
    pub fn values(&self) -> &[T] {
        self.grid.values()
    }

    /// The values, mutable.
    pub fn values_mut(&mut self) -> &mut [T] {
        self.grid.values_mut()
    }

    /// The value array.
    pub fn into_values(self) -> Vec<T> {
        self.grid.into_values()
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.grid.len()
    }

    /// True for a grid without points (never, for a valid description).
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    /// The value stored at point `(levels, indices)` (public level convention).
    ///
    /// # Errors
    /// When the point is not in the grid.
    pub fn value(&self, levels: &[u32], indices: &[u32]) -> Result<T> {
        Ok(self.grid.value(levels, indices)?)
    }

    /// Nodal values to hierarchical surpluses, in parallel.
    ///
    /// # Errors
    /// A plan too large to build (blocks of 2^32 points or more, memory).
    pub fn hierarchize(&mut self) -> Result<()> {
        let plan = self.plans.hierarchizer(self.grid.spec())?;
        Ok(plan.hierarchize(self.grid.values_mut(), 1)?)
    }

    /// Hierarchical surpluses to nodal values, in parallel.
    ///
    /// # Errors
    /// As [`hierarchize`](Self::hierarchize).
    pub fn dehierarchize(&mut self) -> Result<()> {
        let plan = self.plans.hierarchizer(self.grid.spec())?;
        Ok(plan.dehierarchize(self.grid.values_mut(), 1)?)
    }

    /// The interpolant at one point `x` (sequential: one point does not pay for threads).
    ///
    /// # Errors
    /// `x.len() != d`, a non-finite coordinate, or `x` outside `[0, 1]^d`.
    pub fn evaluate(&self, x: &[T]) -> Result<T> {
        Ok(self.grid.evaluate(x)?)
    }

    /// The interpolant at the rows of `points` (`m x d`, any layout), on all cores.
    ///
    /// # Errors
    /// Wrong column count, a non-finite coordinate, a point outside `[0, 1]^d`.
    pub fn evaluate_batch(&self, points: ArrayView2<'_, T>) -> Result<Array1<T>> {
        let plan = self.plans.evaluator(self.grid.spec())?;
        Ok(Array1::from_vec(plan.evaluate(self.grid.values(), 1, points)?))
    }

    /// The integral of the interpolant over `[0, 1]^d`.
    pub fn integral(&self) -> T {
        self.grid.integral()
    }

    /// Relative L2 error of the interpolant against `f` at the rows of `points`:
    /// `sqrt(Σ (f_c(x) − f(x))²) / sqrt(Σ f(x)²)` (absolute when every `f(x)` is 0). Both the
    /// interpolant and `f` are evaluated on all cores.
    ///
    /// # Errors
    /// As [`evaluate_batch`](Self::evaluate_batch).
    pub fn error(&self, points: ArrayView2<'_, T>, f: impl Fn(&[T]) -> T + Sync) -> Result<T> {
        let approx = self.evaluate_batch(points)?;
        let exact: Vec<T> = (0..points.nrows())
            .into_par_iter()
            .map_init(Vec::new, |row, i| {
                row.clear();
                row.extend(points.row(i).iter().copied());
                f(row)
            })
            .collect();
        let approx = approx.as_slice().expect("a fresh Array1 is contiguous");
        Ok(sg_core::reference::relative_l2_error(approx, &exact)?)
    }

    /// A copy of this grid on `gpu`, for the CUDA kernels (`hierarchize`, `evaluate`, ...).
    ///
    /// # Errors
    /// Device errors (out of memory, no device), a grid the GPU kernels cannot hold.
    pub fn to_device(&self, gpu: &cuda_kernels::Gpu) -> Result<sg_cuda::DeviceGrid<T>> {
        Ok(sg_cuda::DeviceGrid::upload(gpu, &self.grid)?)
    }

    /// The grid's points as an `m x d` array, row `i` the coordinates of point `i` in storage
    /// order (so `values()[i]` belongs to row `i`).
    ///
    /// # Errors
    /// An array too large to allocate.
    pub fn points(&self) -> Result<ndarray::Array2<T>> {
        Ok(self.grid.points()?)
    }

    /// The plain grid, whose methods run the sequential reference algorithms.
    pub fn as_reference(&self) -> &sg_core::Grid<T> {
        &self.grid
    }

    /// The plain grid, by value.
    pub fn into_reference(self) -> sg_core::Grid<T> {
        self.grid
    }
}

impl<T> From<sg_core::Grid<T>> for Grid<T> {
    fn from(grid: sg_core::Grid<T>) -> Self {
        Grid { grid, plans: Arc::default() }
    }
}

impl<T: PartialEq> PartialEq for Grid<T> {
    fn eq(&self, other: &Self) -> bool {
        self.grid == other.grid
    }
}
