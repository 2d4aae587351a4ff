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

/// The class of rows that couple on both sides (neither first nor last), folded over the
/// slices without branches so that the compiler vectorises it: the check should cost a
/// fraction of the Thomas sweep it guards.
#[inline(always)]
fn inner_rows<T: Real>(a: &[T], b: &[T], c: &[T]) -> Dominance {
    let (mut strict, mut weak) = (true, true);
    for ((&a, &b), &c) in a.iter().zip(b).zip(c) {
        let (a, b, off) = (a.abs(), b.abs(), a.abs() + c.abs());
        // `b < inf` is false for NaN and inf alike; `&` rather than `&&` keeps it branch-free.
        let finite = b < T::infinity();
        let s = b > off;
        strict &= s & finite;
        weak &= (s | ((b >= off) & (a > T::zero()))) & finite;
    }
    if strict {
        Dominance::Strict
    } else if weak {
        Dominance::Weak
    } else {
        Dominance::None
    }
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// The diagonal dominance of the whole batch: the weakest class over all rows of all
    /// systems. One parallel pass over `a`, `b` and `c`, cut short by the first chunk of rows
    /// that is not dominant.
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
            match self.layout {
                // A chunk is one system: its first and last rows ignore a[0] and c[m-1].
                Layout::Strided => {
                    let ends = row(a[0], b[0], c[0], true, m == 1).min(row(
                        a[m - 1],
                        b[m - 1],
                        c[m - 1],
                        m == 1,
                        true,
                    ));
                    let inner = if m > 2 {
                        inner_rows(&a[1..m - 1], &b[1..m - 1], &c[1..m - 1])
                    } else {
                        Dominance::Strict
                    };
                    ends.min(inner)
                }
                // A chunk is row j of every system.
                Layout::Interleaved if j == 0 || j + 1 == m => (0..b.len())
                    .map(|i| row(a[i], b[i], c[i], j == 0, j + 1 == m))
                    .min()
                    .unwrap_or(Dominance::Strict),
                Layout::Interleaved => inner_rows(a, b, c),
            }
        };
        self.a
            .par_chunks(chunk)
            .zip(self.b.par_chunks(chunk))
            .zip(self.c.par_chunks(chunk))
            .enumerate()
            .with_min_len(per_task)
            // A general batch shows in its first rows: stop there rather than read the rest.
            .map(|(j, ((a, b), c))| match classify(j, a, b, c) {
                Dominance::None => Err(()),
                class => Ok(class),
            })
            .try_reduce(|| Dominance::Strict, |x, y| Ok(x.min(y)))
            .unwrap_or(Dominance::None)
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

    /// The vectorised fold over inner rows agrees with the row-by-row rule.
    #[test]
    fn inner_rows_agree_with_the_row_rule() {
        let vals = [0.0, 0.5, 1.0, 2.0, -1.0, -2.5, f64::NAN, f64::INFINITY];
        for &a in &vals {
            for &b in &vals {
                for &c in &vals {
                    let want = row(a, b, c, false, false);
                    assert_eq!(inner_rows(&[a], &[b], &[c]), want, "{a} {b} {c}");
                    let strict = [3.0, 0.5, 1.0];
                    assert_eq!(inner_rows(&[a, strict[1]], &[b, strict[0]], &[c, strict[2]]), want);
                }
            }
        }
    }
}
