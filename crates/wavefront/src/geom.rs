//! Geometry of the sweep: anti-diagonals of a `rows x cols` table, planes of an `n0 x n1 x n2`
//! box, their lengths and offsets in diagonal-major order, and which of them a band holds.
//!
//! The formulas are the research digest's (thesis §3, corrected and extended to non-square
//! grids); the tests check each against brute-force enumeration.

use std::ops::RangeInclusive;

/// `x (x + 1) / 2` for `x > 0`, else 0: the number of pairs `(i, j) >= 0` with `i + j < x`.
fn tri(x: i128) -> i128 {
    if x > 0 { x * (x + 1) / 2 } else { 0 }
}

/// `(x + 2)(x + 1) / 2` for `x >= 0`, else 0: the number of triples `>= 0` summing to `x`.
fn tri_sum(x: i128) -> i128 {
    if x >= 0 { (x + 2) * (x + 1) / 2 } else { 0 }
}

/// Number of anti-diagonals `d = i + j` of a `rows x cols` table: `rows + cols - 1` (0 if empty).
pub fn diag_count(rows: usize, cols: usize) -> usize {
    if rows == 0 || cols == 0 { 0 } else { rows + cols - 1 }
}

/// Cells on anti-diagonal `d`: `min(d + 1, rows, cols, rows + cols - 1 - d)`, 0 outside.
pub fn diag_len(rows: usize, cols: usize, d: usize) -> usize {
    if d >= diag_count(rows, cols) {
        return 0;
    }
    (d + 1).min(rows).min(cols).min(rows + cols - 1 - d)
}

/// The smallest row on anti-diagonal `d`: `max(0, d - (cols - 1))`. Position `p` on the diagonal
/// is row `diag_i_min + p`, column `d - row`.
pub fn diag_i_min(cols: usize, d: usize) -> usize {
    d.saturating_sub(cols.saturating_sub(1))
}

/// Cells on the anti-diagonals before `d` (the offset of diagonal `d` in diagonal-major order):
/// `T(d) - T(d - rows) - T(d - cols) + T(d - rows - cols)` with `T(x) = x (x + 1) / 2` for
/// `x > 0`. For a square `n x n` table this is the digest's `T(d)`, resp. `n^2 - T(2n - 1 - d)`.
pub fn diag_offset(rows: usize, cols: usize, d: usize) -> usize {
    let (r, c, d) = (rows as i128, cols as i128, d.min(diag_count(rows, cols)) as i128);
    (tri(d) - tri(d - r) - tri(d - c) + tri(d - r - c)) as usize
}

/// The central anti-diagonal, `floor((rows + cols - 2) / 2)`: `n - 1` for an `n x n` table,
/// the middle of the longest ones otherwise.
pub fn main_diag(rows: usize, cols: usize) -> usize {
    (rows + cols).saturating_sub(2) / 2
}

/// The anti-diagonals a band of `band` holds: `2 band + 1` diagonals centred on
/// [`main_diag`], clipped to the table; `None` for `band < 0` (no band) or an empty table.
pub fn band_diagonals(rows: usize, cols: usize, band: isize) -> Option<RangeInclusive<usize>> {
    let count = diag_count(rows, cols);
    if band < 0 || count == 0 {
        return None;
    }
    let centre = main_diag(rows, cols);
    let b = band.unsigned_abs();
    Some(centre.saturating_sub(b)..=(centre.saturating_add(b)).min(count - 1))
}

/// Number of planes `s = i + j + k` of an `n0 x n1 x n2` box: `n0 + n1 + n2 - 2` (0 if empty).
pub fn plane_count(n0: usize, n1: usize, n2: usize) -> usize {
    if n0 == 0 || n1 == 0 || n2 == 0 { 0 } else { n0 + n1 + n2 - 2 }
}

/// Cells on plane `s`, by inclusion-exclusion over the three upper bounds:
/// `C(s) - sum C(s - n_a) + sum C(s - n_a - n_b) - C(s - n0 - n1 - n2)` with
/// `C(x) = (x + 2)(x + 1) / 2` for `x >= 0`. For a cube of side `m` this is the digest's
/// `N(s) = C2(s + 2) - 3 C2(s - m + 2) + 3 C2(s - 2m + 2) - C2(s - 3m + 2)`.
pub fn plane_len(n0: usize, n1: usize, n2: usize, s: usize) -> usize {
    if s >= plane_count(n0, n1, n2) {
        return 0;
    }
    let (a, b, c, s) = (n0 as i128, n1 as i128, n2 as i128, s as i128);
    let v = tri_sum(s) - tri_sum(s - a) - tri_sum(s - b) - tri_sum(s - c)
        + tri_sum(s - a - b)
        + tri_sum(s - a - c)
        + tri_sum(s - b - c)
        - tri_sum(s - a - b - c);
    v as usize
}

/// The central plane `ceil((n0 + n1 + n2 - 3) / 2)`; for a cube of side `m` the digest's
/// `ceil(3 (m - 1) / 2)`, the index of a largest plane.
pub fn main_plane(n0: usize, n1: usize, n2: usize) -> usize {
    (n0 + n1 + n2).saturating_sub(3).div_ceil(2)
}

