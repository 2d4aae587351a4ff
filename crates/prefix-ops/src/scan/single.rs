//! Single-thread scan written so the compiler vectorises it.
//!
//! A plain loop carries one `combine` per element on its critical path (4 cycles per element for
//! an f32 add). Here the data go in blocks of [`LANES`] elements: each block is scanned in
//! registers by a 3-step Kogge-Stone network on a fixed-size array (LLVM turns the shifted adds
//! into vector shuffles and adds), and only one `combine` per block, with the running carry, sits
//! on the dependency chain. Floats therefore round differently from the sequential loop (within
//! the tolerance documented in the book).

use super::op::Monoid;

/// Elements per in-register block.
pub const LANES: usize = 8;

/// In-register inclusive scan of one block (Kogge-Stone, earlier operand first).
#[inline(always)]
fn block_inclusive<T: Copy, M: Monoid<T>>(mut v: [T; LANES], op: M) -> [T; LANES] {
    let mut d = 1;
    while d < LANES {
        let prev = v;
        for i in d..LANES {
            v[i] = op.combine(prev[i - d], prev[i]);
        }
        d *= 2;
    }
    v
}

/// Inclusive scan of `xs` starting from `carry`; returns the new carry (`carry ⊕ xs[0] ⊕ …`).
pub fn inclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], mut carry: T, op: M) -> T {
    let mut blocks = xs.chunks_exact_mut(LANES);
    for b in &mut blocks {
        let v = block_inclusive(<[T; LANES]>::try_from(&*b).expect("exact chunk"), op);
        for i in 0..LANES {
            b[i] = op.combine(carry, v[i]);
        }
        carry = b[LANES - 1];
    }
    for x in blocks.into_remainder() {
        carry = op.combine(carry, *x);
        *x = carry;
    }
    carry
}

/// Exclusive scan of `xs` starting from `carry`; returns the total `carry ⊕ xs[0] ⊕ …`.
pub fn exclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], mut carry: T, op: M) -> T {
    let mut blocks = xs.chunks_exact_mut(LANES);
    for b in &mut blocks {
        let v = block_inclusive(<[T; LANES]>::try_from(&*b).expect("exact chunk"), op);
        b[0] = carry;
        for i in 1..LANES {
            b[i] = op.combine(carry, v[i - 1]);
        }
        carry = op.combine(carry, v[LANES - 1]);
    }
    for x in blocks.into_remainder() {
        let next = op.combine(carry, *x);
        *x = carry;
        carry = next;
    }
    carry
}

/// `xs[0] ⊕ … ⊕ xs[n-1]` (identity when empty). Commutative operators use [`LANES`] interleaved
/// accumulators (vectorised); others keep strict left-to-right order.
pub fn reduce<T: Copy, M: Monoid<T>>(xs: &[T], op: M) -> T {
    if !M::COMMUTATIVE {
        return xs.iter().fold(op.identity(), |a, &x| op.combine(a, x));
    }
    let mut acc = [op.identity(); LANES];
    let mut blocks = xs.chunks_exact(LANES);
    for b in &mut blocks {
        for i in 0..LANES {
            acc[i] = op.combine(acc[i], b[i]);
        }
    }
    let mut total = acc.into_iter().fold(op.identity(), |a, x| op.combine(a, x));
    for &x in blocks.remainder() {
        total = op.combine(total, x);
    }
    total
}

/// In-place inclusive scan on one thread.
pub fn inclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    inclusive_from(xs, op.identity(), op);
}

/// In-place exclusive scan on one thread.
pub fn exclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    exclusive_from(xs, op.identity(), op);
}
