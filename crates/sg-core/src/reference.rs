//! Sequential reference algorithms on plain value slices: the oracles for `sg-cpu` and
//! `sg-cuda`.
//!
//! Every function takes a [`GridSpec`], the values as one slice of `len · s` entries stored
//! point-major (`s` components per point; `s = 1` for scalar grids), and works in place or
//! writes `s` outputs per evaluation point. Two independent forms exist for each operation:
//!
//! | operation | non-recursive (bijection) | recursive (tree walk) |
//! |---|---|---|
//! | hierarchize | [`hierarchize`] (Listing 3.4) | [`hierarchize_recursive`] (Listing 3.1) |
//! | dehierarchize | [`dehierarchize`] (digest §6.5) | [`dehierarchize_recursive`] |
//! | evaluate | [`evaluate_batch_into`] (Listings 3.5/4.3) | [`evaluate_recursive_into`] (Listing 3.2) |
//!
//! plus the brute-force [`evaluate_brute_force_into`] (sum over all basis functions).

use crate::alloc::{checked_len, try_vec};
use crate::basis::{Side, basis_1d, basis_cell, integral_1d, parent_1d, pow2};
use crate::error::{Result, SgError};
use crate::real::Real;
use crate::spec::{GridSpec, MAX_DIM};

/// Checks `s >= 1` and `values.len() == spec.len() · s`.
///
/// # Errors
/// [`SgError::Zero`] for `s = 0`, [`SgError::LengthMismatch`] otherwise.
pub fn check_values<T>(spec: &GridSpec, values: &[T], s: usize) -> Result<()> {
    if s == 0 {
        return Err(SgError::Zero { what: "values per point (s)" });
    }
    let want = checked_len::<T>("grid values", spec.len(), s)?;
    if values.len() != want {
        return Err(SgError::LengthMismatch { what: "grid values", expected: want, got: values.len() });
    }
    Ok(())
}

/// Checks one evaluation point: `d` coordinates, each finite and in `[0, 1]`.
///
/// # Errors
/// [`SgError::LengthMismatch`], [`SgError::NonFinite`] or [`SgError::OutsideDomain`], naming
/// the point as `row`.
pub fn check_point_coords<T: Real>(d: usize, x: &[T], row: usize) -> Result<()> {
    if x.len() != d {
        return Err(SgError::LengthMismatch { what: "point coordinates", expected: d, got: x.len() });
    }
    for (dim, &v) in x.iter().enumerate() {
        if !v.is_finite() {
            return Err(SgError::NonFinite { row, dim, value: v.to_f64() });
        }
        if v < T::zero() || v > T::one() {
            return Err(SgError::OutsideDomain { row, dim, value: v.to_f64() });
        }
    }
    Ok(())
}

/// Index of the `side` parent in dimension `t` of the point in `(lv, iv)`, or `None` for a
/// boundary parent of a zero-boundary grid. Leaves `(lv, iv)` unchanged.
#[inline]
fn parent_index(spec: &GridSpec, lv: &mut [u32], iv: &mut [u32], t: usize, side: Side) -> Option<usize> {
    let (l, i) = (lv[t], iv[t]);
    let (pl, pi) = parent_1d(l, i, side);
    if pl == 0 && !spec.has_boundary() {
        return None;
    }
    lv[t] = pl;
    iv[t] = pi;
    let k = spec.gp2idx_unchecked(lv, iv) as usize;
    lv[t] = l;
    iv[t] = i;
    Some(k)
}

/// One dimension-`t` sweep of Listing 3.4: `u_j ← u_j + sign·(u_left + u_right)/2`, visiting
/// `order` (descending for hierarchization: children before parents; ascending for the inverse).
fn sweep<T: Real>(spec: &GridSpec, values: &mut [T], s: usize, t: usize, sign: T, ascending: bool) {
    let d = spec.dim();
    let (mut lv, mut iv) = ([0u32; MAX_DIM], [0u32; MAX_DIM]);
    let (lv, iv) = (&mut lv[..d], &mut iv[..d]);
    let half = T::from_f64(0.5);
    let n = spec.len();
    for step in 0..n {
        let j = if ascending { step } else { n - 1 - step };
        spec.idx2gp_unchecked(j, lv, iv);
        if lv[t] == 0 {
            continue; // boundary in dimension t: a level-0 function, no parents
        }
        let left = parent_index(spec, lv, iv, t, Side::Left);
        let right = parent_index(spec, lv, iv, t, Side::Right);
        let j = j as usize;
        for c in 0..s {
            let lval = left.map_or(T::zero(), |k| values[k * s + c]);
            let rval = right.map_or(T::zero(), |k| values[k * s + c]);
            values[j * s + c] += sign * half * (lval + rval);
        }
    }
}