/// The planes a band of `band` holds: `2 band + 1` planes centred on [`main_plane`], clipped;
/// `None` for `band < 0` or an empty box.
pub fn band_planes(n0: usize, n1: usize, n2: usize, band: isize) -> Option<RangeInclusive<usize>> {
    let count = plane_count(n0, n1, n2);
    if band < 0 || count == 0 {
        return None;
    }
    let centre = main_plane(n0, n1, n2);
    let b = band.unsigned_abs();
    Some(centre.saturating_sub(b)..=(centre.saturating_add(b)).min(count - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [usize; 8] = [1, 2, 3, 4, 5, 7, 8, 11];

    #[test]
    fn diagonals_match_enumeration() {
        for &r in &SIZES {
            for &c in &SIZES {
                let count = diag_count(r, c);
                let mut lens = vec![0usize; count];
                let mut rows_on = vec![usize::MAX; count];
                for i in 0..r {
                    for j in 0..c {
                        lens[i + j] += 1;
                        rows_on[i + j] = rows_on[i + j].min(i);
                    }
                }
                let mut offset = 0;
                for d in 0..count {
                    assert_eq!(diag_len(r, c, d), lens[d], "len {r}x{c} d={d}");
                    assert_eq!(diag_i_min(c, d), rows_on[d], "i_min {r}x{c} d={d}");
                    assert_eq!(diag_offset(r, c, d), offset, "offset {r}x{c} d={d}");
                    offset += lens[d];
                }
                assert_eq!(diag_offset(r, c, count), r * c);
                assert_eq!(diag_len(r, c, count), 0);
                let longest = *lens.iter().max().unwrap();
                assert_eq!(lens[main_diag(r, c)], longest, "main diagonal {r}x{c}");
            }
        }
    }

    #[test]
    fn thesis_examples() {
        // Fig 2.17: a 4 x 6 grid sweeps 9 diagonals of parallelism 1,2,3,4,4,4,3,2,1.
        let lens: Vec<usize> = (0..diag_count(4, 6)).map(|d| diag_len(4, 6, d)).collect();
        assert_eq!(lens, [1, 2, 3, 4, 4, 4, 3, 2, 1]);
        // Fig 3.3: 20 x 20, band 2: the GPU takes diagonals 17..=21, 94 cells; 153 on each side.
        let band = band_diagonals(20, 20, 2).unwrap();
        assert_eq!(band, 17..=21);
        let gpu: usize = band.clone().map(|d| diag_len(20, 20, d)).sum();
        assert_eq!(gpu, 94);
        assert_eq!(diag_offset(20, 20, 17), 153);
        assert_eq!(400 - diag_offset(20, 20, 22), 153);
        // The digest's table of cube plane sizes.
        let m4: Vec<usize> = (0..plane_count(4, 4, 4)).map(|s| plane_len(4, 4, 4, s)).collect();
        assert_eq!(m4, [1, 3, 6, 10, 12, 12, 10, 6, 3, 1]);
        let m5: Vec<usize> = (0..plane_count(5, 5, 5)).map(|s| plane_len(5, 5, 5, s)).collect();
        assert_eq!(m5, [1, 3, 6, 10, 15, 18, 19, 18, 15, 10, 6, 3, 1]);
        assert_eq!(main_plane(4, 4, 4), 5);
        assert_eq!(main_plane(5, 5, 5), 6);
    }

    #[test]
    fn planes_match_enumeration() {
        for &a in &[1usize, 2, 3, 5, 6] {
            for &b in &[1usize, 2, 4, 7] {
                for &c in &[1usize, 3, 5] {
                    let mut lens = vec![0usize; plane_count(a, b, c)];
                    for i in 0..a {
                        for j in 0..b {
                            for k in 0..c {
                                lens[i + j + k] += 1;
                            }
                        }
                    }
                    for (s, &want) in lens.iter().enumerate() {
                        assert_eq!(plane_len(a, b, c, s), want, "{a}x{b}x{c} s={s}");
                    }
                    let longest = *lens.iter().max().unwrap();
                    assert_eq!(lens[main_plane(a, b, c)], longest, "main plane {a}x{b}x{c}");
                }
            }
        }
    }

    #[test]
    fn bands_clip_and_disable() {
        assert_eq!(band_diagonals(5, 5, -1), None);
        assert_eq!(band_diagonals(5, 5, 0), Some(4..=4));
        assert_eq!(band_diagonals(5, 5, 100), Some(0..=8));
        assert_eq!(band_diagonals(1, 1, 3), Some(0..=0));
        assert_eq!(band_diagonals(0, 4, 1), None);
        assert_eq!(band_planes(3, 3, 3, 1), Some(2..=4));
        assert_eq!(band_planes(3, 3, 3, -2), None);
        assert_eq!(band_planes(2, 2, 2, 9), Some(0..=3));
    }
}
