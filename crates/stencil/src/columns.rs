//! The fast order of the isotropic 27-point stencil (the 27 points of `[-1, 1]^3`, one weight
//! per number of non-zero offsets, `p_0..p_3`), computed a column of vectors at a time down the
//! rows (axis 1) so that what neighbouring output rows share is loaded and summed once and kept
//! in registers.
//!
//! The point `(i, j, k)` is the sum of the contributions of its three rows `j - 1`, `j`,
//! `j + 1` (each row's three planes): `(R_1[j-1] + R_0[j]) + R_1[j+1]`. With
//! `X_1 = x[i-1] + x[i+1]` (the two outer planes added), `t = (x[i][k-1] + x[i][k+1]) + X_1[k]`
//! and `s = X_1[k-1] + X_1[k+1]`, a row contributes `R_0 = (p_0 x[i][k] + p_1 t) + p_2 s` to the
//! output on the same row and `R_1 = (p_1 x[i][k] + p_2 t) + p_3 s` to the outputs one row away.
//! Walking down a column, each row's contributions are formed once and two vectors per output
//! vector are carried in registers (`R_1[j-1] + R_0[j]` and `R_1[j]`): 9 loads, 1 store and 18
//! flops per point (the general fast program of [`crate::taps`]: 17 loads, 3 stores and 18
//! flops; the exact order: 27 loads, 1 store and 53 flops).
//!
//! The order is one fixed expression per point (evaluated one point at a time by
//! [`Cube::point`], the reference the vector kernel equals bitwise), with no fused
//! multiply-adds, so the result does not depend on blocks, threads, slabs or instruction set.
//!
//! The same walk for the 7- and 13-point stars (4 r + 1 loads per point instead of 6 r + 1,
//! with the centre plane's rows as a moving window of registers, or with pending outputs
//! carried as here) was measured slower than the row-wise program on a loaded Zen 3 (the
//! 13-point f64 by 25-50 %), and was dropped.

use crate::element::Element;
use crate::simd::{Lanes, Scalar};
use crate::taps::{Groups, Width, skew};

/// The isotropic 27-point stencil's weights: centre, faces, edges, corners.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Cube<T>(pub(crate) [T; 4]);

impl<T: Element> Cube<T> {
    /// The weights of a stencil whose points are the whole of `[-1, 1]^3` with one weight per
    /// number of non-zero offsets (compared bitwise); `None` for any other stencil.
    pub(crate) fn of(offsets: &[[isize; 3]], weights: &[T]) -> Option<Cube<T>> {
        // Offsets are distinct, so 27 of them inside the box are all of it.
        if offsets.len() != 27 || !offsets.iter().all(|d| d.iter().all(|x| x.abs() <= 1)) {
            return None;
        }
        let mut w: [Option<T>; 4] = [None; 4];
        for (d, &v) in offsets.iter().zip(weights) {
            let c = d.iter().filter(|x| **x != 0).count();
            match w[c] {
                Some(u) if u.to_f64().to_bits() != v.to_f64().to_bits() => return None,
                _ => w[c] = Some(v),
            }
        }
        Some(Cube([w[0]?, w[1]?, w[2]?, w[3]?]))
    }

    /// The same weights in `E` (the kernels' lane type, which is `T`).
    pub(crate) fn cast<E: Element>(&self) -> Cube<E> {
        Cube(self.0.map(|w| E::from_f64(w.to_f64())))
    }

    /// The fast order at in-plane index `at` of the output plane whose input planes are
    /// `inputs` (`i - 1`, `i`, `i + 1`), rows of `n2` points, one point at a time.
    pub(crate) fn point(&self, inputs: &[&[T]], n2: usize, at: usize) -> T {
        let x = |p: usize, dj: isize, dk: isize| inputs[p][(at as isize + dj * n2 as isize + dk) as usize];
        let x0 = |dj: isize, dk: isize| x(1, dj, dk);
        let x1 = |dj: isize, dk: isize| x(0, dj, dk) + x(2, dj, dk);
        // Row `dj`'s contributions to the output at its own row and one row away.
        let rows = |dj: isize| {
            let x = x0(dj, 0);
            let t = (x0(dj, -1) + x0(dj, 1)) + x1(dj, 0);
            let s1 = x1(dj, -1) + x1(dj, 1);
            let p = self.0;
            [(p[0] * x + p[1] * t) + p[2] * s1, (p[1] * x + p[2] * t) + p[3] * s1]
        };
        (rows(-1)[1] + rows(0)[0]) + rows(1)[1]
    }
}

/// Where the kernel reads and writes: the input planes `i - 1`, `i`, `i + 1`, the output
/// plane, the row length and the rows to compute.
pub(crate) struct Frame<E> {
    pub(crate) planes: Vec<*const E>,
    pub(crate) dst: *mut E,
    pub(crate) n2: usize,
    pub(crate) rows: std::ops::Range<usize>,
}

/// The fast order on the frame's rows, interior columns `1..n2 - 1`, in lanes `V`, columns of
/// `U` vectors (then single vectors and points at the row's ends, as [`Groups`] cuts them).
///
/// Safety: `V`'s instruction set is available, the frame has three planes holding rows
/// `rows.start - 1..rows.end + 1` of `n2` points each, and the output holds its `rows`.
#[inline(always)]
pub(crate) unsafe fn run<V: Lanes, const U: usize>(cube: &Cube<V::E>, f: &Frame<V::E>) {
    let len = f.n2 - 2;
    let skew = skew::<V>(f.planes[1].wrapping_add(f.rows.start * f.n2 + 1));
    let p = cube.0;
    // SAFETY: forwarded; every column lies inside the interior columns.
    unsafe {
        let w = [V::splat(p[0]), V::splat(p[1]), V::splat(p[2]), V::splat(p[3])];
        let ws = [Scalar::splat(p[0]), Scalar::splat(p[1]), Scalar::splat(p[2]), Scalar::splat(p[3])];
        for (q, width) in Groups::new(len, V::N * U, V::N, skew) {
            match width {
                Width::Big => column::<V, U>(f, &w, q + 1),
                Width::One => column::<V, 1>(f, &w, q + 1),
                Width::Point => column::<Scalar<V::E>, 1>(f, &ws, q + 1),
            }
        }
    }
}