/// Nodal values → hierarchical surpluses, in place (Listing 3.4: per dimension, descending
/// linear index, parents located through `idx2gp`/`gp2idx`).
///
/// # Errors
/// [`SgError::LengthMismatch`] when `values.len() != len · s`.
pub fn hierarchize<T: Real>(spec: &GridSpec, values: &mut [T], s: usize) -> Result<()> {
    check_values(spec, values, s)?;
    for t in 0..spec.dim() {
        sweep(spec, values, s, t, -T::one(), false);
    }
    Ok(())
}

/// Hierarchical surpluses → nodal values, in place: the exact inverse of [`hierarchize`]
/// (dimensions in reverse, ascending index so that parents are nodal again before their
/// children use them).
///
/// # Errors
/// As [`hierarchize`].
pub fn dehierarchize<T: Real>(spec: &GridSpec, values: &mut [T], s: usize) -> Result<()> {
    check_values(spec, values, s)?;
    for t in (0..spec.dim()).rev() {
        sweep(spec, values, s, t, T::one(), true);
    }
    Ok(())
}

/// State of a recursive 1-D walk along dimension `t`.
struct Pole<'a, T> {
    spec: &'a GridSpec,
    values: &'a mut [T],
    s: usize,
    c: usize,
    t: usize,
    bound: u32,
    budget: u32,
}

impl<T: Real> Pole<'_, T> {
    /// Post-order (hierarchize) or pre-order (dehierarchize) walk of the 1-D subtree rooted at
    /// `(lv, iv)`; `sum0` is the 0-based level sum of the point.
    fn walk(&mut self, lv: &mut [u32], iv: &mut [u32], sum0: u32, lval: T, rval: T, hier: bool) {
        let idx = self.spec.gp2idx_unchecked(lv, iv) as usize * self.s + self.c;
        let half = T::from_f64(0.5);
        let mut v = self.values[idx];
        if !hier {
            v += half * (lval + rval);
            self.values[idx] = v;
        }
        let (l, i) = (lv[self.t], iv[self.t]);
        if l < self.bound && sum0 < self.budget {
            lv[self.t] = l + 1;
            iv[self.t] = 2 * i - 1;
            self.walk(lv, iv, sum0 + 1, lval, v, hier);
            iv[self.t] = 2 * i + 1;
            self.walk(lv, iv, sum0 + 1, v, rval, hier);
            lv[self.t] = l;
            iv[self.t] = i;
        }
        if hier {
            self.values[idx] = v - half * (lval + rval);
        }
    }
}

fn recursive<T: Real>(spec: &GridSpec, values: &mut [T], s: usize, hier: bool) {
    let d = spec.dim();
    let (mut lv, mut iv) = ([0u32; MAX_DIM], [0u32; MAX_DIM]);
    let (lv, iv) = (&mut lv[..d], &mut iv[..d]);
    let dims: Vec<usize> = if hier { (0..d).collect() } else { (0..d).rev().collect() };
    for t in dims {
        for j in 0..spec.len() {
            spec.idx2gp_unchecked(j, lv, iv);
            if lv[t] != 1 {
                continue; // only the roots of the 1-D trees along t
            }
            let sum0: u32 = lv.iter().filter(|&&l| l > 0).map(|&l| l - 1).sum();
            let boundary_idx = |lv: &mut [u32], iv: &mut [u32], side: u32| {
                lv[t] = 0;
                iv[t] = side;
                let k = spec.gp2idx_unchecked(lv, iv) as usize;
                lv[t] = 1;
                iv[t] = 1;
                k
            };
            let bounds = spec.has_boundary().then(|| (boundary_idx(lv, iv, 0), boundary_idx(lv, iv, 1)));
            for c in 0..s {
                let (lval, rval) =
                    bounds.map_or((T::zero(), T::zero()), |(a, b)| (values[a * s + c], values[b * s + c]));
                let mut pole =
                    Pole { spec, values, s, c, t, bound: spec.truncation()[t], budget: spec.level() - 1 };
                pole.walk(lv, iv, sum0, lval, rval, hier);
            }
        }
    }
}

