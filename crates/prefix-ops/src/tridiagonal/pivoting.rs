//! Gaussian elimination with partial pivoting for tridiagonal systems, as LAPACK's `gtsv`:
//! solves systems that are not diagonally dominant, where Thomas and the parallel reductions
//! can divide by (nearly) zero.
//!
//! Row `i` is exchanged with row `i + 1` when `|a_{i+1}| > |pivot_i|` (`gtsv`'s rule); the
//! exchanged row then reaches two places right, so U has a second super-diagonal. Unlike `gtsv`
//! the choice is made without a branch: both outcomes are computed and one is selected, so
//! random pivoting patterns cost no mispredictions, and [`lanes`] systems advance in step, which
//! hides the latency of the one division per row (a reciprocal, shared by the multiplier and the
//! back substitution) and lets the compiler vectorise across systems. Strided batches run
//! [`STRIDED_LANES`] neighbouring systems per step, interleaved ones [`INTERLEAVED_LANES`]
//! adjacent columns; rayon spreads the groups over threads.

use rayon::prelude::*;

use super::batch::{Layout, TridiagonalBatch};
use super::real::Real;
use crate::{Error, Result};

/// Strided systems eliminated in step per thread (a tuning parameter): four chains of
/// division latency in flight, 4 x 4 input streams.
pub(crate) const STRIDED_LANES: usize = 4;

/// Interleaved systems eliminated in step (a tuning parameter): eight adjacent `f64` fill a
/// cache line, so each row of a group is one line per array.
pub(crate) const INTERLEAVED_LANES: usize = 8;

/// Lane groups per rayon task, so a task amortises its scheduling and scratch for small `m`.
const MIN_UNKNOWNS_PER_TASK: usize = 1 << 14;

/// Solves every system of the batch with partial pivoting, in place (`d` becomes `x`). Errors
/// with [`Error::ZeroPivot`] on an exactly zero pivot (a singular matrix, `gtsv`'s `INFO > 0`).
pub(crate) fn solve_pivoting<T: Real>(batch: &TridiagonalBatch<'_, T>, d: &mut [T]) -> Result<()> {
    let (m, g) = (batch.m, batch.systems);
    if m == 0 || g == 0 {
        return Ok(());
    }
    let (a, b, c) = (batch.a, batch.b, batch.c);
    match batch.layout {
        Layout::Strided => {
            const L: usize = STRIDED_LANES;
            let groups_per_task = (MIN_UNKNOWNS_PER_TASK / (m * L)).max(1);
            d.par_chunks_mut(m * L * groups_per_task).enumerate().try_for_each_init(
                || vec![T::zero(); 4 * m * L],
                |scratch, (t, chunk)| {
                    let g_task = t * L * groups_per_task;
                    let dp = chunk.as_mut_ptr();
                    let systems = chunk.len() / m;
                    let mut s = 0;
                    while s < systems {
                        let g0 = g_task + s;
                        let base = g0 * m;
                        let at = |l: usize, k: usize| base + l * m + k;
                        let dl = dp.wrapping_sub(g_task * m);
                        if systems - s >= L {
                            // SAFETY: dl.add(at(l, k)) is element k of system g0 + l, inside
                            // `chunk`, which this task alone holds.
                            unsafe { Lanes::<T, L> { a, b, c, m, g0 }.solve(dl, &at, scratch)? };
                            s += L;
                        } else {
                            // SAFETY: as above, for the one system g0.
                            unsafe { Lanes::<T, 1> { a, b, c, m, g0 }.solve(dl, &at, scratch)? };
                            s += 1;
                        }
                    }
                    Ok(())
                },
            )
        }
        Layout::Interleaved => {
            // The widest groups that still give every thread one: few long systems trade lanes
            // (latency hiding) for threads.
            let threads = rayon::current_num_threads();
            if g / INTERLEAVED_LANES >= threads {
                interleaved::<T, INTERLEAVED_LANES>(a, b, c, d, m, g)
            } else if g / 4 >= threads {
                interleaved::<T, 4>(a, b, c, d, m, g)
            } else if g / 2 >= threads {
                interleaved::<T, 2>(a, b, c, d, m, g)
            } else {
                interleaved::<T, 1>(a, b, c, d, m, g)
            }
        }
    }
}

/// An interleaved batch in groups of `L` adjacent systems (a last partial group one system at a
/// time), groups spread over rayon's threads.
fn interleaved<T: Real, const L: usize>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &mut [T],
    m: usize,
    g: usize,
) -> Result<()> {
    let out = Out(d.as_mut_ptr());
    let full = g / L;
    let groups_per_task = (MIN_UNKNOWNS_PER_TASK / (m * L)).max(1);
    let tasks = (full.div_ceil(groups_per_task)).max(1);
    (0..tasks).into_par_iter().try_for_each_init(
        || vec![T::zero(); 4 * m * L],
        |scratch, t| {
            for q in t * groups_per_task..((t + 1) * groups_per_task).min(full) {
                let g0 = q * L;
                let at = |l: usize, k: usize| k * g + g0 + l;
                // SAFETY: the group writes d[k * g + g0 + l] for its own columns only.
                unsafe { Lanes::<T, L> { a, b, c, m, g0 }.solve(out.ptr(), &at, scratch)? };
            }
            if t + 1 == tasks {
                for g0 in full * L..g {
                    let at = |_: usize, k: usize| k * g + g0;
                    // SAFETY: as above, for the one column g0 no group covers.
                    unsafe { Lanes::<T, 1> { a, b, c, m, g0 }.solve(out.ptr(), &at, scratch)? };
                }
            }
            Ok(())
        },
    )
}

