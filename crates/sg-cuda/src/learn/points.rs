//! The grid points the learning operators run over: any set of interior points, given by a
//! level and an index per point and dimension, and their unified form (Table 7.1).

use sg_core::{AdaptiveGrid, Basis, GridSpec, MAX_DIM, MAX_LEVEL, SgError};

use crate::error::{Error, Result};

/// A set of `N` interior grid points in `d` dimensions: level `l ≥ 1` and odd index `i < 2^l`
/// per point and dimension, point-major (`levels[j * d + t]`). Any set works (adaptive grids
/// need not be regular, nor consistent, for the streaming operators); regular grids come from
/// [`GridPoints::regular`] in the storage order of their [`GridSpec`].
///
/// ```
/// use sg_cuda::learn::GridPoints;
/// let pts = GridPoints::new(2, vec![1, 1, 2, 1], vec![1, 1, 3, 1])?; // (0.5, 0.5), (0.75, 0.5)
/// assert_eq!((pts.dim(), pts.len()), (2, 2));
/// assert_eq!(pts.point(1), (&[2, 1][..], &[3, 1][..]));
/// assert_eq!(GridPoints::regular(&sg_core::GridSpec::regular(2, 3)?)?.len(), 17);
/// # Ok::<(), sg_cuda::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridPoints {
    d: usize,
    levels: Vec<u32>,
    indices: Vec<u32>,
}

impl GridPoints {
    /// Checks and wraps the arrays.
    ///
    /// # Errors
    /// [`Error::Shape`] when `d` is 0 or above [`MAX_DIM`], the lengths differ, are not a
    /// multiple of `d`, or hold no point; [`Error::Sg`] ([`SgError::NotAGridPoint`]) for a level
    /// outside `1..=MAX_LEVEL` (level 0, the boundary, has no place in these bases) or an index
    /// that is not odd and below `2^l`.
    pub fn new(d: usize, levels: Vec<u32>, indices: Vec<u32>) -> Result<Self> {
        if d == 0 || d > MAX_DIM {
            return Err(Error::Shape(format!("dimension {d} (1..={MAX_DIM})")));
        }
        if levels.len() != indices.len() || !levels.len().is_multiple_of(d) || levels.is_empty() {
            return Err(Error::Shape(format!(
                "{} levels and {} indices for points of dimension {d} (equal, non-zero multiples of d)",
                levels.len(),
                indices.len()
            )));
        }
        for (k, (&l, &i)) in levels.iter().zip(&indices).enumerate() {
            if l == 0 || l > MAX_LEVEL || i % 2 == 0 || u64::from(i) >= 1u64 << l {
                return Err(Error::Sg(SgError::NotAGridPoint(format!(
                    "point {}, dimension {}: level {l}, index {i} (level 1..={MAX_LEVEL}, odd index below 2^level)",
                    k / d,
                    k % d
                ))));
            }
        }
        Ok(GridPoints { d, levels, indices })
    }

    /// Every point of a grid without boundary points, in its storage order (so surpluses of a
    /// [`sg_core::Grid`] line up with this set).
    ///
    /// # Errors
    /// [`Error::Shape`] for a grid with boundary points; [`SgError::TooManyPoints`] or an
    /// allocation failure for a grid too large for memory.
    pub fn regular(spec: &GridSpec) -> Result<Self> {
        if spec.has_boundary() {
            return Err(Error::Shape(
                "the learning bases have no boundary points; take a grid without".into(),
            ));
        }
        let (d, n) = (spec.dim(), spec.len_usize()?);
        let len = sg_core::alloc::checked_len::<u32>("grid levels", n as u64, d)?;
        let mut levels = sg_core::alloc::try_vec("grid levels", len, 0u32)?;
        let mut indices = sg_core::alloc::try_vec("grid indices", len, 0u32)?;
        for (j, (l, i)) in levels.chunks_exact_mut(d).zip(indices.chunks_exact_mut(d)).enumerate() {
            spec.idx2gp_unchecked(j as u64, l, i);
        }
        Ok(GridPoints { d, levels, indices })
    }

    /// Dimension `d`.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Number of points `N`.
    pub fn len(&self) -> usize {
        self.levels.len() / self.d
    }

    /// Always false: a set holds at least one point.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }

    /// Levels, point-major.
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// Indices, point-major.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Levels and indices of point `j` (panics past the end, like slice indexing).
    pub fn point(&self, j: usize) -> (&[u32], &[u32]) {
        let r = j * self.d..(j + 1) * self.d;
        (&self.levels[r.clone()], &self.indices[r])
    }

    /// `f(l, i)` of every point and dimension, dimension-major (`out[t * N + j]`), the layout
    /// the kernels read.
    pub(crate) fn dimension_major<T: sg_core::Real>(&self, f: impl Fn(u32, u32) -> f64) -> Result<Vec<T>> {
        let n = self.len();
        let mut out = sg_core::alloc::try_vec("grid table", self.levels.len(), T::zero())?;
        for (j, (ls, is)) in
            self.levels.chunks_exact(self.d).zip(self.indices.chunks_exact(self.d)).enumerate()
        {
            for t in 0..self.d {
                out[t * n + j] = T::from_f64(f(ls[t], is[t]));
            }
        }
        Ok(out)
    }

    /// The scaling `s_j = Π_t s_{l_t, i_t}` of Eq. 7.7 for every point.
    pub(crate) fn scaling<T: sg_core::Real>(&self, basis: Basis) -> Vec<T> {
        (0..self.len())
            .map(|j| {
                let (ls, is) = self.point(j);
                T::from_f64(ls.iter().zip(is).map(|(&l, &i)| basis.unified(l, i).scale).product())
            })
            .collect()
    }
}

impl TryFrom<&AdaptiveGrid> for GridPoints {
    type Error = Error;

    /// The points of an adaptive grid, in its order.
    ///
    /// # Errors
    /// [`Error::Shape`] for an empty grid.
    fn try_from(grid: &AdaptiveGrid) -> Result<Self> {
        GridPoints::new(grid.dim(), grid.levels().to_vec(), grid.indices().to_vec())
    }
}
