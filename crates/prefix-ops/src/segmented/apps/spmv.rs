//! A CSR sparse matrix and its product with a vector as a segmented reduction: the rows are
//! the segments, the reduced values the products `a_ij * x_j`. Granularity by row length, as
//! in HiDP §6.4.3: short rows are whole tasks (one thread walks many rows), a row at least
//! [`SegmentedTuning::reduce_split`] long is reduced by all threads. COO input is converted to
//! CSR by a stable counting sort on the row index (HiDP's choice over a segmented reduction
//! on COO).

use std::ops::{Add, Mul};

use rayon::prelude::*;

use super::super::descriptor::Form;
use super::super::plan::{by_segs, groups};
use super::super::{SegmentedTuning, Segments};
use crate::error::{Error, Result};
use hetero_sched::tune::dispatch::Tunable;

/// Element types of [`Csr`]: `f32`, `f64` and the integers (wrapping arithmetic is not used:
/// integer products must not overflow).
pub trait SpmvScalar: Copy + Send + Sync + Add<Output = Self> + Mul<Output = Self> + 'static {
    /// The additive identity.
    const ZERO: Self;
}
macro_rules! scalar {
    ($($t:ty = $z:expr),*) => {$( impl SpmvScalar for $t { const ZERO: Self = $z; } )*};
}
scalar!(f32 = 0.0, f64 = 0.0, i32 = 0, i64 = 0, u32 = 0, u64 = 0);

/// A sparse matrix in compressed sparse row form: row `r` holds the entries
/// `rows.segment(r)` of `cols` and `vals`. Duplicate entries are kept and add up in products.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<T> {
    ncols: usize,
    rows: Segments,
    cols: Vec<u32>,
    vals: Vec<T>,
}

impl<T: SpmvScalar> Csr<T> {
    /// From CSR arrays: `row_offsets` (`nrows + 1` entries), column indices and values.
    ///
    /// Errors: malformed offsets, `cols`/`vals` lengths other than the last offset, a column
    /// index `>= ncols`, `ncols > u32::MAX`.
    pub fn new(ncols: usize, row_offsets: &[usize], cols: Vec<u32>, vals: Vec<T>) -> Result<Csr<T>> {
        let rows = Segments::from_offsets(row_offsets)?;
        rows.check_len("cols", cols.len())?;
        rows.check_len("vals", vals.len())?;
        check_cols(ncols, &cols)?;
        Ok(Csr { ncols, rows, cols, vals })
    }

    /// From coordinate triplets `(rows[k], cols[k], vals[k])` in any order (the order within a
    /// row is kept).
    ///
    /// Errors: lengths that differ, an index out of range, `ncols > u32::MAX`.
    pub fn from_coo(
        nrows: usize,
        ncols: usize,
        rows: &[usize],
        cols: &[usize],
        vals: &[T],
    ) -> Result<Csr<T>> {
        for (what, len) in [("cols", cols.len()), ("vals", vals.len())] {
            if len != rows.len() {
                return Err(Error::LengthMismatch { what, got: len, expected: rows.len() });
            }
        }
        if let Some(&r) = rows.iter().find(|&&r| r >= nrows) {
            return Err(Error::Invalid(format!("COO row index {r} out of range for {nrows} rows")));
        }
        if ncols > u32::MAX as usize {
            return Err(Error::Invalid(format!("{ncols} columns: at most {}", u32::MAX)));
        }
        if let Some(&c) = cols.iter().find(|&&c| c >= ncols) {
            return Err(Error::Invalid(format!("COO column index {c} out of range for {ncols} columns")));
        }
        // Stable counting sort by row: counts, exclusive scan into offsets, scatter.
        let mut counts = vec![0usize; nrows];
        rows.iter().for_each(|&r| counts[r] += 1);
        let segs = Segments::from_lengths(&counts)?;
        let mut next = segs.offsets();
        let mut out_cols = vec![0u32; rows.len()];
        let mut out_vals = vec![T::ZERO; rows.len()];
        for ((&r, &c), &v) in rows.iter().zip(cols).zip(vals) {
            out_cols[next[r]] = c as u32;
            out_vals[next[r]] = v;
            next[r] += 1;
        }
        Ok(Csr { ncols, rows: segs, cols: out_cols, vals: out_vals })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.rows.num_segments()
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.vals.len()
    }

    /// The rows as segments of the entries.
    pub fn rows(&self) -> &Segments {
        &self.rows
    }

    /// Column index of every entry.
    pub fn cols(&self) -> &[u32] {
        &self.cols
    }

    /// Value of every entry.
    pub fn vals(&self) -> &[T] {
        &self.vals
    }

    /// `y = A x`, with the tuned or default granularity thresholds.
    ///
    /// Errors: [`Error::LengthMismatch`] when `x.len() != ncols` or `y.len() != nrows`.
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<()> {
        self.mul_vec_with(x, y, &SegmentedTuning::tuned::<T>(self.nnz()))
    }

