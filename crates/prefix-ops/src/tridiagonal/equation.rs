//! One equation `a x[i-u] + b x[i] + c x[i+u] = d` and the elimination step shared by CR, PCR and
//! TPR.

use super::real::Real;

/// Equation `a x[i-u] + b x[i] + c x[i+u] = d`; the stride `u` is implied by the algorithm step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Equation<T> {
    pub a: T,
    pub b: T,
    pub c: T,
    pub d: T,
}

impl<T: Real> Equation<T> {
    /// `x = 0`: the padding row, coupled to nothing.
    pub(crate) fn identity() -> Self {
        Equation { a: T::zero(), b: T::one(), c: T::zero(), d: T::zero() }
    }

    /// The CR/PCR update of this equation with its neighbours at distance `u`: eliminate
    /// `x[i-u]` using `left` and `x[i+u]` using `right`. A missing side (`None`) is skipped and its
    /// coupling coefficient kept, which is the corrected TPR boundary rule (digest D§3.3.4); for
    /// CR and PCR a missing side has a zero coupling already, so the rule changes nothing there.
    pub(crate) fn reduce(self, left: Option<Self>, right: Option<Self>) -> Self {
        let mut out = self;
        if let Some(l) = left {
            let s = self.a / l.b;
            out.a = -l.a * s;
            out.b = out.b - l.c * s;
            out.d = out.d - l.d * s;
        }
        if let Some(r) = right {
            let s = self.c / r.b;
            out.c = -r.c * s;
            out.b = out.b - r.a * s;
            out.d = out.d - r.d * s;
        }
        out
    }

    /// `x[i]` from this equation and the neighbouring unknowns it couples.
    pub(crate) fn solve_with(self, left: T, right: T) -> T {
        (self.d - self.a * left - self.c * right) / self.b
    }
}

/// The system padded with identity rows to `len` equations (a power of two for CR, PCR, WM).
pub(crate) fn padded<T: Real>(eqs: &[Equation<T>], len: usize) -> Vec<Equation<T>> {
    let mut out = Vec::with_capacity(len);
    out.extend_from_slice(eqs);
    out.resize(len, Equation::identity());
    out
}
