//! System generators and oracles shared by the tridiagonal tests.
#![allow(dead_code, unreachable_pub)]

use prefix_ops::tridiagonal::{Layout, Real};
use rand::Rng;

/// Diagonals and right-hand side of a batch, in some layout.
#[derive(Clone)]
pub struct Problem<T> {
    pub a: Vec<T>,
    pub b: Vec<T>,
    pub c: Vec<T>,
    pub d: Vec<T>,
    pub m: usize,
    pub g: usize,
    pub layout: Layout,
}

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// b = |a| + |c| + U(0.5, 2).
    Dominant,
    /// [-1, 2, -1] with x = 1 (so d = [1, 0, ..., 0, 1]).
    Poisson,
    /// Random a, c, b in [-1, 1]: not dominant, needs pivoting.
    Hard,
    /// b = 0 on every other row: Thomas meets a zero pivot at once.
    ZeroDiagonal,
}

pub fn problem<T: Real>(rng: &mut impl Rng, kind: Kind, m: usize, g: usize, layout: Layout) -> Problem<T> {
    let n = m * g;
    let (mut a, mut b, mut c, mut d) = (vec![0.0f64; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for s in 0..g {
        for k in 0..m {
            let i = layout.index(m, g, s, k);
            let (av, bv, cv, dv) = match kind {
                Kind::Dominant => {
                    let (av, cv) = (rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
                    let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                    (
                        av,
                        sign * (f64::abs(av) + f64::abs(cv) + rng.random_range(0.5..2.0)),
                        cv,
                        rng.random_range(-1.0..1.0),
                    )
                }
                Kind::Poisson => (-1.0, 2.0, -1.0, if k == 0 || k + 1 == m { 1.0 } else { 0.0 }),
                Kind::Hard | Kind::ZeroDiagonal => {
                    let bv = if matches!(kind, Kind::ZeroDiagonal) && k % 2 == 0 {
                        0.0
                    } else {
                        rng.random_range(-1.0..1.0)
                    };
                    (
                        rng.random_range(-1.0..1.0),
                        bv,
                        rng.random_range(-1.0..1.0),
                        rng.random_range(-1.0..1.0),
                    )
                }
            };
            // a[0] and c[m-1] are ignored: fill them with garbage to prove it.
            a[i] = if k == 0 { 1e30 } else { av };
            c[i] = if k + 1 == m { -7e29 } else { cv };
            b[i] = bv;
            d[i] = if matches!(kind, Kind::Poisson) && m == 1 { 2.0 } else { dv };
        }
    }
    let t = |v: Vec<f64>| v.into_iter().map(T::of).collect();
    Problem { a: t(a), b: t(b), c: t(c), d: t(d), m, g, layout }
}

/// Dense Gaussian elimination with partial pivoting of system `s`, in f64: the oracle for the
/// pivoting solver.
pub fn dense_gepp<T: Real>(p: &Problem<T>, s: usize) -> Vec<f64> {
    let m = p.m;
    let mut mat = vec![vec![0.0f64; m + 1]; m];
    for k in 0..m {
        let i = p.layout.index(m, p.g, s, k);
        if k > 0 {
            mat[k][k - 1] = p.a[i].wide();
        }
        mat[k][k] = p.b[i].wide();
        if k + 1 < m {
            mat[k][k + 1] = p.c[i].wide();
        }
        mat[k][m] = p.d[i].wide();
    }
    for col in 0..m {
        let piv = (col..m).max_by(|&x, &y| mat[x][col].abs().total_cmp(&mat[y][col].abs())).unwrap();
        mat.swap(col, piv);
        for r in col + 1..m {
            let f = mat[r][col] / mat[col][col];
            for j in col..=m {
                mat[r][j] -= f * mat[col][j];
            }
        }
    }
    let mut x = vec![0.0; m];
    for r in (0..m).rev() {
        let s: f64 = (r + 1..m).map(|j| mat[r][j] * x[j]).sum();
        x[r] = (mat[r][m] - s) / mat[r][r];
    }
    x
}

/// f64 sequential Thomas of system `s` (the reference), straight from the textbook.
pub fn thomas_f64<T: Real>(p: &Problem<T>, s: usize) -> Vec<f64> {
    let m = p.m;
    let at = |v: &[T], k: usize| v[p.layout.index(m, p.g, s, k)].wide();
    let (mut cp, mut dp) = (vec![0.0; m], vec![0.0; m]);
    for k in 0..m {
        let (a, pc, pd) = if k == 0 { (0.0, 0.0, 0.0) } else { (at(&p.a, k), cp[k - 1], dp[k - 1]) };
        let piv = at(&p.b, k) - a * pc;
        cp[k] = if k + 1 < m { at(&p.c, k) / piv } else { 0.0 };
        dp[k] = (at(&p.d, k) - a * pd) / piv;
    }
    for k in (0..m.saturating_sub(1)).rev() {
        dp[k] -= cp[k] * dp[k + 1];
    }
    dp
}

/// Reference solution of the whole batch in its layout.
pub fn reference<T: Real>(p: &Problem<T>, oracle: fn(&Problem<T>, usize) -> Vec<f64>) -> Vec<f64> {
    let mut x = vec![0.0; p.m * p.g];
    for s in 0..p.g {
        for (k, v) in oracle(p, s).into_iter().enumerate() {
            x[p.layout.index(p.m, p.g, s, k)] = v;
        }
    }
    x
}

/// Largest |got - want| / max(|want|, 1); NaN gives infinity.
pub fn rel_err<T: Real>(got: &[T], want: &[f64]) -> f64 {
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let g = g.wide();
            if g.is_finite() { (g - w).abs() / w.abs().max(1.0) } else { f64::INFINITY }
        })
        .fold(0.0, f64::max)
}
