//! The Thomas algorithm (Gaussian elimination without pivoting): the sequential reference, one
//! system per rayon task, and a lane-parallel version that walks `LANES` interleaved systems in
//! step so the compiler vectorises across systems.

use rayon::prelude::*;

use super::real::Real;
use crate::{Error, Result};

/// Systems handled together by [`thomas_lanes`]: 8 `f64` fill one AVX-512 register or two AVX2
/// registers; the same count for `f32` keeps one code path.
pub(crate) const LANES: usize = 8;

/// Solves one contiguous system in place (`d` becomes `x`). `scratch` holds the modified
/// super-diagonal `c'` (length `m`). `a[0]` and `c[m-1]` are ignored.
///
/// Errors with [`Error::ZeroPivot`] (naming `system`) when a pivot `b_k - a_k c'_{k-1}` is zero.
pub(crate) fn thomas_contiguous<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &mut [T],
    scratch: &mut [T],
    system: usize,
) -> Result<()> {
    let m = d.len();
    if m == 0 {
        return Ok(());
    }
    let mut pivot = b[0];
    check_pivot(pivot, system, 0)?;
    scratch[0] = c[0] / pivot;
    d[0] = d[0] / pivot;
    for k in 1..m {
        pivot = b[k] - a[k] * scratch[k - 1];
        check_pivot(pivot, system, k)?;
        scratch[k] = c[k] / pivot;
        d[k] = (d[k] - a[k] * d[k - 1]) / pivot;
    }
    for k in (0..m - 1).rev() {
        d[k] = d[k] - scratch[k] * d[k + 1];
    }
    Ok(())
}

#[inline]
fn check_pivot<T: Real>(pivot: T, system: usize, row: usize) -> Result<()> {
    if pivot == T::zero() {
        return Err(Error::ZeroPivot { system, row });
    }
    Ok(())
}

/// Thomas over a strided batch, one system after another.
pub(crate) fn thomas_strided_seq<T: Real>(a: &[T], b: &[T], c: &[T], d: &mut [T], m: usize) -> Result<()> {
    let mut scratch = vec![T::zero(); m];
    for (g, dg) in d.chunks_mut(m).enumerate() {
        let r = g * m..(g + 1) * m;
        thomas_contiguous(&a[r.clone()], &b[r.clone()], &c[r], dg, &mut scratch, g)?;
    }
    Ok(())
}

/// Thomas over a strided batch, systems spread over rayon's threads. Each task solves
/// [`STRIDED_LANES`] neighbouring systems in step ([`StridedLanes`]), which hides the latency of
/// the one division per row; fewer than that many trailing systems run one at a time.
pub(crate) fn thomas_strided_par<T: Real>(a: &[T], b: &[T], c: &[T], d: &mut [T], m: usize) -> Result<()> {
    const L: usize = STRIDED_LANES;
    // Several lane groups per task keep scheduling overhead small for tiny m.
    let groups_per_task = (4096 / (m.max(1) * L)).max(1);
    d.par_chunks_mut(m * L * groups_per_task).enumerate().try_for_each_init(
        || vec![T::zero(); 2 * m * L],
        |scratch, (t, chunk)| {
            let g_task = t * L * groups_per_task;
            let full = chunk.len() / (m * L);
            let mut groups = chunk.chunks_exact_mut(m * L);
            for (j, dg) in groups.by_ref().enumerate() {
                let g0 = g_task + j * L;
                let r = g0 * m..(g0 + L) * m;
                StridedLanes { a: &a[r.clone()], b: &b[r.clone()], c: &c[r], m, g0 }
                    .solve::<L>(dg, scratch)?;
            }
            let rest = groups.into_remainder();
            let g_rest = g_task + full * L;
            for (j, dg) in rest.chunks_mut(m).enumerate() {
                let g = g_rest + j;
                let r = g * m..(g + 1) * m;
                thomas_contiguous(&a[r.clone()], &b[r.clone()], &c[r], dg, scratch, g)?;
            }
            Ok(())
        },
    )
}

/// Systems of a strided batch solved together by [`thomas_strided_par`]. Each row costs a
/// division whose latency (13-20 cycles) dominates a lone system; a second system in step fills
/// it (2.0x one system with two divisions per row, m = 512 f64, one core). More lanes lose
/// at power-of-two `m`: 4 lanes x 4 arrays are 16 streams on the same L1 set, beyond its 8 ways.
pub(crate) const STRIDED_LANES: usize = 2;

/// `L` consecutive systems of a strided batch, `a`, `b`, `c` covering exactly their `L * m`
/// elements; `g0` names the first system in errors.
struct StridedLanes<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    m: usize,
    g0: usize,
}

