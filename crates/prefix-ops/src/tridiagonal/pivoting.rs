//! Gaussian elimination with partial pivoting for tridiagonal systems, as LAPACK's `gtsv`:
//! solves systems that are not diagonally dominant, where Thomas and the parallel reductions
//! can divide by (nearly) zero.
//!
//! Row `i` is exchanged with row `i + 1` when `|a_{i+1}| > |pivot_i|` (`gtsv`'s rule); the
//! exchanged row then reaches two places right, so U has a second super-diagonal. Unlike `gtsv`
//! the choice is made without a branch: both outcomes are computed and one is selected, so
//! random pivoting patterns cost no mispredictions, and several systems advance in step
//! ([`Sweep`]'s lanes), which hides the latency of the one division per row (a reciprocal,
//! shared by the multiplier and the back substitution) and lets the compiler vectorise across
//! systems. Strided batches run [`STRIDED_LANES`] neighbouring systems per step, interleaved
//! ones up to [`INTERLEAVED_LANES`] adjacent columns; rayon spreads the groups over threads.
//!
//! **Few long systems** (fewer lane groups than threads, `m >= `[`TWIST_MIN_M`]) are solved
//! from both ends at once (the twisted, "burn at both ends" factorization): one task eliminates
//! the top half downwards, another the bottom half upwards, each with `gtsv`'s pivoting; the two
//! rows left over couple the middle unknowns `x_{h-1}` and `x_h` and form a 2 x 2 system, solved
//! with pivoting; then both halves substitute back in parallel. Every multiplier is at most 1 in
//! magnitude, as in `gtsv`, so the growth is as bounded as `gtsv`'s; the work and the bytes moved
//! are those of one `gtsv` sweep, split over two threads with no spike vectors and no reduced
//! system beyond the 2 x 2. With four interleaved systems the two tasks each sweep all four
//! columns of their half (whole 32-byte rows, four lanes in step), where one task per pair of
//! systems would read every cache line from both threads and write the same lines of `d` from
//! both.

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

/// The smallest system solved from both ends when there are fewer lane groups than threads (a
/// tuning parameter): below it the second task costs more than it saves.
pub(crate) const TWIST_MIN_M: usize = 2048;

/// Values kept per row and lane for the back substitution: the pivot's reciprocal and U's two
/// super-diagonals (the eliminated right-hand side is kept in `d` itself, as `gtsv` does).
const KEPT: usize = 3;

/// Solves every system of the batch with partial pivoting, in place (`d` becomes `x`). Errors
/// with [`Error::ZeroPivot`] on an exactly zero pivot (a singular matrix, `gtsv`'s `INFO > 0`);
/// `d` is then unspecified.
pub(crate) fn solve_pivoting<T: Real>(batch: &TridiagonalBatch<'_, T>, d: &mut [T]) -> Result<()> {
    let (m, g) = (batch.m, batch.systems);
    if m == 0 || g == 0 {
        return Ok(());
    }
    let threads = rayon::current_num_threads();
    let sys = Systems { a: batch.a, b: batch.b, c: batch.c, m, g, layout: batch.layout };
    let out = Out(d.as_mut_ptr());
    match batch.layout {
        Layout::Strided if g / STRIDED_LANES < threads && m >= TWIST_MIN_M => {
            (0..g).into_par_iter().try_for_each(|s| sys.twisted::<1>(out, s))
        }
        Layout::Strided => sys.strided(out),
        Layout::Interleaved if g / INTERLEAVED_LANES < threads && m >= TWIST_MIN_M => {
            // The widest lane groups that, split in halves, still give every thread a task.
            match (1..=3).rev().map(|e| 1usize << e).find(|&l| 2 * (g / l) >= threads) {
                Some(8) => sys.twisted_groups::<8>(out),
                Some(4) => sys.twisted_groups::<4>(out),
                Some(2) => sys.twisted_groups::<2>(out),
                _ => sys.twisted_groups::<1>(out),
            }
        }
        Layout::Interleaved => {
            // The widest groups that still give every thread one: few systems trade lanes
            // (latency hiding) for threads.
            if g / INTERLEAVED_LANES >= threads {
                sys.interleaved::<INTERLEAVED_LANES>(out)
            } else if g / 4 >= threads {
                sys.interleaved::<4>(out)
            } else if g / 2 >= threads {
                sys.interleaved::<2>(out)
            } else {
                sys.interleaved::<1>(out)
            }
        }
    }
}

/// The solution array shared by the tasks, each writing its own systems' elements.
#[derive(Clone, Copy)]
struct Out<T>(*mut T);

// SAFETY: tasks write disjoint elements (their own systems, or their own half of a system)
// and `d` outlives every task.
unsafe impl<T: Send> Send for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Out<T> {}