    /// [`mul_vec`](Self::mul_vec) under explicit selector parameters.
    pub fn mul_vec_with(&self, x: &[T], y: &mut [T], t: &SegmentedTuning) -> Result<()> {
        if x.len() != self.ncols {
            return Err(Error::LengthMismatch { what: "x", got: x.len(), expected: self.ncols });
        }
        if y.len() != self.nrows() {
            return Err(Error::LengthMismatch { what: "y", got: y.len(), expected: self.nrows() });
        }
        let owned;
        let offs: &[usize] = match self.rows.form() {
            Form::Offsets(o) => o,
            // Not built by this type's constructors, but handled all the same.
            Form::Regular(_) => {
                owned = self.rows.offsets();
                &owned
            }
        };
        let groups = groups(&self.rows, t.task_elems);
        by_segs(y, &groups).into_par_iter().zip(&groups).for_each(|(out, g)| {
            let rows = Rows { offs: &offs[g.segs.start..=g.segs.end], cols: &self.cols, vals: &self.vals };
            rows.mul_vec(x, out, t);
        });
        Ok(())
    }
}

/// A run of consecutive rows (`offs`: their `out.len() + 1` offsets into the entries), with the
/// whole matrix's entries. Every column index is below `x.len()`: [`Csr`]'s constructors check
/// the columns against `ncols`, the entries never change after, and `mul_vec_with` checks
/// `x.len() == ncols`.
struct Rows<'a, T> {
    offs: &'a [usize],
    cols: &'a [u32],
    vals: &'a [T],
}

impl<T: SpmvScalar> Rows<'_, T> {
    /// `out[r] = row r · x` for every row of the run, portably or compiled for AVX2 (whose
    /// gathers fetch four `x[c]` at once).
    fn mul_vec(&self, x: &[T], out: &mut [T], t: &SegmentedTuning) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { self.mul_vec_avx2(x, out, t) };
        }
        self.mul_vec_portable(x, out, t)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn mul_vec_avx2(&self, x: &[T], out: &mut [T], t: &SegmentedTuning) {
        self.mul_vec_portable(x, out, t)
    }

    /// Rows in blocks of [`ROW_RUN`]: a block whose rows all hold the same number of entries,
    /// below 8, takes a loop specialised on that number (no loop exit to predict per row, the
    /// row's products unrolled); any other block goes row by row.
    #[inline(always)]
    fn mul_vec_portable(&self, x: &[T], out: &mut [T], t: &SegmentedTuning) {
        for (k, ys) in out.chunks_mut(ROW_RUN).enumerate() {
            let w = &self.offs[k * ROW_RUN..=k * ROW_RUN + ys.len()];
            let len = w[1] - w[0];
            // A branch-free test, so the compiler vectorises the pass over the offsets.
            let equal = w.windows(2).fold(true, |ok, p| ok & (p[1] - p[0] == len));
            match len {
                1 if equal => self.fixed::<1>(w[0], ys, x),
                2 if equal => self.fixed::<2>(w[0], ys, x),
                3 if equal => self.fixed::<3>(w[0], ys, x),
                4 if equal => self.fixed::<4>(w[0], ys, x),
                5 if equal => self.fixed::<5>(w[0], ys, x),
                6 if equal => self.fixed::<6>(w[0], ys, x),
                7 if equal => self.fixed::<7>(w[0], ys, x),
                _ => self.rows(w, ys, x, t),
            }
        }
    }

    /// Consecutive rows of `L` entries each, the first at entry `start`: the same left fold as
    /// [`dot`] on rows that short, so the results do not depend on the path.
    #[inline(always)]
    fn fixed<const L: usize>(&self, start: usize, ys: &mut [T], x: &[T]) {
        let span = start..start + ys.len() * L;
        let (cc, vc) = (self.cols[span.clone()].as_chunks::<L>().0, self.vals[span].as_chunks::<L>().0);
        for ((y, c), v) in ys.iter_mut().zip(cc).zip(vc) {
            let mut s = T::ZERO;
            for i in 0..L {
                // SAFETY: every column index is below `x.len()` (see `Rows`).
                s = s + v[i] * unsafe { *x.get_unchecked(c[i] as usize) };
            }
            *y = s;
        }
    }

    /// Rows of any lengths, one at a time (`w`: their `ys.len() + 1` offsets).
    #[inline(always)]
    fn rows(&self, w: &[usize], ys: &mut [T], x: &[T], t: &SegmentedTuning) {
        for (yr, w) in ys.iter_mut().zip(w.windows(2)) {
            let (c, v) = (&self.cols[w[0]..w[1]], &self.vals[w[0]..w[1]]);
            *yr = if c.len() >= t.reduce_split {
                // One long row: all threads on it, partial dot products added in order.
                let task = t.task_elems.max(1);
                c.par_chunks(task)
                    .zip(v.par_chunks(task))
                    .map(|(c, v)| dot(c, v, x))
                    .reduce(|| T::ZERO, |a, b| a + b)
            } else {
                dot(c, v, x)
            };
        }
    }
}

