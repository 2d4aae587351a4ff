//! The dynamic-programming tables behind the `gp2idx` bijection of a zero-boundary grid.
//!
//! Levels here are **0-based** (`l0 = public level − 1`), the convention of the layout formulas
//! (digest §5): a zero-boundary grid of level `n` holds the blocks (subspaces) `l0` with
//! `|l0|_1 <= n − 1` and `l0_t < c_t`. Blocks are stored group by group (`g = |l0|_1` ascending);
//! inside a group in colexicographic order (the **last** dimension most significant, Eq. 3.9);
//! inside a block row-major over the in-level positions `p_t = (i_t − 1) / 2`, dimension 0 most
//! significant (Eq. 3.12).

use crate::error::{Result, SgError};
use crate::spec::{MAX_DIM, MAX_LEVEL};

/// Tables `a(t, j)`, group offsets and block ranks of one zero-boundary (possibly truncated) grid.
///
/// `a(t, j)` is the number of level vectors of length `t` (the first `t` dimensions) with sum `j`
/// and `l0_s < c_s`; `a(d, g)` is the number of blocks in group `g`. Built by the corrected O(d n)
/// recurrence of digest §5.3 (the thesis's Listing 3.3 ignores `c_1` and uses an inclusive bound).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubspaceTables {
    d: usize,
    n: u32,
    /// Per-dimension number of allowed levels (exclusive bound on 0-based levels), clamped to n.
    c: Vec<u32>,
    /// Row t (0..=d) holds a(t, 0..n); row 0 is the delta (one empty vector of sum 0).
    a: Vec<u64>,
    /// group_offset[g] = Σ_{k<g} a(d,k)·2^k, for g = 0..=n; the last entry is the point count.
    group_offset: Vec<u64>,
    /// True when no dimension is truncated: pos then takes the O(d) closed form.
    regular: bool,
}

impl SubspaceTables {
    /// Tables for `c.len()` dimensions and level `n`; `c[t]` is the number of levels allowed in
    /// dimension `t` (values above `n` mean "not truncated"). Zero dimensions is allowed here (a
    /// single point: the corner sub-grids of a boundary grid).
    ///
    /// # Errors
    /// [`SgError::ZeroLevel`], [`SgError::LevelTooLarge`] (`n > MAX_LEVEL`),
    /// [`SgError::DimensionTooLarge`] (`c.len() > MAX_DIM`), [`SgError::TruncationZero`], or
    /// [`SgError::TooManyPoints`] when the point count does not fit in a `u64`.
    pub fn new(n: u32, c: &[u32]) -> Result<Self> {
        if n == 0 {
            return Err(SgError::ZeroLevel);
        }
        if n > MAX_LEVEL {
            return Err(SgError::LevelTooLarge { n, max: MAX_LEVEL });
        }
        if c.len() > MAX_DIM {
            return Err(SgError::DimensionTooLarge { d: c.len(), max: MAX_DIM });
        }
        if let Some(dim) = c.iter().position(|&ct| ct == 0) {
            return Err(SgError::TruncationZero { dim });
        }
        let d = c.len();
        let nn = n as usize;
        let c: Vec<u32> = c.iter().map(|&ct| ct.min(n)).collect();
        let regular = c.iter().all(|&ct| ct == n);
        // u128 so that no intermediate overflows before we can report the size.
        let mut a = vec![0u128; (d + 1) * nn];
        a[0] = 1;
        for t in 1..=d {
            let ct = c[t - 1] as usize;
            for j in 0..nn {
                let prev_row = a[(t - 1) * nn + j];
                let left = if j > 0 { a[t * nn + j - 1] } else { 0 };
                let cut = if j >= ct { a[(t - 1) * nn + j - ct] } else { 0 };
                a[t * nn + j] =
                    left.checked_add(prev_row).and_then(|s| s.checked_sub(cut)).ok_or(TOO_MANY)?;
            }
        }
        let mut group_offset = Vec::with_capacity(nn + 1);
        let mut acc: u128 = 0;
        group_offset.push(0u64);
        for g in 0..nn {
            // g < MAX_LEVEL, so 2^g is exact; checked_mul (not checked_shl, which only checks the
            // shift amount) catches bits lost off the top.
            acc = a[d * nn + g].checked_mul(1u128 << g).and_then(|v| acc.checked_add(v)).ok_or(TOO_MANY)?;
            group_offset.push(u64::try_from(acc).map_err(|_| TOO_MANY)?);
        }
        // Every a(t, j) is at most a(d, j) (pad with zero levels), so all fit in u64 now.
        let a = a.into_iter().map(|v| u64::try_from(v).map_err(|_| TOO_MANY)).collect::<Result<_>>()?;
        Ok(SubspaceTables { d, n, c, a, group_offset, regular })
    }

    /// Number of dimensions.
    #[inline]
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The level `n` (groups `0..n`).
    #[inline]
    pub fn level(&self) -> u32 {
        self.n
    }

    /// Levels allowed per dimension (exclusive bound on 0-based levels, at most `n`).
    #[inline]
    pub fn truncation(&self) -> &[u32] {
        &self.c
    }

    /// True when no dimension is truncated.
    #[inline]
    pub fn is_regular(&self) -> bool {
        self.regular
    }

