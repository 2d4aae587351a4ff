//! [`VectorGrid`]: a sparse grid whose points each hold `s` values (thesis §3.8.2).

use crate::alloc::{checked_len, try_vec, try_with_capacity};
use crate::error::{Result, SgError};
use crate::grid::{Grid, flatten_points};
use crate::real::Real;
use crate::reference as r;
use crate::spec::GridSpec;
use ndarray::{Array2, ArrayView2};

/// A sparse grid of vectors: `s` values per point, stored point-major (an `N × s` row-major
/// matrix whose row `gp2idx(l, i)` belongs to point `(l, i)`). Every operation acts on the `s`
/// components independently, as `s` scalar grids would; evaluation at one point is the spvm
/// `y = Σ_blocks φ(x) · row` (Listing 3.8).
///
/// ```
/// use sg_core::{GridSpec, VectorGrid};
/// let spec = GridSpec::regular(2, 3)?;
/// let mut g = VectorGrid::<f64>::from_fn(spec, 2, |x, out| { out[0] = x[0]; out[1] = x[0] * x[1]; })?;
/// g.hierarchize();
/// let y = g.evaluate(&[0.5, 0.25])?;
/// assert!((y[0] - 0.5).abs() < 1e-12 && (y[1] - 0.125).abs() < 1e-12);
/// # Ok::<(), sg_core::SgError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct VectorGrid<T> {
    spec: GridSpec,
    s: usize,
    values: Vec<T>,
}

impl<T: Real> VectorGrid<T> {
    /// Samples `f(x, out)` (writing `s` values) at every point.
    ///
    /// # Errors
    /// [`SgError::Zero`] for `s = 0`; [`SgError::TooManyPoints`] or [`SgError::Allocation`] when
    /// the values do not fit in memory.
    pub fn from_fn(spec: GridSpec, s: usize, f: impl FnMut(&[T], &mut [T])) -> Result<Self> {
        let values = r::sample(&spec, s, f)?;
        Ok(VectorGrid { spec, s, values })
    }

    /// Wraps `values` (`len · s`, point-major).
    ///
    /// # Errors
    /// [`SgError::Zero`] for `s = 0`, [`SgError::LengthMismatch`] for a wrong length.
    pub fn from_values(spec: GridSpec, s: usize, values: Vec<T>) -> Result<Self> {
        r::check_values(&spec, &values, s)?;
        Ok(VectorGrid { spec, s, values })
    }

    /// Stacks `s` scalar grids over the same spec into one vector grid.
    ///
    /// # Errors
    /// [`SgError::Zero`] for no grids, [`SgError::DifferentGrids`] for grids over different
    /// specs, [`SgError::Allocation`].
    pub fn from_components(grids: &[Grid<T>]) -> Result<Self> {
        let first = grids.first().ok_or(SgError::Zero { what: "number of component grids" })?;
        if let Some(index) = grids.iter().position(|g| g.spec() != first.spec()) {
            return Err(SgError::DifferentGrids { index });
        }
        let s = grids.len();
        let n = checked_len::<T>("vector grid values", first.len() as u64, s)?;
        let mut values = try_vec("vector grid values", n, T::zero())?;
        for (c, g) in grids.iter().enumerate() {
            for (j, &v) in g.values().iter().enumerate() {
                values[j * s + c] = v;
            }
        }
        Ok(VectorGrid { spec: first.spec().clone(), s, values })
    }

    /// Component `c` as a scalar grid.
    ///
    /// # Errors
    /// [`SgError::IndexOutOfRange`] when `c >= s`; [`SgError::Allocation`].
    pub fn component(&self, c: usize) -> Result<Grid<T>> {
        if c >= self.s {
            return Err(SgError::IndexOutOfRange { what: "component", idx: c as u64, len: self.s as u64 });
        }
        let mut values = try_with_capacity("component values", self.values.len() / self.s)?;
        values.extend(self.values.iter().skip(c).step_by(self.s).copied());
        Grid::from_values(self.spec.clone(), values)
    }

    /// The coordinates of the grid's points as an `m × d` array (see [`Grid::points`]).
    ///
    /// # Errors
    /// [`SgError::Allocation`].
    pub fn points(&self) -> Result<Array2<T>> {
        self.spec.point_matrix()
    }

    /// The grid's description.
    pub fn spec(&self) -> &GridSpec {
        &self.spec
    }

    /// Values per point.
    pub fn components(&self) -> usize {
        self.s
    }

    /// All values, point-major.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// All values, mutable.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// Nodal values → surpluses (row operations `row_j −= (row_left + row_right)/2`).
    pub fn hierarchize(&mut self) {
        r::hierarchize(&self.spec, &mut self.values, self.s).expect("length checked at construction");
    }

    /// Surpluses → nodal values.
    pub fn dehierarchize(&mut self) {
        r::dehierarchize(&self.spec, &mut self.values, self.s).expect("length checked at construction");
    }

    /// The `s` interpolant components at `x`, computed as the spvm of the contributing rows
    /// (one per block) weighted by their basis products.
    ///
    /// # Errors
    /// As [`Grid::evaluate`].
    pub fn evaluate(&self, x: &[T]) -> Result<Vec<T>> {
        let mut contrib = Vec::new();
        r::contributions(&self.spec, x, &mut contrib)?;
        let weights: Vec<T> = contrib.iter().map(|&(_, w)| w).collect();
        let rows: Vec<usize> = contrib.iter().map(|&(k, _)| k as usize).collect();
        r::spvm(&weights, &rows, &self.values, self.s)
    }

    /// The interpolant at the rows of an `m × d` matrix: an `m × s` matrix.
    ///
    /// # Errors
    /// As [`Grid::evaluate_batch`].
    pub fn evaluate_batch(&self, points: ArrayView2<'_, T>) -> Result<Array2<T>> {
        let flat = flatten_points(self.spec.dim(), points)?;
        let n = checked_len::<T>("evaluation output", points.nrows() as u64, self.s)?;
        let mut out = try_vec("evaluation output", n, T::zero())?;
        r::evaluate_batch_into(&self.spec, &self.values, self.s, &flat, &mut out)?;
        Ok(Array2::from_shape_vec((points.nrows(), self.s), out).expect("shape matches"))
    }

    /// The `s` integrals of the interpolant.
    pub fn integral(&self) -> Vec<T> {
        let mut out = vec![T::zero(); self.s];
        r::integral_into(&self.spec, &self.values, self.s, &mut out).expect("length checked at construction");
        out
    }
}
