//! Single-thread scan written so the compiler vectorises it.
//!
//! A plain loop carries one `combine` per element on its critical path (4 cycles per element for
//! an f32 add). Here the data go in blocks of [`LANES`] elements: each block is scanned in
//! registers by a 3-step Kogge-Stone network on a fixed-size array (LLVM turns the shifted adds
//! into vector shuffles and adds), and only one `combine` per block, with the running carry, sits
//! on the dependency chain. Floats therefore round differently from the sequential loop (within
//! the tolerance documented in the book).
//!
//! The carry is kept in every lane of a vector (`[T; LANES]`, all lanes equal) and advanced by a
//! lane-wise `combine` with the block's total: a scalar carry would put a lane extract and a
//! broadcast on the chain beside the add (about 10 cycles per block instead of 4; 0.46 against
//! 0.27 ns per `f32` from L2 on the test VM). Every lane computes the value the scalar carry had,
//! so the results are the same bits.

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
pub fn inclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::inclusive_from(xs, carry, op) };
    }
    inclusive_from_portable(xs, carry, op)
}

/// The same code compiled for AVX2, where one block of 8 `f32` is one register. Rust never
/// contracts `a * b + c` into an FMA, so both versions round identically.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Monoid;

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn inclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
        super::inclusive_from_portable(xs, carry, op)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn exclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
        super::exclusive_from_portable(xs, carry, op)
    }
}

/// [`inclusive_from`] without the run-time dispatch, for callers that compile their own loop
/// for AVX2 around it.
#[inline(always)]
pub(crate) fn inclusive_from_portable<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
    let mut cv = [carry; LANES];
    let mut blocks = xs.chunks_exact_mut(LANES);
    for b in &mut blocks {
        let v = block_inclusive(<[T; LANES]>::try_from(&*b).expect("exact chunk"), op);
        for i in 0..LANES {
            b[i] = op.combine(cv[i], v[i]);
        }
        for c in &mut cv {
            *c = op.combine(*c, v[LANES - 1]);
        }
    }
    let mut carry = cv[0];
    for x in blocks.into_remainder() {
        carry = op.combine(carry, *x);
        *x = carry;
    }
    carry
}

/// Exclusive scan of `xs` starting from `carry`; returns the total `carry ⊕ xs[0] ⊕ …`.
pub fn exclusive_from<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::exclusive_from(xs, carry, op) };
    }
    exclusive_from_portable(xs, carry, op)
}

/// [`exclusive_from`] without the run-time dispatch (see [`inclusive_from_portable`]).
#[inline(always)]
pub(crate) fn exclusive_from_portable<T: Copy, M: Monoid<T>>(xs: &mut [T], carry: T, op: M) -> T {
    let mut cv = [carry; LANES];
    let mut blocks = xs.chunks_exact_mut(LANES);
    for b in &mut blocks {
        let v = block_inclusive(<[T; LANES]>::try_from(&*b).expect("exact chunk"), op);
        b[0] = cv[0];
        for i in 1..LANES {
            b[i] = op.combine(cv[i], v[i - 1]);
        }
        for c in &mut cv {
            *c = op.combine(*c, v[LANES - 1]);
        }
    }
    let mut carry = cv[0];
    for x in blocks.into_remainder() {
        let next = op.combine(carry, *x);
        *x = carry;
        carry = next;
    }
    carry
}

/// `xs[0] ⊕ … ⊕ xs[n-1]` (identity when empty). Commutative operators use [`REDUCE_LANES`]
/// interleaved accumulators (vectorised, and enough independent chains to cover the latency of
/// `combine`); others keep strict left-to-right order.
pub fn reduce<T: Copy, M: Monoid<T>>(xs: &[T], op: M) -> T {
    if !M::COMMUTATIVE {
        return xs.iter().fold(op.identity(), |a, &x| op.combine(a, x));
    }
    let mut acc = [op.identity(); REDUCE_LANES];
    let mut blocks = xs.chunks_exact(REDUCE_LANES);
    for b in &mut blocks {
        for i in 0..REDUCE_LANES {
            acc[i] = op.combine(acc[i], b[i]);
        }
    }
    let mut total = acc.into_iter().fold(op.identity(), |a, x| op.combine(a, x));
    for &x in blocks.remainder() {
        total = op.combine(total, x);
    }
    total
}

/// Accumulators of [`reduce`]: an f32 add has 3-4 cycles of latency and two issue ports, so 8
/// vector registers' worth of chains keep it busy; 8 accumulators ran at half that speed.
pub const REDUCE_LANES: usize = 32;

/// In-place inclusive scan on one thread.
pub fn inclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    inclusive_from(xs, op.identity(), op);
}

/// In-place exclusive scan on one thread.
pub fn exclusive<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M) {
    exclusive_from(xs, op.identity(), op);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Add;

    /// The AVX2 build and the portable build of the same code round identically.
    #[test]
    fn dispatched_and_portable_scans_agree_bit_for_bit() {
        let xs: Vec<f32> = (0..1003).map(|i| ((i as f32) * 0.731).sin() * 1e3).collect();
        for carry in [0.0f32, 0.25] {
            let (mut a, mut b) = (xs.clone(), xs.clone());
            let (ca, cb) = (inclusive_from(&mut a, carry, Add), inclusive_from_portable(&mut b, carry, Add));
            assert!(
                ca.to_bits() == cb.to_bits() && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
            );
            let (mut a, mut b) = (xs.clone(), xs.clone());
            let (ca, cb) = (exclusive_from(&mut a, carry, Add), exclusive_from_portable(&mut b, carry, Add));
            assert!(
                ca.to_bits() == cb.to_bits() && a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
            );
        }
    }
}