    /// `a(t, j)`: level vectors over the first `t` dimensions with sum `j` (0 for `j >= n`).
    ///
    /// # Panics
    /// For `t > dim()` (like slice indexing: the tables are read in inner loops).
    #[inline]
    pub fn count(&self, t: usize, j: u32) -> u64 {
        if j >= self.n { 0 } else { self.a[t * self.n as usize + j as usize] }
    }

    /// Number of blocks in group `g` (`a(d, g)`).
    #[inline]
    pub fn blocks_in_group(&self, g: u32) -> u64 {
        self.count(self.d, g)
    }

    /// Linear offset of the first point of group `g`, for `g = 0..=n` (`group_offset(n)` is the
    /// number of points).
    ///
    /// # Panics
    /// For `g > n`.
    #[inline]
    pub fn group_offset(&self, g: u32) -> u64 {
        self.group_offset[g as usize]
    }

    /// Number of points.
    #[inline]
    pub fn len(&self) -> u64 {
        self.group_offset[self.n as usize]
    }

    /// Always false: every grid holds at least the centre point.
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of blocks (subspaces).
    pub fn num_blocks(&self) -> u64 {
        (0..self.n).map(|g| self.blocks_in_group(g)).sum()
    }

    /// Rank of block `l0` (0-based levels, `level(t)` for dimension `t`) within its group: the
    /// corrected Eq. 3.16 (`j = 1..=l_t`, digest §5.4), O(d + n); for untruncated grids the
    /// telescoped closed form `Σ_t a(t, S_t) − a(t, S_{t−1})`, O(d). The block must be admissible.
    #[inline]
    pub fn pos_with(&self, level: impl Fn(usize) -> u32) -> u64 {
        let mut pos = 0u64;
        let mut prefix = if self.d > 0 { level(0) } else { 0 };
        if self.regular {
            for t in 2..=self.d {
                let next = prefix + level(t - 1);
                pos += self.count(t, next) - self.count(t, prefix);
                prefix = next;
            }
        } else {
            for t in 2..=self.d {
                let lt = level(t - 1);
                for j in 1..=lt {
                    pos += self.count(t - 1, prefix + j);
                }
                prefix += lt;
            }
        }
        pos
    }

    /// [`pos_with`](Self::pos_with) on a slice of 0-based levels.
    #[inline]
    pub fn pos(&self, l0: &[u32]) -> u64 {
        self.pos_with(|t| l0[t])
    }

    /// Rank by the general (truncated) formula even for regular grids; a test oracle for the O(d)
    /// closed form.
    pub fn pos_general(&self, l0: &[u32]) -> u64 {
        let mut pos = 0u64;
        let mut prefix = if self.d > 0 { l0[0] } else { 0 };
        for t in 2..=self.d {
            for j in 1..=l0[t - 1] {
                pos += self.count(t - 1, prefix + j);
            }
            prefix += l0[t - 1];
        }
        pos
    }

    /// Inverse of [`pos`](Self::pos): writes the 0-based level vector of block `b` of group `g`
    /// into `l0` (length `d`). Requires `g < n` and `b < blocks_in_group(g)`. O(d + n).
    ///
    /// # Panics
    /// When `l0` is shorter than `d`; debug builds also check the requirements.
    pub fn inv_pos(&self, g: u32, mut b: u64, l0: &mut [u32]) {
        debug_assert!(g < self.n && b < self.blocks_in_group(g));
        if self.d == 0 {
            return;
        }
        let mut rest = g;
        for t in (2..=self.d).rev() {
            let ct = self.c[t - 1];
            let mut k = 0u32;
            // Colex order: blocks with a smaller last level come first; peel dimension t.
            while k < ct && k <= rest {
                let cnt = self.count(t - 1, rest - k);
                if b < cnt {
                    break;
                }
                b -= cnt;
                k += 1;
            }
            l0[t - 1] = k;
            rest -= k;
        }
        l0[0] = rest;
    }

    /// Linear index of the point with 0-based levels `level(t)` and in-level positions `p(t)`
    /// (`p_t = (i_t − 1)/2`): `group_offset[g] + pos(l)·2^g + row-major in-block index`.
    #[inline]
    pub fn index_with(&self, level: impl Fn(usize) -> u32, p: impl Fn(usize) -> u32) -> u64 {
        let mut g = 0u32;
        let mut k = 0u64;
        for t in 0..self.d {
            let lt = level(t);
            g += lt;
            k = (k << lt) | p(t) as u64;
        }
        self.group_offset[g as usize] + (self.pos_with(&level) << g) + k
    }

    /// Inverse of [`index_with`](Self::index_with) for `j < len()`: writes 0-based levels and
    /// in-level positions.
    ///
    /// # Panics
    /// When the buffers are shorter than `d`; for `j >= len()` the result is meaningless.
    pub fn point_of(&self, j: u64, l0: &mut [u32], p: &mut [u32]) {
        let g = self.group_of(j);
        let r = j - self.group_offset[g as usize];
        self.inv_pos(g, r >> g, l0);
        let mut k = r & ((1u64 << g) - 1);
        for t in (0..self.d).rev() {
            p[t] = (k & ((1u64 << l0[t]) - 1)) as u32;
            k >>= l0[t];
        }
    }

    /// The group holding linear index `j < len()`.
    #[inline]
    pub fn group_of(&self, j: u64) -> u32 {
        // Largest g with group_offset[g] <= j; empty groups share their offset with the next one.
        self.group_offset[1..].partition_point(|&o| o <= j) as u32
    }
}

const TOO_MANY: SgError = SgError::TooManyPoints { what: "u64" };
