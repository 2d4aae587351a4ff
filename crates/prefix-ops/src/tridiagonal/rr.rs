//! Redundant Reduction (RR): the tridiagonal solve as a prefix scan of equations under an
//! associative segment-combine operator, then one parallel substitution step (digest D§3.3.2).
//!
//! **Unstable by construction**: every unknown is computed from `x_0` through an equation that
//! spans the whole prefix, which is the shooting method. Errors grow like `|λ|^m` where `λ` is the
//! larger root of `c λ² + b λ + a = 0`; on strictly diagonally dominant systems RR loses all
//! accuracy from `m ≈ 16-32` (D§3.3.3). It also divides by off-diagonal coefficients, so a zero
//! `a_k` or `c_k` inside a system gives NaN. It is therefore opt-in only.

use super::equation::Equation;
use super::real::Real;

/// Which scan network RR runs (both compute the same inclusive scan).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RrNetwork {
    /// Kogge-Stone: `log2 m` steps, `m - 2^k` combines in step `k`.
    KoggeStone,
    /// Ladner-Fischer in the thesis's sense (the Sklansky network): `log2 m` steps of `m / 2`
    /// combines each.
    LadnerFischer,
}

/// The segment `[p..q]` of equations absorbed so far, in two forms.
/// `i = (i0, i1, i2, id)`: `i0 x[p-1] + i1 x[q] + i2 x[q+1] = id` (intermediate form I).
/// `c = (c0, c1, c2, cd)`: `c0 x[p-1] + c1 x[p] + c2 x[q+1] = cd` (complete form C).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment<T> {
    pub i: [T; 4],
    pub c: [T; 4],
}

impl<T: Real> Segment<T> {
    /// One equation: both forms are the equation itself.
    pub(crate) fn single(e: Equation<T>) -> Self {
        let f = [e.a, e.b, e.c, e.d];
        Segment { i: f, c: f }
    }

    /// `L = [p..m]` followed by `R = [m+1..q]`, the associative RR operator.
    pub(crate) fn combine(l: Self, r: Self) -> Self {
        let (il, cl, ir, cr) = (l.i, l.c, r.i, r.c);
        // I_L: (x[p-1], x[m], x[m+1]); C_R: (x[m], x[m+1], x[q+1]); I_R: (x[m], x[q], x[q+1]);
        // C_L: (x[p-1], x[p], x[m+1]).
        // Reduction B then A: t = I_L - f C_R removes x[m+1] -> (x[p-1], x[m], x[q+1]);
        // I_new = t - g I_R removes x[m] -> (x[p-1], x[q], x[q+1]).
        let f = il[2] / cr[1];
        let t = [il[0], il[1] - f * cr[0], -f * cr[2], il[3] - f * cr[3]];
        let g = t[1] / ir[0];
        let i_new = [t[0], -g * ir[1], t[2] - g * ir[2], t[3] - g * ir[3]];
        // Reduction A then B: s = I_L - h C_R removes x[m] -> (x[p-1], x[m+1], x[q+1]);
        // C_new = s - e C_L removes x[m+1] -> (x[p-1], x[p], x[q+1]).
        let h = il[1] / cr[0];
        let s = [il[0], il[2] - h * cr[1], -h * cr[2], il[3] - h * cr[3]];
        let e = s[1] / cl[2];
        let c_new = [s[0] - e * cl[0], -e * cl[1], s[2], s[3] - e * cl[3]];
        Segment { i: i_new, c: c_new }
    }
}

/// Inclusive scan of the segments with [`Segment::combine`] over `network`.
pub(crate) fn scan<T: Real>(segs: &mut [Segment<T>], network: RrNetwork) {
    let n = segs.len();
    match network {
        RrNetwork::KoggeStone => {
            let mut j = 1;
            while j < n {
                let old = segs.to_vec();
                for i in j..n {
                    segs[i] = Segment::combine(old[i - j], old[i]);
                }
                j *= 2;
            }
        }
        RrNetwork::LadnerFischer => {
            // Step k: element i with bit k set takes the prefix ending just below its block.
            let mut k = 0;
            while (1usize << k) < n {
                let half = 1usize << k;
                for i in 0..n {
                    if i & half != 0 {
                        let src = (i >> k << k) - 1;
                        segs[i] = Segment::combine(segs[src], segs[i]);
                    }
                }
                k += 1;
            }
        }
    }
}

/// RR solve of one system (no padding needed: any length scans).
pub(crate) fn rr<T: Real>(eqs: &[Equation<T>], network: RrNetwork) -> Vec<T> {
    let m = eqs.len();
    if m == 0 {
        return Vec::new();
    }
    let mut segs: Vec<Segment<T>> = eqs.iter().map(|&e| Segment::single(e)).collect();
    scan(&mut segs, network);
    // C[0..m-1] couples x[0] alone (x[-1] and x[m] do not exist).
    let x0 = segs[m - 1].c[3] / segs[m - 1].c[1];
    let mut x = vec![x0; m];
    for i in 0..m - 1 {
        // C[0..i] couples x[0] and x[i+1].
        let c = segs[i].c;
        x[i + 1] = (c[3] - c[1] * x0) / c[2];
    }
    x
}