impl<'a, T: Real> StridedLanes<'a, T> {
    /// Thomas on the `L` systems at once, in place in `d` (their `L * m` right-hand sides).
    /// One reciprocal per row replaces Thomas's two divisions. `scratch` (`2 L m`) holds `c'`
    /// and `d'` row-major across lanes: the forward sweep only reads the lanes and the backward
    /// sweep only writes them, because lanes `m` elements apart alias in the store-to-load
    /// forwarding logic (4 KiB apart for `m = 512` in f64) and stall a sweep that does both.
    fn solve<const L: usize>(&self, d: &mut [T], scratch: &mut [T]) -> Result<()> {
        let m = self.m;
        let lanes = |s: &'a [T]| -> [&'a [T]; L] { std::array::from_fn(|l| &s[l * m..(l + 1) * m]) };
        let (a, b, c) = (lanes(self.a), lanes(self.b), lanes(self.c));
        let (cps, dps) = scratch[..2 * m * L].split_at_mut(m * L);
        {
            let dl: [&[T]; L] = std::array::from_fn(|l| &d[l * m..(l + 1) * m]);
            let (mut cp, mut dp) = ([T::zero(); L], [T::zero(); L]);
            for k in 0..m {
                let mut zero = false;
                for l in 0..L {
                    // Row 0 ignores a[0] entirely (it may hold garbage, even NaN).
                    let ak = if k == 0 { T::zero() } else { a[l][k] };
                    let pivot = b[l][k] - ak * cp[l];
                    zero |= pivot == T::zero();
                    let inv = T::one() / pivot;
                    cp[l] = c[l][k] * inv;
                    dp[l] = (dl[l][k] - ak * dp[l]) * inv;
                }
                cps[k * L..(k + 1) * L].copy_from_slice(&cp);
                dps[k * L..(k + 1) * L].copy_from_slice(&dp);
                if zero {
                    return Err(self.zero_pivot_lane::<L>(cps, k));
                }
            }
        }
        // Back substitution; row m-1 ignores c[m-1].
        let mut x = [T::zero(); L];
        x.copy_from_slice(&dps[(m - 1) * L..]);
        let dl: [&mut [T]; L] = {
            let mut rows = d.chunks_exact_mut(m);
            std::array::from_fn(|_| rows.next().expect("d holds L systems"))
        };
        for l in 0..L {
            dl[l][m - 1] = x[l];
        }
        for k in (0..m - 1).rev() {
            for l in 0..L {
                x[l] = dps[k * L + l] - cps[k * L + l] * x[l];
                dl[l][k] = x[l];
            }
        }
        Ok(())
    }

    fn zero_pivot_lane<const L: usize>(&self, scratch: &[T], k: usize) -> Error {
        let m = self.m;
        for l in 0..L {
            let i = l * m + k;
            let pivot = if k == 0 { self.b[i] } else { self.b[i] - self.a[i] * scratch[(k - 1) * L + l] };
            if pivot == T::zero() {
                return Error::ZeroPivot { system: self.g0 + l, row: k };
            }
        }
        Error::ZeroPivot { system: self.g0, row: k }
    }
}

/// Thomas on an interleaved batch of `systems` systems: lanes of [`LANES`] neighbouring systems
/// advance row by row together (plain arrays of `LANES` values, which the compiler turns into
/// SIMD), lane groups spread over rayon's threads; a remainder of fewer than `LANES` systems
/// runs with one lane.
pub(crate) fn thomas_interleaved<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &mut [T],
    m: usize,
    systems: usize,
) -> Result<()> {
    if m == 0 || systems == 0 {
        return Ok(());
    }
    let full = systems / LANES;
    // Each task owns whole lane groups, but their rows are scattered through `d`, so tasks
    // write through a shared pointer to disjoint indices.
    let out = SharedMut(d.as_mut_ptr());
    let groups: Vec<(usize, usize)> =
        (0..full).map(|q| (q * LANES, LANES)).chain((full * LANES..systems).map(|g| (g, 1))).collect();
    groups.par_iter().try_for_each_init(
        || vec![T::zero(); m * LANES],
        |scratch, &(g0, width)| {
            let view = Interleaved { a, b, c, m, systems, g0 };
            // SAFETY: every (row, lane) index written by this group, k * systems + g0 + l with
            // l < width, belongs to this group alone, and `d` outlives the parallel loop.
            let d = unsafe { std::slice::from_raw_parts_mut(out.get(), m * systems) };
            if width == LANES { view.solve::<LANES>(d, scratch) } else { view.solve::<1>(d, scratch) }
        },
    )
}

#[derive(Clone, Copy)]
struct SharedMut<T>(*mut T);
// SAFETY: used only to write disjoint indices from different threads (see thomas_interleaved).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}
impl<T> SharedMut<T> {
    fn get(&self) -> *mut T {
        self.0
    }
}

struct Interleaved<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    m: usize,
    systems: usize,
    g0: usize,
}

