//! The Thomas algorithm (Gaussian elimination without pivoting): the sequential reference, pairs
//! of strided systems in step per rayon task, and a version that sweeps whole rows of interleaved
//! systems so the compiler vectorises across systems.

use rayon::prelude::*;

use super::real::Real;
use crate::shared_mut::SharedMut;
use crate::{Error, Result};

/// Column blocks of [`thomas_interleaved`] are multiples of this many systems: 8 `f64` fill one
/// AVX-512 register or two AVX2 registers.
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
/// the one division per row; fewer than that many trailing systems run one at a time. A task
/// holds about `task_values` values (several lane groups for tiny `m`, which keeps scheduling
/// overhead small), at least one lane group.
pub(crate) fn thomas_strided_par<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &mut [T],
    m: usize,
    task_values: usize,
) -> Result<()> {
    const L: usize = STRIDED_LANES;
    let groups_per_task = (task_values / (m.max(1) * L)).max(1);
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
        zero_pivot_error(self.a, self.b, scratch, L, |l| l * self.m + k, self.g0, k)
    }
}

/// The error for the first of `lanes` systems in step whose pivot at row `k` is zero (found
/// only after a row's or-reduction saw one). `at(l)` is where lane `l`'s row `k` sits in `a`
/// and `b`; `scratch` holds `c'` row-major across lanes, so row `k - 1` starts at `(k-1)·lanes`.
fn zero_pivot_error<T: Real>(
    a: &[T],
    b: &[T],
    scratch: &[T],
    lanes: usize,
    at: impl Fn(usize) -> usize,
    g0: usize,
    k: usize,
) -> Error {
    let zero = (0..lanes).find(|&l| {
        let i = at(l);
        let pivot = if k == 0 { b[i] } else { b[i] - a[i] * scratch[(k - 1) * lanes + l] };
        pivot == T::zero()
    });
    Error::ZeroPivot { system: g0 + zero.unwrap_or(0), row: k }
}

/// Thomas on an interleaved batch of `systems` systems. The systems are cut into column blocks
/// of neighbouring systems, one block per rayon task; a block advances row by row over all its
/// systems at once, so every sweep streams contiguous runs of each array (the compiler
/// vectorises across systems, and the independent systems hide the division latency).
pub(crate) fn thomas_interleaved<T: Real>(
    a: &[T],
    b: &[T],
    c: &[T],
    d: &mut [T],
    m: usize,
    systems: usize,
    block_max: usize,
) -> Result<()> {
    if m == 0 || systems == 0 {
        return Ok(());
    }
    let width = block_width(systems, rayon::current_num_threads(), block_max);
    // Each task owns whole column blocks, but their rows are scattered through `d`, so tasks
    // write through a shared pointer to disjoint indices.
    let out = SharedMut::new(d);
    (0..systems.div_ceil(width)).into_par_iter().try_for_each_init(
        || vec![T::zero(); m * width],
        |scratch, q| {
            let g0 = q * width;
            let view = Interleaved { a, b, c, m, systems, g0, width: width.min(systems - g0) };
            // SAFETY: every (row, system) index written by this block, k * systems + g with
            // g0 <= g < g0 + width, belongs to this block alone, and `d` outlives the loop.
            let d = unsafe { std::slice::from_raw_parts_mut(out.get(), m * systems) };
            view.solve_dispatch(d, scratch)
        },
    )
}

/// Systems per column block: one block per thread, but 64 to `block_max` systems (a multiple
/// of [`LANES`]; the default maximum is 1024). Rows of a block sit `G` elements apart, and the hardware prefetchers follow a
/// stream only within a 4 KiB page, so narrow blocks wait on memory at every row: on one core at
/// m = 512, G = 1024 (f64) a block of 8 systems ran 7.8x slower than one of 1024, and beyond
/// about 1024 the per-row working set leaves L1.
fn block_width(systems: usize, threads: usize, block_max: usize) -> usize {
    let max = block_max.next_multiple_of(LANES).max(64);
    systems.div_ceil(threads.max(1)).next_multiple_of(LANES).clamp(64, max)
}

/// Systems `g0 .. g0 + width` of an interleaved batch.
struct Interleaved<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    m: usize,
    systems: usize,
    g0: usize,
    width: usize,
}

