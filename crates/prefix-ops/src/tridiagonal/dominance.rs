//! The cheap test that lets [`Solver::Auto`](super::Solver::Auto) skip pivoting: diagonal
//! dominance by rows, which guarantees that elimination without pivoting (Thomas) meets no
//! zero pivot and stays stable.
//!
//! Why the rule is enough, by induction over the rows of one system with `c'_k = c_k / p_k` and
//! pivots `p_0 = b_0`, `p_k = b_k - a_k c'_{k-1}`: if `|c'_{k-1}| < 1` and row `k` is weakly
//! dominant, `|b_k| >= |a_k| + |c_k|`, then `|p_k| >= |b_k| - |a_k| |c'_{k-1}| > |b_k| - |a_k|
//! >= |c_k|` whenever `a_k != 0`, so `p_k != 0` and `|c'_k| < 1`. A row with no left coupling
//! (row 0, or `a_k = 0`) gets nothing from that strict inequality and must be strictly dominant
//! itself. Multipliers stay below 1 in magnitude, so there is no growth: Thomas is then as
//! stable as `gtsv` (Higham, *Accuracy and Stability of Numerical Algorithms*, §9.5).
//!
//! In floating point, `|c'_{k-1}|` may round up to exactly 1 after a long run of rows that are
//! only weakly dominant; the next pivot can then round to zero. Strictly dominant rows keep a
//! margin (`b - fl(a c')` is an exact nonzero difference), so only batches with weakly dominant
//! rows need the fallback that [`Solver::Auto`](super::Solver::Auto) keeps for them.

use rayon::prelude::*;

use super::batch::{Layout, TridiagonalBatch};
use super::real::Real;

/// How safe elimination without pivoting is on a whole batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dominance {
    /// Some row is neither (or a value is not finite): only pivoting is safe.
    None,
    /// Every row weakly dominant, strictly where it has no left coupling (the module docs'
    /// rule). Thomas is stable; a zero pivot from rounding is possible, but rare.
    Weak,
    /// Every row strictly dominant: Thomas meets no zero pivot, even in floating point.
    Strict,
}

/// The class of one row: `first` and `last` say whether its `a` and `c` couple to nothing.
#[inline(always)]
fn row<T: Real>(a: T, b: T, c: T, first: bool, last: bool) -> Dominance {
    let a = if first { T::zero() } else { a.abs() };
    let c = if last { T::zero() } else { c.abs() };
    let (b, off) = (b.abs(), a + c);
    // NaN compares false everywhere; an infinite b would make any row look dominant.
    if !b.is_finite() {
        Dominance::None
    } else if b > off {
        Dominance::Strict
    } else if b >= off && a > T::zero() {
        Dominance::Weak
    } else {
        Dominance::None
    }
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// The diagonal dominance of the whole batch: the weakest class over all rows of all
    /// systems. One parallel pass over `a`, `b` and `c`.
    pub fn dominance(&self) -> Dominance {
        let (m, n) = (self.m, self.len());
        if n == 0 {
            return Dominance::Strict;
        }
        let chunk = match self.layout {
            Layout::Strided => m,
            Layout::Interleaved => self.systems,
        };
        // Tasks of at least ~16 Ki elements: the pass is cheap per element.
        let per_task = (1usize << 14).div_ceil(chunk).max(1);
        let classify = |j: usize, a: &[T], b: &[T], c: &[T]| -> Dominance {
            let mut worst = Dominance::Strict;
            for i in 0..b.len() {
                // Strided chunks are systems (row = i); interleaved chunks are rows (row = j).
                let k = if self.layout == Layout::Strided { i } else { j };
                worst = worst.min(row(a[i], b[i], c[i], k == 0, k + 1 == m));
            }
            worst
        };
        self.a
            .par_chunks(chunk)
            .zip(self.b.par_chunks(chunk))
            .zip(self.c.par_chunks(chunk))
            .enumerate()
            .with_min_len(per_task)
            .map(|(j, ((a, b), c))| classify(j, a, b, c))
            .min()
            .unwrap_or(Dominance::Strict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_classify_by_the_rule() {
        assert_eq!(row(9.0, 3.0, 1.0, true, false), Dominance::Strict); // a[0] is ignored
        assert_eq!(row(1.0, 2.0, 1.0, false, false), Dominance::Weak);
        assert_eq!(row(0.0, 1.0, 1.0, false, false), Dominance::None); // no left coupling
        assert_eq!(row(1.0, 1.0, 9.0, false, true), Dominance::Weak); // c[m-1] is ignored
        assert_eq!(row(1.0, 0.5, 0.0, false, false), Dominance::None);
        assert_eq!(row(0.0, f64::NAN, 0.0, false, false), Dominance::None);
        assert_eq!(row(0.0, f64::INFINITY, 0.0, false, false), Dominance::None);
        assert_eq!(row(0.0, 0.0, 0.0, true, true), Dominance::None);
    }
}