/// [`hierarchize`] by recursion along each dimension from the level-1 points (Listing 3.1):
/// parent values are passed down the recursion instead of being looked up.
///
/// # Errors
/// As [`hierarchize`].
pub fn hierarchize_recursive<T: Real>(spec: &GridSpec, values: &mut [T], s: usize) -> Result<()> {
    check_values(spec, values, s)?;
    recursive(spec, values, s, true);
    Ok(())
}

/// [`dehierarchize`] by recursion (pre-order: a point becomes nodal before its children).
///
/// # Errors
/// As [`hierarchize`].
pub fn dehierarchize_recursive<T: Real>(spec: &GridSpec, values: &mut [T], s: usize) -> Result<()> {
    check_values(spec, values, s)?;
    recursive(spec, values, s, false);
    Ok(())
}

/// For each block, the point whose basis function's support contains `x` and that basis
/// function's value: `(linear index, product of 1-D basis values)`, in block order (Eq. 3.19
/// with the cell clamp). The interpolant at `x` is `Σ values[index] · weight`.
///
/// # Errors
/// `x` with the wrong length, non-finite, or outside `[0, 1]^d`.
pub fn contributions<T: Real>(spec: &GridSpec, x: &[T], out: &mut Vec<(u64, T)>) -> Result<()> {
    check_point_coords(spec.dim(), x, 0)?;
    out.clear();
    for block in spec.blocks() {
        let (k, p) = locate_in_block(block.levels(), block.sides(), x);
        out.push((block.offset() + k, p));
    }
    Ok(())
}

/// In-block position and basis product of the one basis function of this block at `x`.
#[inline]
fn locate_in_block<T: Real>(levels: &[u32], sides: u64, x: &[T]) -> (u64, T) {
    let mut k = 0u64;
    let mut p = T::one();
    for (t, &l) in levels.iter().enumerate() {
        if l == 0 {
            p *= if (sides >> t) & 1 == 1 { x[t] } else { T::one() - x[t] };
        } else {
            let (cell, v) = basis_cell(l - 1, x[t]);
            k = (k << (l - 1)) | cell as u64;
            p *= v;
        }
    }
    (k, p)
}

/// Interpolant at `m` points (`points`: `m × d` row-major) into `out` (`m × s`), block by
/// block with the points in the inner loop (Listing 3.5 with the loop interchange of
/// Listing 4.3). Values must be hierarchical surpluses.
///
/// # Errors
/// Slice lengths, or a point that is non-finite or outside `[0, 1]^d`.
pub fn evaluate_batch_into<T: Real>(
    spec: &GridSpec,
    values: &[T],
    s: usize,
    points: &[T],
    out: &mut [T],
) -> Result<()> {
    check_values(spec, values, s)?;
    let d = spec.dim();
    let m = check_points(d, points)?;
    let want = checked_len::<T>("evaluation output", m as u64, s)?;
    if out.len() != want {
        return Err(SgError::LengthMismatch { what: "evaluation output", expected: want, got: out.len() });
    }
    out.fill(T::zero());
    for block in spec.blocks() {
        for (j, x) in points.chunks_exact(d).enumerate() {
            let (k, p) = locate_in_block(block.levels(), block.sides(), x);
            let row = (block.offset() + k) as usize * s;
            for c in 0..s {
                out[j * s + c] += values[row + c] * p;
            }
        }
    }
    Ok(())
}

/// Validates a flat `m × d` point array; returns `m`.
pub(crate) fn check_points<T: Real>(d: usize, points: &[T]) -> Result<usize> {
    if !points.len().is_multiple_of(d) {
        return Err(SgError::NotMultiple { what: "flat points (m × d)", len: points.len(), row: d });
    }
    for (row, x) in points.chunks_exact(d).enumerate() {
        check_point_coords(d, x, row)?;
    }
    Ok(points.len() / d)
}

/// Argument checks shared by the single-point evaluators; zeroes `out`.
fn check_single_point<T: Real>(
    spec: &GridSpec,
    values: &[T],
    s: usize,
    x: &[T],
    out: &mut [T],
) -> Result<()> {
    check_values(spec, values, s)?;
    check_point_coords(spec.dim(), x, 0)?;
    if out.len() != s {
        return Err(SgError::LengthMismatch { what: "evaluation output", expected: s, got: out.len() });
    }
    out.fill(T::zero());
    Ok(())
}

