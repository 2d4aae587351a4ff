//! Wang & Mou (digest D§3.2.4): blocks of size `2^k` are diagonalised by merging sibling blocks;
//! every equation `i` of a block `[lo..hi]` is kept as `A x[lo-1] + B x[i] + C x[hi+1] = D`.
//! After `log2 m` merges no block has outside neighbours and `x_i = D_i / B_i`.

use super::equation::{Equation, padded};
use super::real::Real;

/// One merge level: blocks of `2 * half` built from sibling blocks of `half`, in place. The
/// two equations at the seam are copied first, since the merge rewrites them.
pub(crate) fn merge_level<T: Real>(e: &mut [Equation<T>], half: usize) {
    for lo in (0..e.len()).step_by(2 * half) {
        let mid = lo + half - 1;
        // Last equation of the left block: aR x[lo-1] + bR x[mid] + cR x[mid+1] = dR.
        // First of the right block:     aL x[mid] + bL x[mid+1] + cL x[hi+1] = dL.
        let (r, l) = (e[mid], e[mid + 1]);
        let det = r.b * l.b - l.a * r.c;
        for q in e[lo..=mid].iter_mut() {
            let f = q.c / det;
            q.a = q.a + f * l.a * r.a;
            q.d = q.d - f * (r.b * l.d - l.a * r.d);
            q.c = -f * r.b * l.c;
        }
        for q in e[mid + 1..lo + 2 * half].iter_mut() {
            let f = q.a / det;
            q.c = q.c + f * r.c * l.c;
            q.d = q.d - f * (l.b * r.d - r.c * l.d);
            q.a = -f * r.a * l.b;
        }
    }
}

/// WM solve of one system, padded to a power of two.
pub(crate) fn wang_mou<T: Real>(eqs: &[Equation<T>]) -> Vec<T> {
    let m = eqs.len();
    let n = m.next_power_of_two();
    let mut e = padded(eqs, n);
    let mut half = 1;
    while half < n {
        merge_level(&mut e, half);
        half *= 2;
    }
    e[..m].iter().map(|q| q.d / q.b).collect()
}
