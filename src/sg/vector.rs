//! [`VectorGrid`]: a sparse grid of `s`-vectors whose methods run the multi-core kernels.

use std::sync::Arc;

use ndarray::{Array2, ArrayView2};
use sg_core::GridSpec;

use super::Grid;
use super::grid::Plans;
use crate::{Real, Result};

/// A sparse grid holding an `s`-vector per point (point-major: the `s` values of a point are
/// adjacent), with the fast operations of [`Grid`].
///
/// ```
/// use hetkit::sg::{GridSpec, VectorGrid};
/// let spec = GridSpec::regular(2, 6)?;
/// let mut grid = VectorGrid::from_fn(spec, 2, |x: &[f64], out: &mut [f64]| {
///     out[0] = x[0] * (1.0 - x[0]) * x[1] * (1.0 - x[1]);
///     out[1] = 2.0 * out[0];
/// })?;
/// grid.hierarchize()?;
/// let y = grid.evaluate_batch(hetkit::ndarray::array![[0.5, 0.5]].view())?;
/// assert!((y[[0, 1]] - 2.0 * y[[0, 0]]).abs() < 1e-12);
/// # Ok::<(), hetkit::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct VectorGrid<T> {
    grid: sg_core::VectorGrid<T>,
    plans: Arc<Plans>,
}

impl<T: Real> VectorGrid<T> {
    /// The grid with the nodal values `f(x, out)` (writing `s` values) at every point.
    ///
    /// # Errors
    /// `s = 0`, or a grid too large to index or allocate.
    pub fn from_fn(spec: GridSpec, s: usize, f: impl FnMut(&[T], &mut [T])) -> Result<Self> {
        Ok(sg_core::VectorGrid::from_fn(spec, s, f)?.into())
    }

    /// The grid holding `values` (`s` per point, point-major).
    ///
    /// # Errors
    /// `values.len() != s * spec.len()`.
    pub fn from_values(spec: GridSpec, s: usize, values: Vec<T>) -> Result<Self> {
        Ok(sg_core::VectorGrid::from_values(spec, s, values)?.into())
    }

    /// The grid whose component `c` is `grids[c]`.
    ///
    /// # Errors
    /// No grids, or grids of different descriptions.
    pub fn from_components(grids: &[Grid<T>]) -> Result<Self> {
        let plain: Vec<sg_core::Grid<T>> = grids.iter().map(|g| g.as_reference().clone()).collect();
        Ok(sg_core::VectorGrid::from_components(&plain)?.into())
    }

    /// Component `c` as a scalar grid.
    ///
    /// # Errors
    /// `c >= s`.
    pub fn component(&self, c: usize) -> Result<Grid<T>> {
        Ok(self.grid.component(c)?.into())
    }

    /// The grid's description.
    pub fn spec(&self) -> &GridSpec {
        self.grid.spec()
    }

    /// The vector length `s`.
    pub fn components(&self) -> usize {
        self.grid.components()
    }

    /// The values, point-major.
    pub fn values(&self) -> &[T] {
        self.grid.values()
    }

    /// The values, mutable.
    pub fn values_mut(&mut self) -> &mut [T] {
        self.grid.values_mut()
    }

    /// Nodal values to hierarchical surpluses, in parallel.
    ///
    /// # Errors
    /// A plan too large to build.
    pub fn hierarchize(&mut self) -> Result<()> {
        let s = self.grid.components();
        let plan = self.plans.hierarchizer(self.grid.spec())?;
        Ok(plan.hierarchize(self.grid.values_mut(), s)?)
    }

    /// Hierarchical surpluses to nodal values, in parallel.
    ///
    /// # Errors
    /// A plan too large to build.
    pub fn dehierarchize(&mut self) -> Result<()> {
        let s = self.grid.components();
        let plan = self.plans.hierarchizer(self.grid.spec())?;
        Ok(plan.dehierarchize(self.grid.values_mut(), s)?)
    }

    /// The interpolant at one point: `s` values.
    ///
    /// # Errors
    /// `x.len() != d`, a non-finite coordinate, or `x` outside `[0, 1]^d`.
    pub fn evaluate(&self, x: &[T]) -> Result<Vec<T>> {
        Ok(self.grid.evaluate(x)?)
    }

    /// The interpolant at the rows of `points` (`m x d`): an `m x s` array, on all cores.
    ///
    /// # Errors
    /// Wrong column count, a non-finite coordinate, a point outside `[0, 1]^d`.
    pub fn evaluate_batch(&self, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
        let s = self.grid.components();
        let plan = self.plans.evaluator(self.grid.spec())?;
        let out = plan.evaluate(self.grid.values(), s, points)?;
        Ok(Array2::from_shape_vec((points.nrows(), s), out).expect("the kernel returns m x s values"))
    }

    /// The integral of each component over `[0, 1]^d`.
    pub fn integral(&self) -> Vec<T> {
        self.grid.integral()
    }

    /// A copy of this grid on `gpu`.
    ///
    /// # Errors
    /// Device errors, a grid the GPU kernels cannot hold.
    pub fn to_device(&self, gpu: &cuda_kernels::Gpu) -> Result<sg_cuda::DeviceGrid<T>> {
        Ok(sg_cuda::DeviceGrid::upload_vector(gpu, &self.grid)?)
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
    pub fn as_reference(&self) -> &sg_core::VectorGrid<T> {
        &self.grid
    }

    /// The plain grid, by value.
    pub fn into_reference(self) -> sg_core::VectorGrid<T> {
        self.grid
    }
}

impl<T> From<sg_core::VectorGrid<T>> for VectorGrid<T> {
    fn from(grid: sg_core::VectorGrid<T>) -> Self {
        VectorGrid { grid, plans: Arc::default() }
    }
}