/// Interpolant at one point by recursion over the dimensions (Listing 3.2 generalized): for
/// each dimension walk down the 1-D hierarchy through the child whose support contains `x_t`,
/// within the remaining level budget; each leaf of the recursion is one block, whose value is
/// looked up with `gp2idx`. Zero basis products prune the subtree.
///
/// # Errors
/// As [`evaluate_batch_into`].
pub fn evaluate_recursive_into<T: Real>(
    spec: &GridSpec,
    values: &[T],
    s: usize,
    x: &[T],
    out: &mut [T],
) -> Result<()> {
    check_single_point(spec, values, s, x, out)?;
    let mut walk = EvalWalk { spec, values, s, x, out, lv: [0; MAX_DIM], iv: [0; MAX_DIM] };
    walk.dim(0, spec.level() - 1, T::one());
    Ok(())
}

struct EvalWalk<'a, T> {
    spec: &'a GridSpec,
    values: &'a [T],
    s: usize,
    x: &'a [T],
    out: &'a mut [T],
    lv: [u32; MAX_DIM],
    iv: [u32; MAX_DIM],
}

impl<T: Real> EvalWalk<'_, T> {
    fn dim(&mut self, t: usize, budget: u32, prod: T) {
        let d = self.spec.dim();
        if t == d {
            let k = self.spec.gp2idx_unchecked(&self.lv[..d], &self.iv[..d]) as usize * self.s;
            for c in 0..self.s {
                self.out[c] += self.values[k + c] * prod;
            }
            return;
        }
        let xt = self.x[t];
        if self.spec.has_boundary() {
            for side in 0..2 {
                self.lv[t] = 0;
                self.iv[t] = side;
                let p = prod * basis_1d(0, side, xt);
                if p != T::zero() {
                    self.dim(t + 1, budget, p);
                }
            }
        }
        // Walk down the 1-D tree: start at the centre, step to the child containing x_t.
        let (mut l, mut i) = (1u32, 1u32);
        let top = self.spec.truncation()[t].min(budget + 1);
        loop {
            self.lv[t] = l;
            self.iv[t] = i;
            let p = prod * basis_1d(l, i, xt);
            if p != T::zero() {
                self.dim(t + 1, budget - (l - 1), p);
            }
            if l >= top {
                break;
            }
            let centre = T::from_f64(i as f64) / pow2::<T>(l);
            i = if xt < centre { 2 * i - 1 } else { 2 * i + 1 };
            l += 1;
        }
    }
}

/// Interpolant at one point as the sum over **all** grid points of surplus × basis function,
/// O(N·d): the brute-force oracle for the two fast forms.
///
/// # Errors
/// As [`evaluate_batch_into`].
pub fn evaluate_brute_force_into<T: Real>(
    spec: &GridSpec,
    values: &[T],
    s: usize,
    x: &[T],
    out: &mut [T],
) -> Result<()> {
    check_single_point(spec, values, s, x, out)?;
    let d = spec.dim();
    let (mut lv, mut iv) = (vec![0u32; d], vec![0u32; d]);
    for j in 0..spec.len() {
        spec.idx2gp_unchecked(j, &mut lv, &mut iv);
        let phi = (0..d).fold(T::one(), |p, t| p * basis_1d(lv[t], iv[t], x[t]));
        for c in 0..s {
            out[c] += values[j as usize * s + c] * phi;
        }
    }
    Ok(())
}

/// Integral over `[0, 1]^d` of the interpolant (values are surpluses): each basis function
/// integrates to `Π_t 2^−l_t` (1/2 per boundary dimension). Writes `s` components.
///
/// # Errors
/// Slice lengths.
pub fn integral_into<T: Real>(spec: &GridSpec, values: &[T], s: usize, out: &mut [T]) -> Result<()> {
    check_values(spec, values, s)?;
    if out.len() != s {
        return Err(SgError::LengthMismatch { what: "integral output", expected: s, got: out.len() });
    }
    out.fill(T::zero());
    for block in spec.blocks() {
        let w = T::from_f64(block.levels().iter().map(|&l| integral_1d(l)).product());
        let start = block.offset() as usize * s;
        let rows = &values[start..start + block.len() as usize * s];
        for row in rows.chunks_exact(s) {
            for c in 0..s {
                out[c] += w * row[c];
            }
        }
    }
    Ok(())
}