/// Rows examined at once for a run of equal lengths.
const ROW_RUN: usize = 64;

fn check_cols(ncols: usize, cols: &[u32]) -> Result<()> {
    if ncols > u32::MAX as usize {
        return Err(Error::Invalid(format!("{ncols} columns: at most {}", u32::MAX)));
    }
    if let Some(&c) = cols.iter().find(|&&c| c as usize >= ncols) {
        return Err(Error::Invalid(format!("column index {c} out of range for {ncols} columns")));
    }
    Ok(())
}

/// One row's sum of products: a plain chain for short rows (consecutive rows overlap in the
/// pipeline), four chains for longer ones to hide the add latency. Every `cols[k]` is below
/// `x.len()` (the invariant of [`Rows`]).
#[inline(always)]
fn dot<T: SpmvScalar>(cols: &[u32], vals: &[T], x: &[T]) -> T {
    debug_assert!(cols.iter().all(|&c| (c as usize) < x.len()) && cols.len() == vals.len());
    // SAFETY: every column index is below `x.len()` (see `Rows`).
    let at = |c: u32| unsafe { *x.get_unchecked(c as usize) };
    if cols.len() < 8 {
        return cols.iter().zip(vals).fold(T::ZERO, |s, (&c, &v)| s + v * at(c));
    }
    let mut acc = [T::ZERO; 4];
    let (cc, cr) = cols.as_chunks::<4>();
    let (vc, vr) = vals.as_chunks::<4>();
    for (c, v) in cc.iter().zip(vc) {
        for i in 0..4 {
            acc[i] = acc[i] + v[i] * at(c[i]);
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (&c, &v) in cr.iter().zip(vr) {
        s = s + v * at(c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of every length from 0 to 9 (the specialised ones and both sides of them), each in
    /// a run longer than a block and in runs broken inside a block, against a loop over the
    /// triplets: bit for bit for integers, and for floats on rows below 8 entries (the same
    /// left fold); longer float rows within `len eps sum |a x|`.
    #[test]
    fn row_runs_equal_the_triplet_loop() {
        let mut lens = Vec::new();
        for len in 0..10usize {
            lens.extend(std::iter::repeat_n(len, ROW_RUN + 3));
            lens.extend([len, len + 1, len, 0, len]);
        }
        let ncols = 37;
        let segs = Segments::from_lengths(&lens).unwrap();
        let offs = segs.offsets();
        let cols: Vec<u32> = (0..segs.len()).map(|k| ((k * 7919) % ncols) as u32).collect();
        let ivals: Vec<i64> = (0..segs.len() as i64).map(|k| (k * 31) % 19 - 9).collect();
        let ix: Vec<i64> = (0..ncols as i64).map(|j| j % 7 - 3).collect();
        let fvals: Vec<f64> = ivals.iter().map(|&v| v as f64 * 0.37).collect();
        let fx: Vec<f64> = ix.iter().map(|&v| v as f64 * 1.3).collect();
        let ai = Csr::new(ncols, &offs, cols.clone(), ivals.clone()).unwrap();
        let af = Csr::new(ncols, &offs, cols.clone(), fvals.clone()).unwrap();
        let d = SegmentedTuning::DEFAULT;
        for t in [d, SegmentedTuning { task_elems: 5, reduce_split: 9, ..d }] {
            let mut iy = vec![0i64; lens.len()];
            ai.mul_vec_with(&ix, &mut iy, &t).unwrap();
            let mut fy = vec![f64::NAN; lens.len()];
            af.mul_vec_with(&fx, &mut fy, &t).unwrap();
            for (r, w) in offs.windows(2).enumerate() {
                let span = w[0]..w[1];
                let iwant = span.clone().fold(0i64, |s, k| s + ivals[k] * ix[cols[k] as usize]);
                assert_eq!(iy[r], iwant, "row {r}");
                let fwant = span.clone().fold(0.0f64, |s, k| s + fvals[k] * fx[cols[k] as usize]);
                if span.len() < 8 {
                    assert_eq!(fy[r].to_bits(), fwant.to_bits(), "row {r}");
                } else {
                    let bound: f64 = span.clone().map(|k| (fvals[k] * fx[cols[k] as usize]).abs()).sum();
                    assert!(
                        (fy[r] - fwant).abs() <= 2.0 * span.len() as f64 * f64::EPSILON * bound,
                        "row {r}"
                    );
                }
            }
        }
    }
}