impl<T: Real> Interleaved<'_, T> {
    fn row(&self, k: usize) -> std::ops::Range<usize> {
        let start = k * self.systems + self.g0;
        start..start + self.width
    }

    /// [`solve`](Self::solve), compiled for AVX2 when the CPU has it: 4 `f64` or 8 `f32` per
    /// division and multiply instead of 2 or 4. Rust never contracts into FMA, so both builds
    /// round identically.
    fn solve_dispatch(&self, d: &mut [T], scratch: &mut [T]) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.solve_avx2(d, scratch) };
        }
        self.solve(d, scratch)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn solve_avx2(&self, d: &mut [T], scratch: &mut [T]) -> Result<()> {
        self.solve(d, scratch)
    }

    /// Thomas on the block's systems at once, one reciprocal per row and system. `scratch`
    /// (`m * width`) holds `c'`; `d` is overwritten with `d'`, then with `x`. Pivots are checked
    /// once per row over the block (an or-reduction), the failing system searched only on error.
    #[inline(always)]
    fn solve(&self, d: &mut [T], scratch: &mut [T]) -> Result<()> {
        let (m, w) = (self.m, self.width);
        for k in 0..m {
            let (bk, ck) = (&self.b[self.row(k)], &self.c[self.row(k)]);
            let (done, rest) = scratch.split_at_mut(k * w);
            let cp = &mut rest[..w];
            let zero = if k == 0 {
                // Row 0 ignores a[0] entirely (it may hold garbage, even NaN).
                first_row(bk, ck, &mut d[self.row(0)], cp)
            } else {
                let (above, below) = d.split_at_mut(self.row(k).start);
                let dprev = &above[self.row(k - 1)];
                let dk = &mut below[..w];
                next_row(&self.a[self.row(k)], bk, ck, &done[(k - 1) * w..], dprev, dk, cp)
            };
            if zero {
                return Err(self.zero_pivot(scratch, k));
            }
        }
        // Back substitution; row m-1 ignores c[m-1].
        for k in (0..m - 1).rev() {
            let (above, below) = d.split_at_mut(self.row(k + 1).start);
            let xnext = &below[..w];
            let dk = &mut above[self.row(k)];
            for ((x, &cp), &xn) in dk.iter_mut().zip(&scratch[k * w..(k + 1) * w]).zip(xnext) {
                *x = *x - cp * xn;
            }
        }
        Ok(())
    }

    fn zero_pivot(&self, scratch: &[T], k: usize) -> Error {
        let start = k * self.systems + self.g0;
        zero_pivot_error(self.a, self.b, scratch, self.width, |l| start + l, self.g0, k)
    }
}

/// Row 0 of a block: `c' = c / b`, `d' = d / b`. Returns whether a pivot is zero.
#[inline(always)]
fn first_row<T: Real>(b: &[T], c: &[T], d: &mut [T], cp: &mut [T]) -> bool {
    let mut zero = false;
    for (((&b, &c), d), cp) in b.iter().zip(c).zip(d.iter_mut()).zip(cp.iter_mut()) {
        zero |= b == T::zero();
        let inv = T::one() / b;
        *cp = c * inv;
        *d = *d * inv;
    }
    zero
}

/// Row k > 0 of a block from row k-1's `c'` and `d'`. Returns whether a pivot is zero.
#[inline(always)]
fn next_row<T: Real>(a: &[T], b: &[T], c: &[T], cprev: &[T], dprev: &[T], d: &mut [T], cp: &mut [T]) -> bool {
    let w = d.len();
    let (a, b, c, cprev, dprev, cp) = (&a[..w], &b[..w], &c[..w], &cprev[..w], &dprev[..w], &mut cp[..w]);
    let mut zero = false;
    for l in 0..w {
        let pivot = b[l] - a[l] * cprev[l];
        zero |= pivot == T::zero();
        let inv = T::one() / pivot;
        cp[l] = c[l] * inv;
        d[l] = (d[l] - a[l] * dprev[l]) * inv;
    }
    zero
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The AVX2 build and the portable build of the interleaved block solver agree bit for bit.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn interleaved_avx2_and_portable_builds_agree_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            println!("SKIPPED: no AVX2 on this CPU");
            return;
        }
        let (m, systems) = (37, 83);
        let f = |i: usize, s: f64| ((i as f64 * s).sin() * 0.5) + 0.1;
        let a: Vec<f64> = (0..m * systems).map(|i| f(i, 0.37)).collect();
        let c: Vec<f64> = (0..m * systems).map(|i| f(i, 0.71)).collect();
        let b: Vec<f64> = a.iter().zip(&c).map(|(a, c)| a.abs() + c.abs() + 1.0).collect();
        let d: Vec<f64> = (0..m * systems).map(|i| f(i, 0.13)).collect();
        let view = Interleaved { a: &a, b: &b, c: &c, m, systems, g0: 3, width: 77 };
        let (mut x1, mut x2) = (d.clone(), d.clone());
        let mut scratch = vec![0.0; m * 77];
        view.solve(&mut x1, &mut scratch).unwrap();
        // SAFETY: AVX2 was detected above.
        unsafe { view.solve_avx2(&mut x2, &mut scratch) }.unwrap();
        assert!(x1.iter().zip(&x2).all(|(p, q)| p.to_bits() == q.to_bits()));
        assert!(x1 != d, "the block was solved");
    }
}
