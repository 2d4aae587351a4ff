//! The lockstep walk of the subspace algorithm: a chunk of data points visits every subspace
//! together (no point can skip on a full grid, or skipping is off), so the loops are swapped
//! (subspaces outside, points inside: SIMD over points).
//!
//! Everything that depends only on a point and a dimension is tabulated once per chunk: for
//! dimension `k` and level `l` the 1-D factor `φ_{l,i}(x_k)` of the nearest odd index `i` and
//! its index digit `⌊2^{l−1}x_k⌋` (`Σ_k L_k` rows, `L_k` the deepest level of dimension `k`).
//! A subspace then costs, per point, one multiply and one multiply-add per recomputed
//! dimension (prefix reuse: only the dimensions from the first changed one on), and the last
//! dimension is folded into the caller's gather or scatter ([`Last`]), which is where
//! consecutive subspaces differ most often.

use sg_core::Basis;
use sg_core::basis::BELOW_ONE;

use super::SubspaceOperator;

/// The last dimension's step of one subspace, handed to the caller: for point `o` of the chunk
/// the candidate sits at `offset + (flat[o] << shift) + digit[o]` of the subspace arrays, and
/// its value is `prod[o]·phi[o]`.
pub(super) struct Last<'a> {
    /// Start of the subspace's array.
    pub(super) offset: usize,
    /// Prefix products over the first `d − 1` dimensions.
    pub(super) prod: &'a [f64],
    /// Prefix flat indices over the first `d − 1` dimensions.
    pub(super) flat: &'a [u32],
    /// The last dimension's factors.
    pub(super) phi: &'a [f64],
    /// The last dimension's index digits.
    pub(super) digit: &'a [u32],
    /// `l − 1` of the last dimension's level `l`.
    pub(super) shift: u32,
}

impl Last<'_> {
    /// Calls `f(o, slot, value)` for every point `o` of the chunk: its candidate's position in
    /// the subspace arrays and `φ(x_o)`. The rows are zipped, not indexed, so that the only
    /// bounds check left in the caller's loop is the one of its own gather or scatter.
    #[inline(always)]
    pub(super) fn for_each(&self, mut f: impl FnMut(usize, usize, f64)) {
        let (offset, shift) = (self.offset, self.shift);
        let rows = self.flat.iter().zip(self.digit).zip(self.prod.iter().zip(self.phi));
        for (o, ((&flat, &digit), (&p, &phi))) in rows.enumerate() {
            f(o, offset + ((flat << shift) + digit) as usize, p * phi);
        }
    }

    /// `out[o] += a[slot(o)]·φ(x_o)` (`B α` in slot order).
    #[inline(always)]
    pub(super) fn gather(&self, a: &[f64], out: &mut [f64]) {
        let (offset, shift) = (self.offset, self.shift);
        let rows = self.flat.iter().zip(self.digit).zip(self.prod.iter().zip(self.phi));
        for (y, ((&flat, &digit), (&p, &phi))) in out.iter_mut().zip(rows) {
            *y += a[offset + ((flat << shift) + digit) as usize] * (p * phi);
        }
    }

    /// `acc[slot(o)] += v[o]·φ(x_o)` (`Bᵀ v` in slot order).
    #[inline(always)]
    pub(super) fn scatter(&self, v: &[f64], acc: &mut [f64]) {
        let (offset, shift) = (self.offset, self.shift);
        let rows = self.flat.iter().zip(self.digit).zip(self.prod.iter().zip(self.phi));
        for (&vo, ((&flat, &digit), (&p, &phi))) in v.iter().zip(rows) {
            acc[offset + ((flat << shift) + digit) as usize] += vo * (p * phi);
        }
    }
}

/// The 1-D factors and digits of one chunk, row `(k, l)` at `start[k] + l − 1`.
struct Tables {
    len: usize,
    start: Vec<usize>,
    phi: Vec<f64>,
    digit: Vec<u32>,
}

impl Tables {
    fn new(op: &SubspaceOperator, begin: usize, len: usize) -> Tables {
        let d = op.d;
        let mut start = Vec::with_capacity(d + 1);
        start.push(0);
        for k in 0..d {
            start.push(start[k] + op.max_level[k] as usize);
        }
        let rows = start[d];
        let (mut phi, mut digit) = (vec![0.0; rows * len], vec![0; rows * len]);
        let mut x = vec![0.0; len];
        for k in 0..d {
            for (o, v) in x.iter_mut().enumerate() {
                *v = op.data[(begin + o) * d + k];
            }
            for l in 1..=op.max_level[k] {
                let r = (start[k] + l as usize - 1) * len;
                factor_row(op.basis, l, &x, &mut phi[r..r + len], &mut digit[r..r + len]);
            }
        }
        Tables { len, start, phi, digit }
    }

    /// Factors and digits of dimension `k` at level `l`.
    fn row(&self, k: usize, l: u32) -> (&[f64], &[u32]) {
        let r = (self.start[k] + l as usize - 1) * self.len;
        (&self.phi[r..r + self.len], &self.digit[r..r + self.len])
    }
}