impl<T: Real> Interleaved<'_, T> {
    /// Thomas on systems `g0 .. g0 + L` at once. Pivots are checked once per row over all
    /// lanes (a vector compare), and the failing lane is searched only on error.
    fn solve<const L: usize>(&self, d: &mut [T], scratch: &mut [T]) -> Result<()> {
        let (m, s, g0) = (self.m, self.systems, self.g0);
        let row = |k: usize| k * s + g0..k * s + g0 + L;
        let mut cp = [T::zero(); L];
        let mut dp = [T::zero(); L];
        for k in 0..m {
            let (ak, bk, ck) = (&self.a[row(k)], &self.b[row(k)], &self.c[row(k)]);
            let dk = &mut d[row(k)];
            let mut zero = false;
            // Row 0 ignores a[0] entirely (it may hold garbage, even NaN).
            let first = k == 0;
            for l in 0..L {
                let ak = if first { T::zero() } else { ak[l] };
                let (cprev, dprev) = (cp[l], dp[l]);
                let pivot = bk[l] - ak * cprev;
                zero |= pivot == T::zero();
                let inv = T::one() / pivot;
                cp[l] = ck[l] * inv;
                dp[l] = (dk[l] - ak * dprev) * inv;
                dk[l] = dp[l];
            }
            if zero {
                return Err(self.zero_pivot_lane::<L>(scratch, k));
            }
            scratch[k * L..(k + 1) * L].copy_from_slice(&cp);
        }
        // Back substitution; row m-1 ignores c[m-1].
        let mut x = [T::zero(); L];
        x.copy_from_slice(&d[row(m - 1)]);
        for k in (0..m - 1).rev() {
            let dk = &mut d[row(k)];
            let cpk = &scratch[k * L..(k + 1) * L];
            for l in 0..L {
                x[l] = dk[l] - cpk[l] * x[l];
                dk[l] = x[l];
            }
        }
        Ok(())
    }

    fn zero_pivot_lane<const L: usize>(&self, scratch: &[T], k: usize) -> Error {
        let (s, g0) = (self.systems, self.g0);
        for l in 0..L {
            let i = k * s + g0 + l;
            let pivot = if k == 0 { self.b[i] } else { self.b[i] - self.a[i] * scratch[(k - 1) * L + l] };
            if pivot == T::zero() {
                return Error::ZeroPivot { system: g0 + l, row: k };
            }
        }
        Error::ZeroPivot { system: g0, row: k }
    }
}

/// The LU factors of one tridiagonal matrix, computed once and applied to many right-hand sides.
///
/// ```
/// use prefix_ops::tridiagonal::TridiagonalBatch;
/// let (a, b, c) = ([0.0f64, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]);
/// let factors = TridiagonalBatch::strided(&a, &b, &c, 3)?.factor()?;
/// // Two right-hand sides one after another.
/// let mut d = [5.0f64, 6.0, 5.0, 4.0, 4.0, 4.0];
/// factors.solve_many(&mut d)?;
/// assert!((d[0] - 1.0).abs() < 1e-12 && (d[5] - 6.0 / 7.0).abs() < 1e-12);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ThomasFactors<T> {
    /// Sub-diagonal `a` (with `a[0] = 0`).
    a: Vec<T>,
    /// `c'_k = c_k / pivot_k`.
    cp: Vec<T>,
    /// `1 / pivot_k`.
    inv_pivot: Vec<T>,
}

impl<T: Real> ThomasFactors<T> {
    /// Factors one system `a`, `b`, `c` of length `m`. Errors on a zero pivot.
    pub(crate) fn new(a: &[T], b: &[T], c: &[T]) -> Result<Self> {
        let m = b.len();
        let mut fa = a.to_vec();
        let (mut cp, mut inv_pivot) = (vec![T::zero(); m], vec![T::zero(); m]);
        if m > 0 {
            fa[0] = T::zero();
        }
        for k in 0..m {
            let prev = if k == 0 { T::zero() } else { cp[k - 1] };
            let pivot = b[k] - fa[k] * prev;
            check_pivot(pivot, 0, k)?;
            inv_pivot[k] = T::one() / pivot;
            cp[k] = if k + 1 == m { T::zero() } else { c[k] * inv_pivot[k] };
        }
        Ok(ThomasFactors { a: fa, cp, inv_pivot })
    }

    /// The system size `m`.
    pub fn size(&self) -> usize {
        self.cp.len()
    }

    /// Solves `A x = d` in place for one right-hand side of length `m`.
    pub fn solve(&self, d: &mut [T]) -> Result<()> {
        super::batch::check_len("d (right-hand side)", d.len(), self.size())?;
        self.apply(d);
        Ok(())
    }

    /// Solves for several right-hand sides stored one after another (`d.len()` a multiple of
    /// `m`), in parallel.
    pub fn solve_many(&self, d: &mut [T]) -> Result<()> {
        let m = self.size();
        if m == 0 {
            return super::batch::check_len("d (right-hand sides)", d.len(), 0);
        }
        if !d.len().is_multiple_of(m) {
            return Err(Error::Invalid(format!(
                "tridiagonal: {} right-hand side values are not a multiple of m = {m}",
                d.len()
            )));
        }
        d.par_chunks_mut(m).for_each(|rhs| self.apply(rhs));
        Ok(())
    }

    fn apply(&self, d: &mut [T]) {
        let m = d.len();
        let mut prev = T::zero();
        for k in 0..m {
            prev = (d[k] - self.a[k] * prev) * self.inv_pivot[k];
            d[k] = prev;
        }
        let mut next = T::zero();
        for k in (0..m).rev() {
            next = d[k] - self.cp[k] * next;
            d[k] = next;
        }
    }
}
