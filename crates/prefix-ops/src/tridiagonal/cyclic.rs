//! Cyclic reduction (CR), parallel cyclic reduction (PCR) and the CR-PCR hybrid, as plain-Rust
//! references for the GPU kernels (digest D§3.2.2, D§3.2.3). Each takes one system as equations
//! and returns its solution; systems are padded with identity rows to a power of two.

use super::equation::{Equation, padded};
use super::real::Real;

/// The neighbour at `j` if it exists in a system of `n` equations.
#[inline]
fn at<T: Real>(eqs: &[Equation<T>], j: isize) -> Option<Equation<T>> {
    (j >= 0 && (j as usize) < eqs.len()).then(|| eqs[j as usize])
}

/// CR: forward reduction keeps the equations `i = 2^k - 1 (mod 2^k)` until one is left, then
/// back substitution fills in the unknowns level by level. In place: the neighbours read at
/// step `k` are never written at step `k`, and equation `i` keeps its last update, the one
/// back substitution needs.
pub(crate) fn cr<T: Real>(eqs: &[Equation<T>]) -> Vec<T> {
    cr_pcr(eqs, 1)
}

/// PCR: every equation is reduced at every step (strides 1, 2, 4, ...) until none couples to
/// anything, then `x_i = d_i / b_i`. Double-buffered: step `k` reads only step `k - 1`.
pub(crate) fn pcr<T: Real>(eqs: &[Equation<T>]) -> Vec<T> {
    let m = eqs.len();
    let n = m.next_power_of_two();
    let mut cur = padded(eqs, n);
    pcr_in_place(&mut cur, 0, 1);
    cur[..m].iter().map(|e| e.d / e.b).collect()
}

/// PCR on the sub-system of `cur` at indices `first + stride * j`, updated in place with an
/// internal second buffer, until it is fully decoupled.
fn pcr_in_place<T: Real>(cur: &mut [Equation<T>], first: usize, stride: usize) {
    let idx: Vec<usize> = (first..cur.len()).step_by(stride).collect();
    let mut sub: Vec<Equation<T>> = idx.iter().map(|&i| cur[i]).collect();
    let mut u = 1;
    while u < sub.len() {
        let next: Vec<Equation<T>> = (0..sub.len() as isize)
            .map(|j| sub[j as usize].reduce(at(&sub, j - u as isize), at(&sub, j + u as isize)))
            .collect();
        sub = next;
        u *= 2;
    }
    for (&i, e) in idx.iter().zip(sub) {
        cur[i] = e;
    }
}

/// CR forward reduction until `pcr_size` equations (a power of two, at least 1) remain, PCR on
/// those, then CR back substitution. `pcr_size = 1` is plain CR; `pcr_size >= m` is PCR.
pub(crate) fn cr_pcr<T: Real>(eqs: &[Equation<T>], pcr_size: usize) -> Vec<T> {
    let m = eqs.len();
    if m == 0 {
        return Vec::new();
    }
    let n = m.next_power_of_two();
    // Clamp before rounding: next_power_of_two overflows above 2^63.
    let pcr_size = pcr_size.clamp(1, n).next_power_of_two();
    let mut e = padded(eqs, n);
    // Forward: after step k the equations i = 2^k - 1 (mod 2^k) couple x[i -+ 2^k].
    let mut level = 0;
    while n >> level > pcr_size {
        let (u, st) = (1usize << level, 1usize << (level + 1));
        for i in (st - 1..n).step_by(st) {
            let l = at(&e, i as isize - u as isize);
            let r = at(&e, (i + u) as isize);
            e[i] = e[i].reduce(l, r);
        }
        level += 1;
    }
    // The remaining n / 2^level equations at i = 2^level - 1 (mod 2^level) form one system.
    let stride = 1usize << level;
    pcr_in_place(&mut e, stride - 1, stride);
    let mut x = vec![T::zero(); n];
    for i in (stride - 1..n).step_by(stride) {
        x[i] = e[i].d / e[i].b;
    }
    // Back substitution: level k fills i = 2^k - 1 (mod 2^(k+1)) from x[i -+ 2^k].
    for k in (0..level).rev() {
        let (u, st) = (1usize << k, 1usize << (k + 1));
        for i in (u - 1..n).step_by(st) {
            let left = if i >= u { x[i - u] } else { T::zero() };
            let right = if i + u < n { x[i + u] } else { T::zero() };
            x[i] = e[i].solve_with(left, right);
        }
    }
    x.truncate(m);
    x
}
