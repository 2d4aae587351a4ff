//! The problem: `G` tridiagonal systems of size `m` sharing one memory layout.

use super::equation::Equation;
use super::real::Real;
use crate::{Error, Result};

/// Where element `k` of system `g` lives in each of the arrays `a`, `b`, `c`, `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Systems one after another: element `k` of system `g` at `g * m + k`.
    Strided,
    /// Element `k` of every system adjacent: element `k` of system `g` at `k * G + g`.
    Interleaved,
}

impl Layout {
    /// Position of element `k` of system `g` in a batch of `systems` systems of size `m`.
    #[inline]
    pub fn index(self, m: usize, systems: usize, g: usize, k: usize) -> usize {
        match self {
            Layout::Strided => g * m + k,
            Layout::Interleaved => k * systems + g,
        }
    }
}

/// A batch of `G` tridiagonal systems `A_g x_g = d_g` of size `m`.
///
/// Row `k` of system `g` reads `a[k] x[k-1] + b[k] x[k] + c[k] x[k+1] = d[k]`: `a` is the
/// sub-diagonal, `b` the main diagonal and `c` the super-diagonal, each stored in full length
/// `m` per system. `a[0]` and `c[m-1]` couple to unknowns that do not exist and are ignored.
///
/// ```
/// use prefix_ops::tridiagonal::TridiagonalBatch;
/// // Two systems of size 3, [-1, 2, -1] (Poisson), one after another.
/// let a = [0.0f64, -1.0, -1.0, 0.0, -1.0, -1.0];
/// let b = [2.0; 6];
/// let c = [-1.0, -1.0, 0.0, -1.0, -1.0, 0.0];
/// let batch = TridiagonalBatch::strided(&a, &b, &c, 3)?;
/// let mut d = [1.0f64, 0.0, 1.0, 2.0, 0.0, 2.0];
/// batch.solve(&mut d)?;
/// assert!(d.iter().zip([1.0, 1.0, 1.0, 2.0, 2.0, 2.0]).all(|(x, w)| (x - w).abs() < 1e-12));
/// # Ok::<(), prefix_ops::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TridiagonalBatch<'a, T> {
    pub(crate) a: &'a [T],
    pub(crate) b: &'a [T],
    pub(crate) c: &'a [T],
    pub(crate) m: usize,
    pub(crate) systems: usize,
    pub(crate) layout: Layout,
}

impl<'a, T: Real> TridiagonalBatch<'a, T> {
    /// Systems stored one after another; `G = b.len() / m`.
    pub fn strided(a: &'a [T], b: &'a [T], c: &'a [T], m: usize) -> Result<Self> {
        Self::new(a, b, c, m, Layout::Strided)
    }

    /// Systems interleaved element by element; `G = b.len() / m`.
    pub fn interleaved(a: &'a [T], b: &'a [T], c: &'a [T], m: usize) -> Result<Self> {
        Self::new(a, b, c, m, Layout::Interleaved)
    }

    /// A batch in `layout`. Errors: diagonals of different lengths ([`Error::LengthMismatch`]),
    /// or a length that is not a whole number of systems of size `m`, `m = 0` with data
    /// included ([`Error::InvalidRows`], the rows convention of [`crate::segments`]).
    pub fn new(a: &'a [T], b: &'a [T], c: &'a [T], m: usize, layout: Layout) -> Result<Self> {
        let n = b.len();
        check_len("a (sub-diagonal)", a.len(), n)?;
        check_len("c (super-diagonal)", c.len(), n)?;
        let systems = crate::segments::check_rows(n, m)?;
        Ok(TridiagonalBatch { a, b, c, m, systems, layout })
    }

    /// The size `m` of each system.
    pub fn system_size(&self) -> usize {
        self.m
    }

    /// The number `G` of systems.
    pub fn systems(&self) -> usize {
        self.systems
    }

    /// The memory layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Total unknowns `m * G`, the length every right-hand side must have.
    pub fn len(&self) -> usize {
        self.b.len()
    }

    /// True when the batch holds no unknowns.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }

    /// The sub-, main and super-diagonal arrays.
    pub fn diagonals(&self) -> (&'a [T], &'a [T], &'a [T]) {
        (self.a, self.b, self.c)
    }

    #[inline]
    pub(crate) fn at(&self, g: usize, k: usize) -> usize {
        self.layout.index(self.m, self.systems, g, k)
    }

    /// System `g` with right-hand side `d`, as equations, with `a[0] = c[m-1] = 0` enforced.
    pub(crate) fn equations(&self, g: usize, d: &[T]) -> Vec<Equation<T>> {
        let mut eqs: Vec<Equation<T>> = (0..self.m)
            .map(|k| {
                let i = self.at(g, k);
                Equation { a: self.a[i], b: self.b[i], c: self.c[i], d: d[i] }
            })
            .collect();
        if let Some(first) = eqs.first_mut() {
            first.a = T::zero();
        }
        if let Some(last) = eqs.last_mut() {
            last.c = T::zero();
        }
        eqs
    }

    pub(crate) fn check_rhs(&self, what: &'static str, len: usize) -> Result<()> {
        check_len(what, len, self.len())
    }
}

pub(crate) fn check_len(what: &'static str, got: usize, expected: usize) -> Result<()> {
    if got != expected {
        return Err(Error::LengthMismatch { what, got, expected });
    }
    Ok(())
}
