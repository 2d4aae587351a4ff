//! Layout of grids with boundary points (digest §7.2).
//!
//! Each point has a per-dimension pattern symbol: boundary at 0, boundary at 1, or interior. The
//! points sharing a pattern form a *face*: a zero-boundary sparse grid over its interior
//! dimensions, of the same level `n` (and the same truncation on those dimensions). Faces are
//! stored by increasing number of boundary dimensions `nb`; faces with equal `nb` in
//! lexicographic order of their patterns, dimension 0 most significant, symbols `0 < 1 < I`.
//! Inside a face the zero-boundary layout of [`SubspaceTables`] applies.
//!
//! Face offsets come from generating polynomials (so truncated grids work too): with
//! `q_t(z) = Σ_{l < c_t} 2^l z^l` (points per level of dimension `t`),
//! `G_j(k)(z)` = Σ over patterns of dimensions `j..d` with `k` boundary dimensions of
//! `2^k · Π_{interior t} q_t(z)`; a face over the interior set `S` has
//! `Σ_{g<n} [z^g] Π_{t∈S} q_t(z)` points.

use crate::error::{Result, SgError};
use crate::tables::SubspaceTables;
use std::sync::Arc;

/// Pattern symbol: boundary at x = 0.
pub(crate) const AT0: u8 = 0;
/// Pattern symbol: boundary at x = 1.
pub(crate) const AT1: u8 = 1;
/// Pattern symbol: interior.
pub(crate) const INTERIOR: u8 = 2;

/// Largest supported level: indices `i < 2^n` must fit in `u32`.
pub(crate) const MAX_POLY: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BoundaryLayout {
    d: usize,
    n: usize,
    c: Vec<u32>,
    /// cg[(j * (d + 1) + k) * (n + 1) + m] = Σ_{b<m} [z^b] G_j(k).
    cg: Vec<u64>,
    /// base[nb] = number of points with fewer than nb boundary dimensions (nb = 0..=d+1).
    base: Vec<u64>,
    /// Face tables by number of interior dimensions, when no dimension is truncated.
    regular_faces: Option<Vec<Arc<SubspaceTables>>>,
}

impl BoundaryLayout {
    pub(crate) fn new(n: u32, c: &[u32]) -> Result<Self> {
        let d = c.len();
        let nn = n as usize;
        let too_many = SgError::TooManyPoints { what: "u64" };
        // g[j][k][b] in u128 with checked arithmetic.
        let idx = |j: usize, k: usize, b: usize| (j * (d + 1) + k) * nn + b;
        let mut g = vec![0u128; (d + 1) * (d + 1) * nn];
        g[idx(d, 0, 0)] = 1;
        for j in (0..d).rev() {
            let cj = c[j].min(n) as usize;
            for k in 0..=(d - j) {
                for b in 0..nn {
                    let mut v: u128 = 0;
                    if k > 0 {
                        v = g[idx(j + 1, k - 1, b)].checked_mul(2).ok_or(too_many.clone())?;
                    }
                    for l in 0..cj.min(b + 1) {
                        let term = g[idx(j + 1, k, b - l)].checked_mul(1u128 << l).ok_or(too_many.clone())?;
                        v = v.checked_add(term).ok_or(too_many.clone())?;
                    }
                    g[idx(j, k, b)] = v;
                }
            }
        }
        let mut base = vec![0u64; d + 2];
        let mut acc: u128 = 0;
        for k in 0..=d {
            for b in 0..nn {
                acc = acc.checked_add(g[idx(0, k, b)]).ok_or(too_many.clone())?;
            }
            base[k + 1] = u64::try_from(acc).map_err(|_| too_many.clone())?;
        }
        // Every G entry counts points of the grid (pad the other dimensions with boundary 0),
        // so all fit in u64 now that the total does.
        let mut cg = vec![0u64; (d + 1) * (d + 1) * (nn + 1)];
        for j in 0..=d {
            for k in 0..=d {
                let mut s = 0u64;
                for m in 0..nn {
                    s += g[idx(j, k, m)] as u64;
                    cg[(j * (d + 1) + k) * (nn + 1) + m + 1] = s;
                }
            }
        }
        let regular_faces = if c.iter().all(|&ct| ct >= n) {
            let faces =
                (0..=d).map(|k| SubspaceTables::new(n, &vec![n; k]).map(Arc::new)).collect::<Result<_>>()?;
            Some(faces)
        } else {
            None
        };
        Ok(BoundaryLayout { d, n: nn, c: c.to_vec(), cg, base, regular_faces })
    }

