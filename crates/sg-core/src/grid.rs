//! [`Grid`]: a sparse grid of scalar values stored as one dense array.

use crate::alloc::{try_vec, try_with_capacity};
use crate::error::{Result, SgError};
use crate::real::Real;
use crate::reference as r;
use crate::spec::GridSpec;
use ndarray::{Array1, Array2, ArrayView2};

/// A [`GridSpec`] plus one value per point, in `gp2idx` order; no keys are stored.
///
/// The values are whatever the caller last made them: nodal values (function values at the
/// points, as after [`from_fn`](Self::from_fn) or [`dehierarchize`](Self::dehierarchize)) or
/// hierarchical surpluses (after [`hierarchize`](Self::hierarchize)). Evaluation, the integral
/// and the error estimate read the values as surpluses.
///
/// ```
/// use sg_core::{Grid, GridSpec};
/// let spec = GridSpec::regular(2, 3)?;
/// let mut g = Grid::<f64>::from_fn(spec, |x| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product())?;
/// g.hierarchize();
/// assert!((g.evaluate(&[0.3, 0.6])? - 0.77).abs() < 1e-12);
/// # Ok::<(), sg_core::SgError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Grid<T> {
    spec: GridSpec,
    values: Vec<T>,
}

impl<T: Real> Grid<T> {
    /// The grid with the nodal values `f(x)` at every point.
    ///
    /// # Errors
    /// [`SgError::TooManyPoints`] or [`SgError::Allocation`] when the values do not fit in memory.
    pub fn from_fn(spec: GridSpec, mut f: impl FnMut(&[T]) -> T) -> Result<Self> {
        let _span = tracing::debug_span!("Grid::from_fn", d = spec.dim(), n = spec.level(), len = spec.len())
            .entered();
        let values = r::sample(&spec, 1, |x, out| out[0] = f(x))?;
        Ok(Grid { spec, values })
    }

    /// The grid holding `values` (one per point, in storage order).
    ///
    /// # Errors
    /// [`SgError::LengthMismatch`] when `values.len() != spec.len()`.
    pub fn from_values(spec: GridSpec, values: Vec<T>) -> Result<Self> {
        r::check_values(&spec, &values, 1)?;
        Ok(Grid { spec, values })
    }

    /// A grid of zeros.
    ///
    /// ```
    /// use sg_core::{Grid, GridSpec, SgError};
    /// // 4.9 · 10^15 bytes: an error, not an abort.
    /// let huge = Grid::<f64>::zeros(GridSpec::regular(6, 31)?);
    /// assert!(matches!(huge, Err(SgError::Allocation { .. })));
    /// # Ok::<(), SgError>(())
    /// ```
    ///
    /// # Errors
    /// [`SgError::TooManyPoints`] or [`SgError::Allocation`] when the values do not fit in memory.
    pub fn zeros(spec: GridSpec) -> Result<Self> {
        let n = spec.len_usize()?;
        Ok(Grid { spec, values: try_vec("grid values", n, T::zero())? })
    }

    /// The grid's description.
    pub fn spec(&self) -> &GridSpec {
        &self.spec
    }