impl SubspaceOperator {
    /// Walks the chunk `begin .. begin + len` over every subspace in lockstep and calls
    /// `last(s, step)` once per subspace `s` with the prefix over the first `d − 1` dimensions.
    ///
    /// Prefix rows: row `j` holds the products and flat indices over dimensions `0 .. j`; the
    /// constant level-1 factors of the modified basis are not multiplied in at all (`src[j]`
    /// names the row that holds prefix `j`, which passes on its input row for such a factor).
    pub(super) fn walk_lockstep(&self, begin: usize, len: usize, mut last: impl FnMut(usize, Last<'_>)) {
        let d = self.d;
        let tables = Tables::new(self, begin, len);
        let mut prod = vec![1.0; d * len];
        let mut flat = vec![0u32; d * len];
        let mut src: Vec<usize> = (0..d).collect();
        for s in 0..self.subspaces() {
            let l = self.subspace_levels(s);
            let from = if self.tuning.reuse_intermediates { self.changed[s] } else { 0 };
            for k in from..d - 1 {
                if self.basis == Basis::ModifiedLinear && l[k] == 1 {
                    src[k + 1] = src[k];
                    continue;
                }
                let r = src[k];
                let (p_lo, p_hi) = prod.split_at_mut((k + 1) * len);
                let (f_lo, f_hi) = flat.split_at_mut((k + 1) * len);
                let (phi, digit) = tables.row(k, l[k]);
                let shift = l[k] - 1;
                for ((np, &p), &phi) in p_hi[..len].iter_mut().zip(&p_lo[r * len..(r + 1) * len]).zip(phi) {
                    *np = p * phi;
                }
                for ((nf, &f), &h) in f_hi[..len].iter_mut().zip(&f_lo[r * len..(r + 1) * len]).zip(digit) {
                    *nf = (f << shift) + h;
                }
                src[k + 1] = k + 1;
            }
            let r = src[d - 1] * len;
            let (phi, digit) = tables.row(d - 1, l[d - 1]);
            let step = Last {
                offset: self.offsets[s],
                prod: &prod[r..r + len],
                flat: &flat[r..r + len],
                phi,
                digit,
                shift: l[d - 1] - 1,
            };
            last(s, step);
        }
    }
}

/// Writes the factor of level `l` and its index digit for every point of a row. The nearest
/// odd index is `2h + 1` with `h = ⌊2^{l−1}·min(x, BELOW_ONE)⌋`, which is also the digit; the
/// branches on the basis and the level are outside the point loop, the ones on the boundary
/// functions are selects.
fn factor_row(basis: Basis, l: u32, x: &[f64], phi: &mut [f64], digit: &mut [u32]) {
    let scale = (1u64 << l) as f64;
    let last = 0.5 * scale - 1.0;
    let hat = |t: f64, h: f64| 1.0 - (t - (2.0 * h + 1.0)).abs();
    match basis {
        Basis::Linear => row_loop(x, phi, digit, scale, hat),
        Basis::ModifiedLinear if l == 1 => row_loop(x, phi, digit, scale, |_, _| 1.0),
        Basis::ModifiedLinear => row_loop(x, phi, digit, scale, |t, h| {
            let edge = if h == 0.0 { 2.0 - t } else { t - 2.0 * h };
            if h == 0.0 || h == last { edge } else { hat(t, h) }
        }),
    }
}

/// The point loop of [`factor_row`] for one 1-D function family `f(t, h)` (before clamping
/// at 0), `t = 2^l·x`.
#[inline(always)]
fn row_loop(x: &[f64], phi: &mut [f64], digit: &mut [u32], scale: f64, f: impl Fn(f64, f64) -> f64) {
    let half = 0.5 * scale;
    for ((&x, p), d) in x.iter().zip(phi.iter_mut()).zip(digit.iter_mut()) {
        let h = floor_small(half * x.min(BELOW_ONE));
        *p = f(scale * x, h).max(0.0);
        *d = h as u32;
    }
}

/// `⌊v⌋` for `0 <= v < 2^51` by rounding through `2^52` and stepping down where that rounded
/// up: two adds, a compare and a select, which vectorise on every x86-64, where `f64::floor`
/// is a library call per element unless SSE4.1 is enabled at compile time.
#[inline(always)]
fn floor_small(v: f64) -> f64 {
    const ROUND: f64 = (1u64 << 52) as f64;
    let r = (v + ROUND) - ROUND;
    if r > v { r - 1.0 } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_small_is_floor() {
        let mut v = vec![0.0, 0.5, 1.0, 1.5, 2.5, 3.5, 2.0f64.powi(50) + 0.5, 2.0f64.powi(51) - 1.0];
        v.extend((0..1000).map(|j| j as f64 * 0.37 + (j % 3) as f64 / 3.0));
        v.extend([BELOW_ONE, 64.0 * BELOW_ONE, 1_023.999_999_999_999_9]);
        for x in v {
            assert_eq!(floor_small(x), x.floor(), "{x}");
        }
    }

    #[test]
    fn table_rows_are_the_basis_values_and_digits() {
        use sg_core::{AdaptiveGrid, GridSpec};
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 4).unwrap()).unwrap();
        let xs = [0.0, 1.0, 0.5, 0.3, 0.875, 0.126];
        let x =
            ndarray::Array2::from_shape_fn((xs.len(), 2), |(o, k)| if k == 0 { xs[o] } else { 1.0 - xs[o] });
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let op = SubspaceOperator::new(&grid, basis, x.view(), Default::default()).unwrap();
            let t = Tables::new(&op, 0, xs.len());
            for (k, l) in [(0, 1), (0, 3), (1, 4)] {
                let (phi, digit) = t.row(k, l);
                for o in 0..xs.len() {
                    let v = x[[o, k]];
                    let h = ((1u64 << (l - 1)) as f64 * v.min(BELOW_ONE)).floor();
                    assert_eq!(digit[o] as f64, h);
                    let i = 2 * h as u32 + 1;
                    let want = super::super::phi(basis, l, i, (1u64 << l) as f64 * v);
                    assert_eq!(phi[o], want, "{basis:?} k {k} l {l} x {v}");
                }
            }
        }
    }
}
