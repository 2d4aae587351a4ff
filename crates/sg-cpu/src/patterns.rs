//! Detection of the input patterns of thesis §3.8: points that share values in some dimensions
//! ("sha"), and points that form a Cartesian product ("car").

use ndarray::ArrayView2;
use sg_core::Real;

/// The structure found in a point set.
#[derive(Debug, Clone, PartialEq)]
pub enum PointPattern<T> {
    /// No exploitable structure.
    General,
    /// The first `prefix` columns hold one value each over all rows (shared dimensions).
    SharedPrefix {
        /// Number of leading constant columns.
        prefix: usize,
    },
    /// The rows are `C_0 x C_1 x ... x C_(d-1)` in lexicographic order (last column fastest).
    Cartesian {
        /// The distinct values of each column, in row order.
        factors: Vec<Vec<T>>,
    },
}

impl<T: Real> PointPattern<T> {
    /// Looks for a Cartesian product first (it saves the most), then for shared leading columns.
    /// Costs O(m d).
    pub fn detect(points: ArrayView2<'_, T>) -> Self {
        let (m, d) = points.dim();
        if m < 2 || d == 0 {
            return PointPattern::General;
        }
        if let Some(factors) = cartesian_factors(points) {
            return PointPattern::Cartesian { factors };
        }
        let prefix = (0..d).take_while(|&t| points.column(t).iter().all(|&v| v == points[[0, t]])).count();
        if prefix > 0 { PointPattern::SharedPrefix { prefix } } else { PointPattern::General }
    }
}

/// The factors when the rows are a lexicographic Cartesian product with at least two factors of
/// size > 1; `None` otherwise.
fn cartesian_factors<T: Real>(points: ArrayView2<'_, T>) -> Option<Vec<Vec<T>>> {
    let (m, d) = points.dim();
    let mut factors = vec![Vec::new(); d];
    let mut stride = 1usize;
    for t in (0..d).rev() {
        // Column t repeats each value `stride` times, then cycles with period n_t * stride.
        let col = points.column(t);
        let mut n = 0;
        while n * stride < m && !(n > 0 && col[n * stride] == col[0]) {
            factors[t].push(col[n * stride]);
            n += 1;
        }
        stride = stride.checked_mul(n)?;
        if stride > m {
            return None;
        }
    }
    if stride != m || factors.iter().filter(|f| f.len() > 1).count() < 2 {
        return None;
    }
    // Verify every row, and that each factor's values are distinct.
    let mut stride = 1;
    for t in (0..d).rev() {
        let f = &factors[t];
        let col = points.column(t);
        if (0..m).any(|j| col[j] != f[(j / stride) % f.len()]) {
            return None;
        }
        let mut sorted: Vec<f64> = f.iter().map(|&v| Real::to_f64(v)).collect();
        sorted.sort_by(f64::total_cmp);
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
        stride *= f.len();
    }
    Some(factors)
}