impl<T> Out<T> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    fn ptr(self) -> *mut T {
        self.0
    }
}

/// The batch's diagonals and shape, shared by the tasks.
struct Systems<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    m: usize,
    g: usize,
    layout: Layout,
}

/// Scratch of `len` values in `buf`, grown when too short. Every value is written before it is
/// read; a fresh buffer comes zeroed from the allocator (`calloc`: pages are zeroed lazily on
/// first write, not filled here), and a buffer too large for the machine is [`Error::Alloc`].
fn scratch<T: Real>(buf: &mut Vec<T>, len: usize) -> Result<&mut [T]> {
    if buf.len() < len {
        *buf = zeroed(len)?;
    }
    Ok(&mut buf[..len])
}

/// `len` zeros, allocated zeroed rather than filled.
fn zeroed<T: Real>(len: usize) -> Result<Vec<T>> {
    let err =
        || Error::Alloc { what: "tridiagonal: pivoting scratch", bytes: len.saturating_mul(size_of::<T>()) };
    if len == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(len).map_err(|_| err())?;
    // SAFETY: `layout` has a nonzero size; all-zero bits are the float 0.0, a valid `T` (f32 or
    // f64); the vector takes the allocation with the global allocator's layout for `len` `T`s.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout).cast::<T>();
        if ptr.is_null() {
            return Err(err());
        }
        Ok(Vec::from_raw_parts(ptr, len, len))
    }
}

impl<T: Real> Systems<'_, T> {
    /// The strided batch in groups of [`STRIDED_LANES`] neighbouring systems (leftovers one at
    /// a time), several groups per task for small `m`.
    fn strided(&self, out: Out<T>) -> Result<()> {
        const L: usize = STRIDED_LANES;
        let (m, g) = (self.m, self.g);
        let per_task = L * (MIN_UNKNOWNS_PER_TASK / (m * L)).max(1);
        (0..g.div_ceil(per_task)).into_par_iter().try_for_each_init(Vec::new, |scratch, t| {
            let (mut s, end) = (t * per_task, ((t + 1) * per_task).min(g));
            while s < end {
                if end - s >= L {
                    self.whole::<L>(out, s, scratch)?;
                    s += L;
                } else {
                    self.whole::<1>(out, s, scratch)?;
                    s += 1;
                }
            }
            Ok(())
        })
    }

    /// Row `k` of lane `l` of the group starting at system `g0`, in the batch's arrays.
    #[inline(always)]
    fn at(&self, g0: usize, l: usize, k: usize) -> usize {
        self.layout.index(self.m, self.g, g0 + l, k)
    }

    /// The interleaved batch in groups of `L` adjacent systems (a last partial group one system
    /// at a time), groups spread over rayon's threads.
    fn interleaved<const L: usize>(&self, out: Out<T>) -> Result<()> {
        let (m, g) = (self.m, self.g);
        let full = g / L;
        let groups_per_task = (MIN_UNKNOWNS_PER_TASK / (m * L)).max(1);
        let tasks = (full.div_ceil(groups_per_task)).max(1);
        (0..tasks).into_par_iter().try_for_each_init(Vec::new, |scratch, t| {
            for q in t * groups_per_task..((t + 1) * groups_per_task).min(full) {
                self.whole::<L>(out, q * L, scratch)?;
            }
            if t + 1 == tasks {
                for g0 in full * L..g {
                    self.whole::<1>(out, g0, scratch)?;
                }
            }
            Ok(())
        })
    }

    /// The `L` systems from `g0` on, each eliminated top to bottom by one task.
    fn whole<const L: usize>(&self, out: Out<T>, g0: usize, buf: &mut Vec<T>) -> Result<()> {
        let m = self.m;
        let sweep = Sweep::<T, L, false> { sys: self, g0, n: m };
        let scratch = scratch(buf, KEPT * m * L)?;
        // SAFETY: the group's elements of `d` (lanes g0 .. g0 + L) belong to this task alone.
        let (p, _, r) = unsafe { sweep.forward(out, scratch)? };
        let mut last = [T::zero(); L];
        for l in 0..L {
            if p[l] == T::zero() {
                return Err(Error::ZeroPivot { system: g0 + l, row: m - 1 });
            }
            last[l] = r[l] / p[l];
        }
        // SAFETY: as above.
        unsafe {
            sweep.set(out, m - 1, &last);
            sweep.backward(out, scratch, last, [T::zero(); L]);
        }
        Ok(())
    }

    /// Every interleaved system from both ends, in groups of `L` adjacent columns (a last
    /// partial group one column at a time); groups in parallel, two tasks per group.
    fn twisted_groups<const L: usize>(&self, out: Out<T>) -> Result<()> {
        let full = self.g / L;
        (0..full).into_par_iter().try_for_each(|q| self.twisted::<L>(out, q * L))?;
        (full * L..self.g).into_par_iter().try_for_each(|g0| self.twisted::<1>(out, g0))
    }

    /// The `L` systems from `g0` on, solved from both ends (the module docs): the top half
    /// `0 .. h` downwards and the bottom half `h .. m` upwards in two tasks, the middle pair
    /// `x_{h-1}, x_h` from the 2 x 2 system their last rows form, then both halves back.
    fn twisted<const L: usize>(&self, out: Out<T>, g0: usize) -> Result<()> {
        let (m, h) = (self.m, self.m / 2);
        let top = Sweep::<T, L, false> { sys: self, g0, n: h };
        let bottom = Sweep::<T, L, true> { sys: self, g0, n: m - h };
        let (mut st, mut sb) = (zeroed::<T>(KEPT * h * L)?, zeroed::<T>(KEPT * (m - h) * L)?);
        // The top task touches rows 0 .. h of the group's lanes, the bottom task rows h .. m; no
        // other task touches these lanes.
        let (pt, pb) = rayon::join(
            || {
                // SAFETY: rows 0 .. h of lanes g0 .. g0 + L belong to this task (above).
                unsafe { top.forward(out, &mut st) }
            },
            || {
                // SAFETY: rows h .. m of lanes g0 .. g0 + L belong to this task (above).
                unsafe { bottom.forward(out, &mut sb) }
            },
        );
        let ((p_t, u_t, r_t), (p_b, u_b, r_b)) = (pt?, pb?);
        let (mut x_up, mut x_dn) = ([T::zero(); L], [T::zero(); L]);
        for l in 0..L {
            // p_t x_{h-1} + u_t x_h = r_t and u_b x_{h-1} + p_b x_h = r_b, pivoting on x_{h-1}.
            let swap = p_t[l].abs() < u_b[l].abs();
            let (r0, r1) = if swap {
                ((u_b[l], p_b[l], r_b[l]), (p_t[l], u_t[l], r_t[l]))
            } else {
                ((p_t[l], u_t[l], r_t[l]), (u_b[l], p_b[l], r_b[l]))
            };
            if r0.0 == T::zero() {
                return Err(Error::ZeroPivot { system: g0 + l, row: h - 1 });
            }
            let f = r1.0 / r0.0;
            let s = r1.1 - f * r0.1;
            if s == T::zero() {
                return Err(Error::ZeroPivot { system: g0 + l, row: h });
            }
            x_dn[l] = (r1.2 - f * r0.2) / s;
            x_up[l] = (r0.2 - r0.1 * x_dn[l]) / r0.0;
        }
        // SAFETY: as above; the joins are over, the middle rows are written once.
        unsafe {
            top.set(out, h - 1, &x_up);
            bottom.set(out, m - h - 1, &x_dn);
        }
        rayon::join(
            || {
                // SAFETY: as for the forward sweeps; `st` holds the top sweep's rows.
                unsafe { top.backward(out, &st, x_up, x_dn) }
            },
            || {
                // SAFETY: as for the forward sweeps; `sb` holds the bottom sweep's rows.
                unsafe { bottom.backward(out, &sb, x_dn, x_up) }
            },
        );
        Ok(())
    }
}