/// Sparse vector × dense matrix, Listing 3.8: `y[j] = Σ_i x[i] · a[ix[i]][j]` for a row-major
/// matrix `a` with `p` columns.
///
/// ```
/// use sg_core::reference::spvm;
/// let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 3 × 2
/// assert_eq!(spvm(&[2.0, 1.0], &[0, 2], &a, 2)?, vec![7.0, 10.0]);
/// # Ok::<(), sg_core::SgError>(())
/// ```
///
/// # Errors
/// [`SgError::LengthMismatch`] for `x.len() != ix.len()`, [`SgError::Zero`] for `p == 0`,
/// [`SgError::NotMultiple`] when `a.len()` is not a multiple of `p`,
/// [`SgError::IndexOutOfRange`] for a row index past the matrix, [`SgError::Allocation`] when
/// `y` (`p` values) cannot be allocated.
pub fn spvm<T: Real>(x: &[T], ix: &[usize], a: &[T], p: usize) -> Result<Vec<T>> {
    if x.len() != ix.len() {
        return Err(SgError::LengthMismatch {
            what: "spvm row indices (one per entry of x)",
            expected: x.len(),
            got: ix.len(),
        });
    }
    if p == 0 {
        return Err(SgError::Zero { what: "spvm matrix columns (p)" });
    }
    if !a.len().is_multiple_of(p) {
        return Err(SgError::NotMultiple { what: "spvm matrix (rows × p)", len: a.len(), row: p });
    }
    let rows = a.len() / p;
    if let Some(&r) = ix.iter().find(|&&r| r >= rows) {
        return Err(SgError::IndexOutOfRange { what: "spvm matrix row", idx: r as u64, len: rows as u64 });
    }
    let mut y = try_vec("spvm result", p, T::zero())?;
    for (&xi, &r) in x.iter().zip(ix) {
        let row = &a[r * p..(r + 1) * p];
        for j in 0..p {
            y[j] += xi * row[j];
        }
    }
    Ok(y)
}

/// Relative L2 error of Eq. 3.20: `‖approx − exact‖₂ / ‖exact‖₂`; the absolute norm
/// `‖approx − exact‖₂` when `exact` is all zeros (or empty). A NaN in either input gives NaN.
///
/// # Errors
/// [`SgError::LengthMismatch`] when the slices differ in length.
pub fn relative_l2_error<T: Real>(approx: &[T], exact: &[T]) -> Result<T> {
    if approx.len() != exact.len() {
        return Err(SgError::LengthMismatch {
            what: "exact values (one per approximation)",
            expected: approx.len(),
            got: exact.len(),
        });
    }
    let num: f64 = approx.iter().zip(exact).map(|(&a, &e)| (a - e).to_f64().powi(2)).sum();
    let den: f64 = exact.iter().map(|&e| e.to_f64().powi(2)).sum();
    // `den > 0.0` alone would send a NaN `den` to the absolute branch and drop it.
    Ok(T::from_f64(if den > 0.0 || den.is_nan() { (num / den).sqrt() } else { num.sqrt() }))
}

/// Nodal values of `f` at every grid point, point-major with `s` components: `f(x, out)`
/// writes the `s` values of the point `x`.
///
/// # Errors
/// [`SgError::Zero`] for `s = 0`; [`SgError::Allocation`] when `len · s` values do not fit in
/// memory.
pub fn sample<T: Real>(spec: &GridSpec, s: usize, mut f: impl FnMut(&[T], &mut [T])) -> Result<Vec<T>> {
    if s == 0 {
        return Err(SgError::Zero { what: "values per point (s)" });
    }
    let n = checked_len::<T>("grid values", spec.len(), s)?;
    let mut values = try_vec("grid values", n, T::zero())?;
    let d = spec.dim();
    let mut indices = vec![0u32; d];
    let mut x = vec![T::zero(); d];
    for block in spec.blocks() {
        for k in 0..block.len() {
            block.indices_at(k, &mut indices);
            for t in 0..d {
                x[t] = T::from_f64(crate::basis::coordinate_1d(block.levels()[t], indices[t]));
            }
            let j = (block.offset() + k) as usize * s;
            f(&x, &mut values[j..j + s]);
        }
    }
    Ok(values)
}
