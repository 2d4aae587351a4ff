//! The grid points the learning operators run over: any set of interior points, given by a
//! level and an index per point and dimension, and their unified form (Table 7.1).

use sg_core::{GridSpec, MAX_DIM, MAX_LEVEL, SgError};

use crate::error::{Error, Result};

/// The basis of the learning operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LearnBasis {
    /// Hats `φ_{l,i}(x) = max(0, 1 − |2^l x − i|)`: zero on the boundary.
    #[default]
    Linear,
    /// The modified linear basis (Eq. 6.13): the constant 1 on level 1, and the outermost
    /// functions of every deeper level extrapolate linearly to the boundary (value 2 there).
    ModifiedLinear,
}

/// The unified form of the 1-D function `(l, i)` (Table 7.1 and Eq. 7.6): `(l', i', s)` with
/// `φ(x) = s · max(0, 1 − |l'·x − i'|)` on `[0, 1]`. Linear: `(2^l, i, 1)`. Modified linear:
/// `(0, 0, 1)` on level 1 (the constant), `(2^(l−1), 0, 2)` for `i = 1`, `(2^(l−1), 2^(l−1), 2)`
/// for `i = 2^l − 1`, else `(2^l, i, 1)`.
///
/// ```
/// use sg_cuda::learn::{LearnBasis, unified_1d};
/// assert_eq!(unified_1d(LearnBasis::ModifiedLinear, 3, 1), (4.0, 0.0, 2.0));
/// assert_eq!(unified_1d(LearnBasis::ModifiedLinear, 3, 7), (4.0, 4.0, 2.0));
/// assert_eq!(unified_1d(LearnBasis::ModifiedLinear, 1, 1), (0.0, 0.0, 1.0));
/// assert_eq!(unified_1d(LearnBasis::Linear, 3, 3), (8.0, 3.0, 1.0));
/// ```
///
/// Levels and indices are not checked here ([`GridPoints::new`] does): `l` must be at most
/// [`MAX_LEVEL`].
pub fn unified_1d(basis: LearnBasis, l: u32, i: u32) -> (f64, f64, f64) {
    let scale = |k: u32| (1u64 << k) as f64;
    match basis {
        LearnBasis::Linear => (scale(l), f64::from(i), 1.0),
        LearnBasis::ModifiedLinear if l == 1 => (0.0, 0.0, 1.0),
        LearnBasis::ModifiedLinear if i == 1 => (scale(l - 1), 0.0, 2.0),
        LearnBasis::ModifiedLinear if u64::from(i) == (1u64 << l) - 1 => (scale(l - 1), scale(l - 1), 2.0),
        LearnBasis::ModifiedLinear => (scale(l), f64::from(i), 1.0),
    }
}

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
    pub(crate) fn scaling<T: sg_core::Real>(&self, basis: LearnBasis) -> Vec<T> {
        (0..self.len())
            .map(|j| {
                let (ls, is) = self.point(j);
                T::from_f64(ls.iter().zip(is).map(|(&l, &i)| unified_1d(basis, l, i).2).product())
            })
            .collect()
    }
}