    /// The values, in storage order.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values, mutable.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// The value array.
    pub fn into_values(self) -> Vec<T> {
        self.values
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The coordinates of the grid's points as an `m × d` array, row `j` holding point `j` (see
    /// [`GridSpec::point_matrix`]): `f` applied to row `j` is the nodal value `values()[j]`.
    ///
    /// ```
    /// use sg_core::{Grid, GridSpec};
    /// let g = Grid::<f64>::from_fn(GridSpec::regular(3, 3)?, |x| x[0] + 2.0 * x[1] * x[2])?;
    /// let x = g.points()?;
    /// assert_eq!(x.dim(), (g.len(), 3));
    /// for (row, &v) in x.rows().into_iter().zip(g.values()) {
    ///     assert_eq!(row[0] + 2.0 * row[1] * row[2], v);
    /// }
    /// # Ok::<(), sg_core::SgError>(())
    /// ```
    ///
    /// # Errors
    /// [`SgError::Allocation`] when `len · d` values do not fit in memory.
    pub fn points(&self) -> Result<Array2<T>> {
        self.spec.point_matrix()
    }

    /// The value stored at point `(levels, indices)` (public convention).
    ///
    /// # Errors
    /// When the point is not in the grid.
    pub fn value(&self, levels: &[u32], indices: &[u32]) -> Result<T> {
        Ok(self.values[self.spec.gp2idx(levels, indices)? as usize])
    }

    /// Nodal values → hierarchical surpluses (non-recursive reference, Listing 3.4).
    pub fn hierarchize(&mut self) {
        let _span = tracing::debug_span!("Grid::hierarchize", len = self.values.len()).entered();
        r::hierarchize(&self.spec, &mut self.values, 1).expect("length checked at construction");
    }

    /// Hierarchical surpluses → nodal values (non-recursive reference).
    pub fn dehierarchize(&mut self) {
        let _span = tracing::debug_span!("Grid::dehierarchize", len = self.values.len()).entered();
        r::dehierarchize(&self.spec, &mut self.values, 1).expect("length checked at construction");
    }

    /// [`hierarchize`](Self::hierarchize) by the recursive algorithm (Listing 3.1).
    pub fn hierarchize_recursive(&mut self) {
        r::hierarchize_recursive(&self.spec, &mut self.values, 1).expect("length checked at construction");
    }

    /// [`dehierarchize`](Self::dehierarchize) by recursion.
    pub fn dehierarchize_recursive(&mut self) {
        r::dehierarchize_recursive(&self.spec, &mut self.values, 1).expect("length checked at construction");
    }

    /// The interpolant (values read as surpluses) at `x` (block form, Listing 3.5).
    ///
    /// # Errors
    /// `x.len() != d`, a non-finite coordinate, or `x` outside `[0, 1]^d`.
    pub fn evaluate(&self, x: &[T]) -> Result<T> {
        let mut out = [T::zero()];
        r::check_point_coords(self.spec.dim(), x, 0)?;
        r::evaluate_batch_into(&self.spec, &self.values, 1, x, &mut out)?;
        Ok(out[0])
    }

    /// [`evaluate`](Self::evaluate) by the recursive algorithm (Listing 3.2).
    ///
    /// # Errors
    /// As `evaluate`.
    pub fn evaluate_recursive(&self, x: &[T]) -> Result<T> {
        let mut out = [T::zero()];
        r::evaluate_recursive_into(&self.spec, &self.values, 1, x, &mut out)?;
        Ok(out[0])
    }

    /// The interpolant at the rows of an `m × d` matrix (blocks outer, points inner: the loop
    /// order of Listing 4.3).
    ///
    /// # Errors
    /// Wrong column count, or a row that is non-finite or outside `[0, 1]^d`.
    pub fn evaluate_batch(&self, points: ArrayView2<'_, T>) -> Result<Array1<T>> {
        let _span = tracing::debug_span!("Grid::evaluate_batch", m = points.nrows(), len = self.values.len())
            .entered();
        let flat = flatten_points(self.spec.dim(), points)?;
        let mut out = try_vec("evaluation output", points.nrows(), T::zero())?;
        r::evaluate_batch_into(&self.spec, &self.values, 1, &flat, &mut out)?;
        Ok(Array1::from_vec(out))
    }

    /// Integral of the interpolant over `[0, 1]^d` (values read as surpluses; NaN or infinite
    /// values propagate to the result).
    pub fn integral(&self) -> T {
        let mut out = [T::zero()];
        r::integral_into(&self.spec, &self.values, 1, &mut out).expect("length checked at construction");
        out[0]
    }

    /// Relative L2 error (Eq. 3.20) of the interpolant against `f` at the rows of `points`:
    /// `sqrt(Σ (f_c(x) − f(x))²) / sqrt(Σ f(x)²)` (absolute when every `f(x)` is 0).
    ///
    /// # Errors
    /// As [`evaluate_batch`](Self::evaluate_batch).
    pub fn error(&self, points: ArrayView2<'_, T>, mut f: impl FnMut(&[T]) -> T) -> Result<T> {
        let approx = self.evaluate_batch(points)?;
        let mut exact = try_with_capacity("exact values", points.nrows())?;
        exact.extend(points.rows().into_iter().map(|row| f(&row.to_vec())));
        r::relative_l2_error(approx.as_slice().expect("contiguous"), &exact)
    }
}

/// Copies an `m × d` view into a row-major vector after checking the column count.
pub(crate) fn flatten_points<T: Real>(d: usize, points: ArrayView2<'_, T>) -> Result<Vec<T>> {
    if points.ncols() != d {
        return Err(SgError::LengthMismatch { what: "point columns", expected: d, got: points.ncols() });
    }
    let mut flat = try_with_capacity("evaluation points", points.len())?;
    flat.extend(points.iter().copied());
    for (row, x) in flat.chunks_exact(d.max(1)).enumerate() {
        r::check_point_coords(d, x, row)?;
    }
    Ok(flat)
}
