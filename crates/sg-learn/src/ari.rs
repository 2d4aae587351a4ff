//! The adjusted Rand index (thesis Eq. 8.10).

use std::collections::HashMap;

/// The adjusted Rand index of two labelings of the same points: 1 for identical partitions (up
/// to renaming), about 0 for independent ones, negative below chance. `None` (noise) counts as
/// one more label of its own. Follows scikit-learn's convention of 1.0 when both labelings are a
/// single cluster or all singletons, and gives 1.0 for fewer than two points.
///
/// ```
/// use sg_learn::adjusted_rand_index;
/// let a = [Some(0), Some(0), Some(0), Some(1), Some(1), Some(1)];
/// let b = [Some(5), Some(5), Some(7), Some(7), Some(7), Some(7)];
/// assert!((adjusted_rand_index(&a, &b) - 12.0 / 37.0).abs() < 1e-12);
/// ```
///
/// Returns NaN when the two slices differ in length (the contract's signature has no error
/// channel).
pub fn adjusted_rand_index(a: &[Option<usize>], b: &[Option<usize>]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    let m = a.len();
    if m < 2 {
        return 1.0;
    }
    let mut table: HashMap<(Option<usize>, Option<usize>), u64> = HashMap::new();
    let (mut rows, mut cols): (HashMap<Option<usize>, u64>, HashMap<Option<usize>, u64>) = Default::default();
    for (&p, &q) in a.iter().zip(b) {
        *table.entry((p, q)).or_default() += 1;
        *rows.entry(p).or_default() += 1;
        *cols.entry(q).or_default() += 1;
    }
    let (nr, nc) = (rows.len(), cols.len());
    if nr == nc && (nr == 1 || nr == m) {
        return 1.0;
    }
    let pairs = |n: u64| (n * n.saturating_sub(1) / 2) as f64;
    let index: f64 = table.values().map(|&n| pairs(n)).sum();
    let sa: f64 = rows.values().map(|&n| pairs(n)).sum();
    let sb: f64 = cols.values().map(|&n| pairs(n)).sum();
    let expected = sa * sb / pairs(m as u64);
    let max = 0.5 * (sa + sb);
    if max == expected {
        return 1.0;
    }
    (index - expected) / (max - expected)
}