/// `a[o] + b[o]`, a vector (a function, not a closure: closures are not compiled for the
/// kernels' instruction set, so the vector methods would not inline into them).
#[inline(always)]
unsafe fn pair<V: Lanes>(a: *const V::E, b: *const V::E, o: usize) -> V {
    // SAFETY: the caller guarantees a vector at `o` in both.
    unsafe { V::load(a.add(o)).add(V::load(b.add(o))) }
}

/// The two contributions of row `row` at the column of `U` vectors starting at point `k`:
/// `R_0` (to the output at the same row) and `R_1` (to the outputs one row away).
#[inline(always)]
unsafe fn contributions<V: Lanes, const U: usize>(
    f: &Frame<V::E>,
    p: &[V; 4],
    row: usize,
    k: usize,
) -> [[V; U]; 2] {
    let (a, c, b) = (f.planes[0], f.planes[1], f.planes[2]);
    // SAFETY: the caller guarantees the row's columns `k - 1..k + U * V::N + 1` in every plane.
    unsafe {
        let mut out = [[V::splat(V::E::ZERO); U]; 2];
        for u in 0..U {
            let o = row * f.n2 + k + u * V::N;
            let x0 = V::load(c.add(o));
            let t = V::load(c.add(o - 1)).add(V::load(c.add(o + 1))).add(pair::<V>(a, b, o));
            let s1 = pair::<V>(a, b, o - 1).add(pair::<V>(a, b, o + 1));
            out[0][u] = x0.mul(p[0]).add(t.mul(p[1])).add(s1.mul(p[2]));
            out[1][u] = x0.mul(p[1]).add(t.mul(p[2])).add(s1.mul(p[3]));
        }
        out
    }
}

/// The fast order on the column of `U` vectors starting at point `k` of each row: the sum
/// `R_1[j - 1] + R_0[j]` and `R_1[j]` are carried in registers while row `j + 1`'s
/// contributions are formed.
#[inline(always)]
unsafe fn column<V: Lanes, const U: usize>(f: &Frame<V::E>, p: &[V; 4], k: usize) {
    // SAFETY: the caller guarantees rows `rows.start - 1..rows.end + 1` at columns
    // `k - 1..k + U * V::N + 1` of every plane, and the output's rows at `k..k + U * V::N`.
    unsafe {
        let [_, mut part] = contributions::<V, U>(f, p, f.rows.start - 1, k);
        let [r0, mut r1] = contributions::<V, U>(f, p, f.rows.start, k);
        for u in 0..U {
            part[u] = part[u].add(r0[u]);
        }
        for j in f.rows.clone() {
            let [r0, next] = contributions::<V, U>(f, p, j + 1, k);
            for u in 0..U {
                part[u].add(next[u]).store(f.dst.add(j * f.n2 + k + u * V::N));
                part[u] = r1[u].add(r0[u]);
            }
            r1 = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cube;

    fn cube_points(w: impl Fn([isize; 3]) -> f64) -> (Vec<[isize; 3]>, Vec<f64>) {
        let mut d = Vec::new();
        for a in -1..=1 {
            for b in -1..=1 {
                for c in -1..=1 {
                    d.push([a, b, c]);
                }
            }
        }
        let w = d.iter().map(|&x| w(x)).collect();
        (d, w)
    }

    fn class(d: [isize; 3]) -> usize {
        d.iter().filter(|x| **x != 0).count()
    }

    #[test]
    fn only_the_isotropic_box_is_a_cube() {
        let (d, w) = cube_points(|d| [0.5, 0.25, 0.125, 0.0625][class(d)]);
        assert_eq!(Cube::of(&d, &w), Some(Cube([0.5, 0.25, 0.125, 0.0625])));
        // One edge with its own weight, a missing corner, a point outside the box.
        let (_, mut w2) = (d.clone(), w.clone());
        w2[1] = 0.3;
        assert_eq!(Cube::of(&d, &w2), None);
        assert_eq!(Cube::of(&d[1..], &w[1..]), None);
        let mut d3 = d.clone();
        d3[0] = [2, 0, 0];
        assert_eq!(Cube::of(&d3, &w), None);
    }

    #[test]
    fn the_point_order_is_the_weighted_sum_on_dyadic_values() {
        // Three planes of 4 x 5 points; weights and values dyadic, so any order is exact.
        let (d, w) = cube_points(|d| [-3.0, 0.5, 0.25, 0.125][class(d)]);
        let cube = Cube::of(&d, &w).unwrap();
        let n2 = 5;
        let planes: Vec<Vec<f64>> =
            (0..3).map(|p| (0..20).map(|x| ((x * 7 + p * 3) % 11) as f64).collect()).collect();
        let inputs: Vec<&[f64]> = planes.iter().map(|p| p.as_slice()).collect();
        for at in [n2 + 1, 2 * n2 + 3] {
            let want: f64 = d
                .iter()
                .zip(&w)
                .map(|(o, w)| {
                    w * inputs[(o[0] + 1) as usize][(at as isize + o[1] * n2 as isize + o[2]) as usize]
                })
                .sum();
            assert_eq!(cube.point(&inputs, n2, at), want);
        }
    }
}
