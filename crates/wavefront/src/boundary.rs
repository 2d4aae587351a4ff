//! Values outside the table: what a cell on the first row, column or plane reads for its
//! missing neighbours.

use crate::error::{Result, WavefrontError};

/// The boundary of a `rows x cols` table: row `-1`, column `-1` and the corner `(-1, -1)`.
///
/// An empty `north` or `west` stands for a constant boundary whose every value is `corner`;
/// [`Boundary2::constant`] builds one. Any other length than `cols` (`north`) or `rows` (`west`)
/// is an error when the table is run.
#[derive(Debug, Clone, PartialEq)]
pub struct Boundary2<T> {
    /// Row `-1`: `cols` values, `north[j]` is cell `(-1, j)`; empty for all `corner`.
    pub north: Vec<T>,
    /// Column `-1`: `rows` values, `west[i]` is cell `(i, -1)`; empty for all `corner`.
    pub west: Vec<T>,
    /// Cell `(-1, -1)`.
    pub corner: T,
}

impl<T: Copy> Boundary2<T> {
    /// Every cell outside the table holds `v`.
    pub fn constant(v: T) -> Self {
        Boundary2 { north: Vec::new(), west: Vec::new(), corner: v }
    }

    pub(crate) fn check(&self, rows: usize, cols: usize) -> Result<()> {
        check_len("north", self.north.len(), cols)?;
        check_len("west", self.west.len(), rows)
    }

    /// Cell `(-1, j)`.
    #[inline(always)]
    pub(crate) fn north_at(&self, j: usize) -> T {
        if self.north.is_empty() { self.corner } else { self.north[j] }
    }

    /// Cell `(i, -1)`.
    #[inline(always)]
    pub(crate) fn west_at(&self, i: usize) -> T {
        if self.west.is_empty() { self.corner } else { self.west[i] }
    }
}

/// The boundary of an `n0 x n1 x n2` box: the planes `i = -1`, `j = -1` and `k = -1`.
///
/// An empty plane vector stands for a plane whose every value is `fill`; [`Boundary3::constant`]
/// builds one with all three empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Boundary3<T> {
    /// Plane `i = -1`: `n1 * n2` values, `north[j * n2 + k]` is cell `(-1, j, k)`; or empty.
    pub north: Vec<T>,
    /// Plane `j = -1`: `n0 * n2` values, `west[i * n2 + k]` is cell `(i, -1, k)`; or empty.
    pub west: Vec<T>,
    /// Plane `k = -1`: `n0 * n1` values, `top[i * n1 + j]` is cell `(i, j, -1)`; or empty.
    pub top: Vec<T>,
    /// The value of every cell of an empty plane.
    pub fill: T,
}

impl<T: Copy> Boundary3<T> {
    /// Every cell outside the box holds `v`.
    pub fn constant(v: T) -> Self {
        Boundary3 { north: Vec::new(), west: Vec::new(), top: Vec::new(), fill: v }
    }

    pub(crate) fn check(&self, n0: usize, n1: usize, n2: usize) -> Result<()> {
        check_len("north", self.north.len(), n1 * n2)?;
        check_len("west", self.west.len(), n0 * n2)?;
        check_len("top", self.top.len(), n0 * n1)
    }

    #[inline(always)]
    pub(crate) fn north_at(&self, idx: usize) -> T {
        if self.north.is_empty() { self.fill } else { self.north[idx] }
    }

    #[inline(always)]
    pub(crate) fn west_at(&self, idx: usize) -> T {
        if self.west.is_empty() { self.fill } else { self.west[idx] }
    }

    #[inline(always)]
    pub(crate) fn top_at(&self, idx: usize) -> T {
        if self.top.is_empty() { self.fill } else { self.top[idx] }
    }
}

fn check_len(side: &'static str, got: usize, want: usize) -> Result<()> {
    if got == 0 || got == want { Ok(()) } else { Err(WavefrontError::BoundaryLength { side, got, want }) }
}