/// The row kept per lane after a sweep: `p x_{n-1} + u x_n = r` in sweep rows (`x_n` is the
/// other half's first unknown, or nothing when the sweep reaches the system's end and `u = 0`).
type Pending<T, const L: usize> = ([T; L], [T; L], [T; L]);

/// `gtsv`'s elimination of `L` systems in step (lanes `g0 .. g0 + L`) over `n` rows: sweep row
/// `j` is system row `j` going down (`UP = false`) or `m - 1 - j` going up, where the roles of
/// the sub- and super-diagonals are exchanged. A sweep always starts at an end of the system.
struct Sweep<'s, 'a, T, const L: usize, const UP: bool> {
    sys: &'s Systems<'a, T>,
    g0: usize,
    n: usize,
}

impl<T: Real, const L: usize, const UP: bool> Sweep<'_, '_, T, L, UP> {
    /// Index of sweep row `j` of lane `l`.
    #[inline(always)]
    fn at(&self, l: usize, j: usize) -> usize {
        let k = if UP { self.sys.m - 1 - j } else { j };
        self.sys.at(self.g0, l, k)
    }

    /// The system row of sweep row `j` (for errors).
    fn row(&self, j: usize) -> usize {
        if UP { self.sys.m - 1 - j } else { j }
    }

    /// Coupling of a row to the previous sweep row's unknown.
    #[inline(always)]
    fn lower(&self, i: usize) -> T {
        if UP { self.sys.c[i] } else { self.sys.a[i] }
    }

