//! Sequential reference scans: one plain loop each, the oracles every other path is tested
//! against. Use these when you need the exact left-to-right association of the textbook
//! definition.

use super::op::Monoid;

/// `xs[i] <- xs[0] ⊕ … ⊕ xs[i]`, left to right.
pub fn inclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    let mut acc = op.identity();
    for x in xs {
        acc = op.combine(acc, *x);
        *x = acc;
    }
}

/// `xs[i] <- I ⊕ xs[0] ⊕ … ⊕ xs[i-1]` (so `xs[0] <- I`), left to right.
pub fn exclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    let mut acc = op.identity();
    for x in xs {
        let next = op.combine(acc, *x);
        *x = acc;
        acc = next;
    }
}

/// The scan of each segment `xs[offsets[s]..offsets[s + 1]]` on its own (offsets assumed valid:
/// see [`crate::scan::inclusive_segments`] for the checked entry point).
pub fn inclusive_segments<T: Copy, M: Monoid<T>>(xs: &mut [T], offsets: &[usize], op: M) {
    for w in offsets.windows(2) {
        inclusive(&mut xs[w[0]..w[1]], op);
    }
}

/// Exclusive form of [`inclusive_segments`].
pub fn exclusive_segments<T: Copy, M: Monoid<T>>(xs: &mut [T], offsets: &[usize], op: M) {
    for w in offsets.windows(2) {
        exclusive(&mut xs[w[0]..w[1]], op);
    }
}

/// Restarts the scan at every `i` with `heads[i] == true` (and at 0).
pub fn inclusive_flagged<T: Copy, M: Monoid<T>>(xs: &mut [T], heads: &[bool], op: M) {
    let mut acc = op.identity();
    for (x, &h) in xs.iter_mut().zip(heads) {
        if h {
            acc = op.identity();
        }
        acc = op.combine(acc, *x);
        *x = acc;
    }
}

/// Exclusive form of [`inclusive_flagged`]: a head gets the identity.
pub fn exclusive_flagged<T: Copy, M: Monoid<T>>(xs: &mut [T], heads: &[bool], op: M) {
    let mut acc = op.identity();
    for (x, &h) in xs.iter_mut().zip(heads) {
        if h {
            acc = op.identity();
        }
        let next = op.combine(acc, *x);
        *x = acc;
        acc = next;
    }
}
