//! A Nash-like coarse kernel (digest §4.2; the thesis gives no recurrence, so this is a
//! stand-in of the same shape): each cell plays smoothed fictitious play on a 2x2 stag-hunt
//! game whose payoffs its north, west and north-west neighbours' equilibrium payoffs perturb.
//! The element is two integers and four doubles (40 bytes, dsize 4); `iters` sets the grain.

use ndarray::Array2;

use crate::boundary::Boundary2;
use crate::config::Config2;
use crate::error::Result;
use crate::sweep2::run_2d;

/// Inner rounds per outer iteration (the thesis's nested loop).
const INNER: u32 = 16;
/// Temperature of the logit best response.
const TAU: f64 = 0.25;

/// One cell's equilibrium.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Nash {
    /// `i + j`: one more than the larger of north and west (a dependency-order check).
    pub it: i32,
    /// 1: both near "stag" (strategy 0), 2: both near "rabbit", 0: mixed.
    pub flag: i32,
    /// Probability the row player plays strategy 0.
    pub p: f64,
    /// Probability the column player plays strategy 0.
    pub q: f64,
    /// The row player's expected payoff.
    pub u1: f64,
    /// The column player's expected payoff.
    pub u2: f64,
}

impl Nash {
    /// The boundary: no perturbation (payoffs 0), the mixed start.
    pub const BOUNDARY: Self = Nash { it: -1, flag: 0, p: 0.5, q: 0.5, u1: 0.0, u2: 0.0 };
}

fn logit(d: f64) -> f64 {
    1.0 / (1.0 + (-d / TAU).exp())
}

/// The cell kernel: the stag hunt `A = [[2, 0], [1, 1]]` (row player), `B = A^T`, plus a tenth
/// of the neighbours' payoffs, then `iters x 16` rounds of smoothed fictitious play from
/// `p = q = 1/2`. Unperturbed, the start is the game's interior equilibrium and stays there.
pub fn nash_cell(iters: u32, n: &Nash, w: &Nash, nw: &Nash) -> Nash {
    let a = [[2.0 + 0.1 * n.u1, 0.1 * w.u1], [1.0, 1.0 + 0.1 * nw.u1]];
    let b = [[2.0 + 0.1 * n.u2, 1.0], [0.1 * w.u2, 1.0 + 0.1 * nw.u2]];
    let (mut p, mut q) = (0.5f64, 0.5f64);
    for t in 1..=iters {
        let step = 1.0 / f64::from(t);
        for _ in 0..INNER {
            let d1 = (a[0][0] * q + a[0][1] * (1.0 - q)) - (a[1][0] * q + a[1][1] * (1.0 - q));
            let d2 = (b[0][0] * p + b[1][0] * (1.0 - p)) - (b[0][1] * p + b[1][1] * (1.0 - p));
            let (bp, bq) = (logit(d1), logit(d2));
            p += (bp - p) * step;
            q += (bq - q) * step;
        }
    }
    let payoff = |m: &[[f64; 2]; 2]| {
        p * q * m[0][0] + p * (1.0 - q) * m[0][1] + (1.0 - p) * q * m[1][0] + (1.0 - p) * (1.0 - q) * m[1][1]
    };
    let flag = if p > 0.9 && q > 0.9 {
        1
    } else if p < 0.1 && q < 0.1 {
        2
    } else {
        0
    };
    Nash { it: n.it.max(w.it) + 1, flag, p, q, u1: payoff(&a), u2: payoff(&b) }
}

/// The Nash-like table of `rows x cols` cells with `iters` outer iterations, by `config`.
///
/// # Errors
/// Those of [`run_2d`].
pub fn nash(rows: usize, cols: usize, iters: u32, config: &Config2) -> Result<Array2<Nash>> {
    run_2d(rows, cols, &Boundary2::constant(Nash::BOUNDARY), config, |_, _, n, w, nw| {
        nash_cell(iters, n, w, nw)
    })
}