    /// Coupling of sweep row `j` (at index `i`) to the next sweep row's unknown; zero at the
    /// system's end, where the stored value is ignored.
    #[inline(always)]
    fn upper(&self, i: usize, j: usize) -> T {
        if j + 1 >= self.sys.m {
            T::zero()
        } else if UP {
            self.sys.a[i]
        } else {
            self.sys.c[i]
        }
    }

    /// Writes `x` into sweep row `j` of every lane.
    ///
    /// # Safety
    /// `out` must be valid for the lanes' rows, which no other task may touch meanwhile.
    #[inline(always)]
    unsafe fn set(&self, out: Out<T>, j: usize, x: &[T; L]) {
        for (l, &v) in x.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe { *out.ptr().add(self.at(l, j)) = v };
        }
    }

    /// Eliminates sweep rows `0 .. n - 1` with `gtsv`'s row exchanges. Keeps per row and lane
    /// the pivot's reciprocal and U's two super-diagonals in `scratch` (`KEPT * n * L` values,
    /// one run per row) and the eliminated right-hand side in `d`; returns the pending row of
    /// sweep row `n - 1`. A zero pivot is [`Error::ZeroPivot`] (a singular system).
    ///
    /// # Safety
    /// `out` must be valid for reads and writes of the lanes' sweep rows, which no other task
    /// may touch meanwhile.
    #[inline(always)]
    unsafe fn forward(&self, out: Out<T>, scratch: &mut [T]) -> Result<Pending<T, L>> {
        let (b, n, zero) = (self.sys.b, self.n, T::zero());
        let d = out.ptr();
        // Carried per lane: the pending row's diagonal, super-diagonal and right-hand side.
        let mut p: [T; L] = std::array::from_fn(|l| b[self.at(l, 0)]);
        let mut u: [T; L] = std::array::from_fn(|l| self.upper(self.at(l, 0), 0));
        // SAFETY: the function's contract.
        let mut r: [T; L] = std::array::from_fn(|l| unsafe { *d.add(self.at(l, 0)) });
        for (j, kept) in scratch[..KEPT * L * n.saturating_sub(1)].chunks_exact_mut(KEPT * L).enumerate() {
            let mut pivots = [zero; L];
            for l in 0..L {
                let i = self.at(l, j + 1);
                // SAFETY: as above.
                let (lo, q, dn) = (self.lower(i), b[i], unsafe { *d.add(i) });
                let rr = self.upper(i, j + 1);
                let swap = p[l].abs() < lo.abs();
                let (piv, other) = if swap { (lo, p[l]) } else { (p[l], lo) };
                pivots[l] = piv;
                let rcp = T::one() / piv;
                let f = other * rcp;
                let (sup1, sup2) = if swap { (q, rr) } else { (u[l], zero) };
                let (first, second) = if swap { (dn, r[l]) } else { (r[l], dn) };
                (kept[l], kept[L + l], kept[2 * L + l]) = (rcp, sup1, sup2);
                // SAFETY: as above; sweep row j was read one step earlier.
                unsafe { *d.add(self.at(l, j)) = first };
                p[l] = (if swap { u[l] } else { q }) - f * sup1;
                u[l] = if swap { -(f * rr) } else { rr };
                r[l] = second - f * first;
            }
            if let Some(l) = pivots.iter().position(|&v| v == zero) {
                return Err(Error::ZeroPivot { system: self.g0 + l, row: self.row(j) });
            }
        }
        Ok((p, u, r))
    }

    /// Back substitution over sweep rows `n - 2` down to 0, `x_j = (rhs_j - u1_j x_{j+1} -
    /// u2_j x_{j+2}) / pivot_j`, given `x` of sweep rows `n - 1` (`last`) and `n` (`beyond`,
    /// zero when the sweep reached the system's end).
    ///
    /// # Safety
    /// As [`forward`](Self::forward), which must have run on `scratch` and `d` just before.
    #[inline(always)]
    unsafe fn backward(&self, out: Out<T>, scratch: &[T], last: [T; L], beyond: [T; L]) {
        let d = out.ptr();
        let (mut x1, mut x2) = (last, beyond);
        let kept = &scratch[..KEPT * L * self.n.saturating_sub(1)];
        for (j, kept) in kept.chunks_exact(KEPT * L).enumerate().rev() {
            for l in 0..L {
                let i = self.at(l, j);
                // SAFETY: the function's contract.
                let rhs = unsafe { *d.add(i) };
                let x = (rhs - kept[L + l] * x1[l] - kept[2 * L + l] * x2[l]) * kept[l];
                (x2[l], x1[l]) = (x1[l], x);
                // SAFETY: as above.
                unsafe { *d.add(i) = x };
            }
        }
    }
}