/// The solution array shared by the tasks, each writing its own systems' elements.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);

// SAFETY: tasks write disjoint elements (their own systems) and `d` outlives the loop.
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}

impl<T> Out<T> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    fn ptr(self) -> *mut T {
        self.0
    }
}

/// `L` systems of size `m` eliminated in step; row `k` of lane `l` sits at `at(l, k)` in `a`,
/// `b`, `c` and in the right-hand side. `g0` names the first lane's system in errors.
struct Lanes<'a, T, const L: usize> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    m: usize,
    g0: usize,
}

impl<T: Real, const L: usize> Lanes<'_, T, L> {
    /// Solves the lanes' systems in place in `d` (read and written at `at(l, k)`). `scratch`
    /// holds `4 m L` values: per row and lane the pivot's reciprocal, U's two super-diagonals and
    /// the eliminated right-hand side, row-major across lanes.
    ///
    /// # Safety
    /// `d.add(at(l, k))` must be valid for reads and writes for every lane and row, and no other
    /// thread may touch those elements meanwhile.
    #[inline(always)]
    unsafe fn solve(&self, d: *mut T, at: &impl Fn(usize, usize) -> usize, scratch: &mut [T]) -> Result<()> {
        let (m, (a, b, c)) = (self.m, (self.a, self.b, self.c));
        let (inv, rest) = scratch[..4 * m * L].split_at_mut(m * L);
        let (u1, rest) = rest.split_at_mut(m * L);
        let (u2, rhs) = rest.split_at_mut(m * L);
        let zero = T::zero();
        // Carried per lane: the pending row's diagonal, super-diagonal and right-hand side.
        let mut p: [T; L] = std::array::from_fn(|l| b[at(l, 0)]);
        let mut u: [T; L] = std::array::from_fn(|l| if m > 1 { c[at(l, 0)] } else { zero });
        // SAFETY: at(l, 0) is one of the lanes' elements (the function's contract).
        let mut r: [T; L] = std::array::from_fn(|l| unsafe { *d.add(at(l, 0)) });
        for k in 0..m - 1 {
            let mut pivots = [zero; L];
            for l in 0..L {
                let i = at(l, k + 1);
                // SAFETY: as above.
                let (lo, q, dn) = (a[i], b[i], unsafe { *d.add(i) });
                // Row m - 1 has no super-diagonal (c[m - 1] is ignored).
                let rr = if k + 2 < m { c[i] } else { zero };
                let swap = p[l].abs() < lo.abs();
                let (piv, other) = if swap { (lo, p[l]) } else { (p[l], lo) };
                pivots[l] = piv;
                let rcp = T::one() / piv;
                let f = other * rcp;
                let (sup1, sup2) = if swap { (q, rr) } else { (u[l], zero) };
                let (first, second) = if swap { (dn, r[l]) } else { (r[l], dn) };
                let j = k * L + l;
                (inv[j], u1[j], u2[j], rhs[j]) = (rcp, sup1, sup2, first);
                p[l] = (if swap { u[l] } else { q }) - f * sup1;
                u[l] = if swap { -(f * rr) } else { rr };
                r[l] = second - f * first;
            }
            if pivots.contains(&zero) {
                let l = pivots.iter().position(|&v| v == zero).unwrap_or(0);
                return Err(Error::ZeroPivot { system: self.g0 + l, row: k });
            }
        }
        let last = (m - 1) * L;
        for l in 0..L {
            if p[l] == zero {
                return Err(Error::ZeroPivot { system: self.g0 + l, row: m - 1 });
            }
            (inv[last + l], u1[last + l], u2[last + l], rhs[last + l]) = (T::one() / p[l], zero, zero, r[l]);
        }
        // Back substitution: x_k = (rhs_k - u1_k x_{k+1} - u2_k x_{k+2}) / pivot_k.
        let (mut x1, mut x2) = ([zero; L], [zero; L]);
        for k in (0..m).rev() {
            for l in 0..L {
                let j = k * L + l;
                let x = (rhs[j] - u1[j] * x1[l] - u2[j] * x2[l]) * inv[j];
                (x2[l], x1[l]) = (x1[l], x);
                // SAFETY: as above.
                unsafe { *d.add(at(l, k)) = x };
            }
        }
        Ok(())
    }
}