    /// Number of points.
    pub(crate) fn len(&self) -> u64 {
        self.base[self.d + 1]
    }

    /// Σ_{a<n} pre[a] · Σ_{b<n−a} [z^b] G_j(k): points of the patterns that fix dimensions < j
    /// (interior product `pre`) and have k boundary dimensions among j..d.
    #[inline]
    fn dot(&self, pre: &[u64; MAX_POLY], j: usize, k: usize) -> u64 {
        if k > self.d - j {
            return 0;
        }
        let row = &self.cg[(j * (self.d + 1) + k) * (self.n + 1)..][..self.n + 1];
        (0..self.n).map(|a| pre[a] * row[self.n - a]).sum()
    }

    /// pre ← pre · q_t, truncated to degree n − 1.
    #[inline]
    fn mul_q(&self, pre: &mut [u64; MAX_POLY], t: usize) {
        let ct = (self.c[t] as usize).min(self.n);
        for gdeg in (0..self.n).rev() {
            let mut v = 0u64;
            for l in 0..ct.min(gdeg + 1) {
                v += pre[gdeg - l] << l;
            }
            pre[gdeg] = v;
        }
    }

    /// Offset of the face with pattern `sym` (one symbol per dimension).
    pub(crate) fn face_offset(&self, sym: &[u8]) -> u64 {
        let nb = sym.iter().filter(|&&s| s != INTERIOR).count();
        let mut off = self.base[nb];
        let mut rem = nb;
        let mut pre = [0u64; MAX_POLY];
        pre[0] = 1;
        for (t, &s) in sym.iter().enumerate() {
            match s {
                AT0 => rem -= 1,
                AT1 => {
                    off += self.dot(&pre, t + 1, rem - 1);
                    rem -= 1;
                }
                _ => {
                    if rem >= 1 {
                        off += 2 * self.dot(&pre, t + 1, rem - 1);
                    }
                    self.mul_q(&mut pre, t);
                }
            }
        }
        off
    }

    /// Splits a linear index into its face pattern (written to `sym`) and the index inside the
    /// face.
    pub(crate) fn locate(&self, mut j: u64, sym: &mut [u8]) -> u64 {
        let nb = self.base[1..].partition_point(|&b| b <= j);
        j -= self.base[nb];
        let mut rem = nb;
        let mut pre = [0u64; MAX_POLY];
        pre[0] = 1;
        for t in 0..self.d {
            let per_side = if rem >= 1 { self.dot(&pre, t + 1, rem - 1) } else { 0 };
            if j < per_side {
                sym[t] = AT0;
                rem -= 1;
            } else if j < 2 * per_side {
                sym[t] = AT1;
                j -= per_side;
                rem -= 1;
            } else {
                sym[t] = INTERIOR;
                j -= 2 * per_side;
                self.mul_q(&mut pre, t);
            }
        }
        j
    }

    /// Zero-boundary tables of the face whose interior dimensions are `dims`.
    pub(crate) fn face_tables(&self, dims: &[usize]) -> Arc<SubspaceTables> {
        match &self.regular_faces {
            Some(f) => f[dims.len()].clone(),
            None => {
                let c: Vec<u32> = dims.iter().map(|&t| self.c[t]).collect();
                // Cannot fail: a face is part of a grid whose size fits.
                Arc::new(SubspaceTables::new(self.n as u32, &c).expect("face of a valid grid"))
            }
        }
    }
}

/// The first pattern (lexicographic, `0 < 1 < I`) with `nb` boundary dimensions.
pub(crate) fn first_pattern(sym: &mut [u8], nb: usize) {
    for (t, s) in sym.iter_mut().enumerate() {
        *s = if t < nb { AT0 } else { INTERIOR };
    }
}

/// Advances `sym` to the next pattern with the same number of boundary dimensions; false when
/// it was the last one.
pub(crate) fn next_pattern(sym: &mut [u8]) -> bool {
    let d = sym.len();
    let mut suffix_nb = 0;
    for i in (0..d).rev() {
        let room = d - 1 - i;
        match sym[i] {
            AT0 => {
                sym[i] = AT1;
                first_pattern(&mut sym[i + 1..], suffix_nb);
                return true;
            }
            AT1 if suffix_nb < room => {
                sym[i] = INTERIOR;
                first_pattern(&mut sym[i + 1..], suffix_nb + 1);
                return true;
            }
            _ => {}
        }
        if sym[i] != INTERIOR {
            suffix_nb += 1;
        }
    }
    false
}
