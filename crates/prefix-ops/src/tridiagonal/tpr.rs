//! Tree-Partitioning Reduction (digest D§3.3.4, the verified reconstruction): slices of `S`
//! equations reduce independently, one cross-slice step forms a reduced system in the
//! slice-bottom unknowns, and slices substitute back independently. Work `O(m)`.
//!
//! The boundary rule is the corrected one: a neighbour outside the slice is skipped and its
//! coupling coefficient kept (the thesis's literal "identity equation" drops the coupling).

use super::equation::{Equation, padded};
use super::real::Real;

/// Stage 1 on one slice `e[lo..lo+s]` (in place): `log2 S` steps on the top chain
/// (`o = 0 mod 2^k`) and the bottom chain (`o = 2^k - 1 mod 2^k`), then the top equation with
/// `x[hi+1]` eliminated, `T: (x[lo-1], x[lo], x[hi])`, which is returned.
pub(crate) fn slice_reduce<T: Real>(e: &mut [Equation<T>]) -> Equation<T> {
    let s = e.len();
    let mut k = 1;
    while (1 << k) <= s {
        let (u, st) = (1usize << (k - 1), 1usize << k);
        let read = |e: &[Equation<T>], o: usize| {
            let l = (o >= u).then(|| e[o - u]);
            let r = (o + u < s).then(|| e[o + u]);
            e[o].reduce(l, r)
        };
        // Reads of this step see only the previous step: compute every update, then write.
        let tops: Vec<(usize, Equation<T>)> = (0..s).step_by(st).map(|o| (o, read(e, o))).collect();
        let bottoms: Vec<(usize, Equation<T>)> = (st - 1..s).step_by(st).map(|o| (o, read(e, o))).collect();
        for (o, v) in tops.into_iter().chain(bottoms) {
            e[o] = v;
        }
        k += 1;
    }
    let (top, bottom) = (e[0], e[s - 1]);
    // Eliminate x[hi+1] from the top equation using the bottom one (zero coupling: nothing to do).
    let f = if bottom.c == T::zero() { T::zero() } else { top.c / bottom.c };
    Equation { a: top.a - f * bottom.a, b: top.b, c: -f * bottom.b, d: top.d - f * bottom.d }
}

/// Stage 2: the reduced equation of slice `j` from its bottom equation and the next slice's
/// `T` (`None` for the last slice): couples `x[hi(j-1)]`, `x[hi(j)]`, `x[hi(j+1)]`.
pub(crate) fn reduced_row<T: Real>(bottom: Equation<T>, next_top: Option<Equation<T>>) -> Equation<T> {
    match next_top {
        Some(t) => {
            let f = bottom.c / t.b;
            Equation { a: bottom.a, b: bottom.b - f * t.a, c: -f * t.c, d: bottom.d - f * t.d }
        }
        None => bottom,
    }
}

/// Stage 3 on one slice: `x[lo..=hi]` from the reduced bottom-chain equations `e`, the original
/// equations `orig` (for even offsets), `x_before = x[lo-1]` and `x[hi]` already in `x[s-1]`.
pub(crate) fn slice_substitute<T: Real>(e: &[Equation<T>], orig: &[Equation<T>], x_before: T, x: &mut [T]) {
    let s = e.len();
    let get =
        |x: &[T], i: isize| if i < 0 { x_before } else { x.get(i as usize).copied().unwrap_or(T::zero()) };
    let mut k = s.trailing_zeros() as i32 - 1;
    while k >= 1 {
        let st = 1usize << k;
        // Offsets with exactly k trailing ones: o = st - 1 (mod 2 st).
        for o in (st - 1..s - 1).step_by(2 * st) {
            x[o] = e[o].solve_with(get(x, o as isize - st as isize), get(x, (o + st) as isize));
        }
        k -= 1;
    }
    for o in (0..s).step_by(2) {
        x[o] = orig[o].solve_with(get(x, o as isize - 1), get(x, o as isize + 1));
    }
}

/// TPR solve of one system with slice size `slice` (rounded to a power of two, at most the
/// padded size). The reduced system is solved with Thomas here (the GPU uses CR/PCR).
pub(crate) fn tpr<T: Real>(eqs: &[Equation<T>], slice: usize) -> Vec<T> {
    let m = eqs.len();
    if m == 0 {
        return Vec::new();
    }
    let n = m.next_power_of_two();
    // Clamp before rounding: next_power_of_two overflows above 2^63.
    let s = slice.clamp(2, n.max(2)).next_power_of_two().min(n);
    let orig = padded(eqs, n);
    let mut e = orig.clone();
    let tops: Vec<Equation<T>> = e.chunks_mut(s).map(slice_reduce).collect();
    let slices = n / s;
    let reduced: Vec<Equation<T>> =
        (0..slices).map(|j| reduced_row(e[j * s + s - 1], tops.get(j + 1).copied())).collect();
    let xr = thomas_eqs(&reduced);
    let mut x = vec![T::zero(); n];
    for j in 0..slices {
        x[j * s + s - 1] = xr[j];
    }
    for j in 0..slices {
        let r = j * s..(j + 1) * s;
        let x_before = if j == 0 { T::zero() } else { x[j * s - 1] };
        // The slice needs x[hi+1]? No: even offsets use o +- 1 inside the slice, bottom-chain
        // equations reach at most o + 2^k <= hi.
        slice_substitute(&e[r.clone()], &orig[r.clone()], x_before, &mut x[r]);
    }
    x.truncate(m);
    x
}

/// Plain Thomas on equations (no pivot check: the reduced system of a solvable dominant
/// system is dominant; a zero pivot gives the documented NaN/inf).
pub(crate) fn thomas_eqs<T: Real>(eqs: &[Equation<T>]) -> Vec<T> {
    let m = eqs.len();
    let (mut cp, mut dp) = (vec![T::zero(); m], vec![T::zero(); m]);
    for k in 0..m {
        let (pc, pd) = if k == 0 { (T::zero(), T::zero()) } else { (cp[k - 1], dp[k - 1]) };
        let a = if k == 0 { T::zero() } else { eqs[k].a };
        let piv = eqs[k].b - a * pc;
        cp[k] = eqs[k].c / piv;
        dp[k] = (eqs[k].d - a * pd) / piv;
    }
    let mut x = dp;
    for k in (0..m.saturating_sub(1)).rev() {
        x[k] = x[k] - cp[k] * x[k + 1];
    }
    x
}
