//! Segmented reduction on the CPU.
//!
//! Short segments cost their per-segment overhead, not their elements, so the kernels avoid
//! it: runs of equal-length segments (every segment of a `regular` descriptor, and blocks of
//! [`RUN`] offsets whose lengths all agree) go through a kernel specialised on the length,
//! where lengths 2, 4 and 8 are compile-time constants (the folds unroll and segments
//! overlap in the pipeline); segments up to [`MEDIUM`] long fold into one vector of
//! accumulators, longer ones into four, combined by a tree. The
//! results are written straight into the output's spare capacity by the tasks, so the output
//! is written once, in parallel (its page faults shared by the threads). Everything is
//! compiled a second time for AVX2, chosen at run time.
//!
//! Work is shared out as groups of whole segments of about [`SegmentedTuning::task_elems`]
//! elements; a segment at least [`SegmentedTuning::reduce_split`] long is reduced by all
//! threads.
//!
//! Rounding: segments shorter than [`SHORT`] fold left to right from the identity, exactly the
//! sequential loop; longer float sums associate differently (8 or 32 partial sums, combined by
//! a tree), within a few units in the last place times the segment length of it.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::descriptor::{Form, Segments};
use super::plan::{by_segs, groups};
use super::tuning::SegmentedTuning;
use crate::alloc::try_with_capacity;
use crate::error::Result;
use crate::scan::{Monoid, single};

/// Segments shorter than this fold left to right: independent segments overlap in the
/// pipeline, so a plain fold runs at the load rate, and the result is the sequential one.
const SHORT: usize = 16;

/// Segments shorter than this (and at least [`SHORT`]) fold into 8 accumulators, one AVX2
/// register of `f32`: the 32 of [`single::reduce`] cost more to combine than they save here.
const MEDIUM: usize = 512;

/// Offsets examined at once for a run of equal lengths: long enough that the specialised
/// kernel pays off, short enough that a run broken by one odd segment loses little.
const RUN: usize = 256;

/// The reduction of one segment on the calling thread (any length, any operator).
#[inline]
pub(crate) fn reduce_one<T: Copy, M: Monoid<T>>(seg: &[T], op: M) -> T {
    if seg.len() < SHORT || !M::COMMUTATIVE {
        seg.iter().fold(op.identity(), |a, &x| op.combine(a, x))
    } else if seg.len() < MEDIUM {
        reduce8(seg, op)
    } else {
        reduce32(seg, op)
    }
}

/// Four vectors of accumulators (enough independent chains to cover the add latency at two
/// adds per cycle), combined by a tree: [`single::reduce`] folds its 32 one after the other,
/// a 31-add chain that costs as much as the loop itself on a segment of a thousand elements.
#[inline(always)]
fn reduce32<T: Copy, M: Monoid<T>>(seg: &[T], op: M) -> T {
    let mut acc = [op.identity(); 32];
    let (blocks, rest) = seg.as_chunks::<32>();
    for b in blocks {
        for i in 0..32 {
            acc[i] = op.combine(acc[i], b[i]);
        }
    }
    // The tail joins the accumulators, one element each: folded onto the total instead, up to
    // 31 dependent adds cost as much as the rest of a segment of a thousand elements (random
    // lengths ran at 0.70 of the read floor against 0.94 for lengths of exactly 1024).
    for (a, &x) in acc.iter_mut().zip(rest) {
        *a = op.combine(*a, x);
    }
    let mut width = 16;
    while width > 0 {
        for i in 0..width {
            acc[i] = op.combine(acc[i], acc[i + width]);
        }
        width /= 2;
    }
    acc[0]
}

/// Eight interleaved accumulators combined by a tree; commutative operators only.
#[inline(always)]
fn reduce8<T: Copy, M: Monoid<T>>(seg: &[T], op: M) -> T {
    let mut acc = [op.identity(); 8];
    let (blocks, rest) = seg.as_chunks::<8>();
    for b in blocks {
        for i in 0..8 {
            acc[i] = op.combine(acc[i], b[i]);
        }
    }
    // The tail joins the accumulators, as in `reduce32`.
    for (a, &x) in acc.iter_mut().zip(rest) {
        *a = op.combine(*a, x);
    }
    let h = [0, 1, 2, 3].map(|i| op.combine(acc[i], acc[i + 4]));
    op.combine(op.combine(h[0], h[2]), op.combine(h[1], h[3]))
}

/// Left folds of consecutive segments of the constant length `L`.
#[inline(always)]
fn fixed<T: Copy, M: Monoid<T>, const L: usize>(xs: &[T], out: &mut [MaybeUninit<T>], op: M) {
    for (slot, seg) in out.iter_mut().zip(xs.as_chunks::<L>().0) {
        slot.write(seg.iter().fold(op.identity(), |a, &x| op.combine(a, x)));
    }
}

/// Writes the reductions of `out.len()` consecutive segments of length `len` of `xs`
/// (`xs.len() == out.len() * len`, and `len` below the split threshold).
#[inline(always)]
fn equal_run<T: Copy, M: Monoid<T>>(xs: &[T], len: usize, out: &mut [MaybeUninit<T>], op: M) {
    match len {
        0 => out.iter_mut().for_each(|s| {
            s.write(op.identity());
        }),
        // combine(identity, x) == x: one-element segments are a copy.
        1 => out.iter_mut().zip(xs).for_each(|(s, &x)| {
            s.write(x);
        }),
        2 => fixed::<T, M, 2>(xs, out, op),
        4 => fixed::<T, M, 4>(xs, out, op),
        8 => fixed::<T, M, 8>(xs, out, op),
        _ => out.iter_mut().zip(xs.chunks_exact(len)).for_each(|(s, seg)| {
            s.write(reduce_one(seg, op));
        }),
    }
}

/// The reduction of one long segment on all threads, in order (the operator need not commute).
fn reduce_par<T: Copy + Send + Sync, M: Monoid<T>>(seg: &[T], op: M, task: usize) -> T {
    seg.par_chunks(task.max(1))
        .map(|c| single::reduce(c, op))
        .reduce(|| op.identity(), |a, b| op.combine(a, b))
}

/// The reductions of the `out.len()` segments delimited by `offs` (`out.len() + 1` absolute
/// offsets into `xs`), in blocks of [`RUN`] segments: a block of equal lengths takes
/// [`equal_run`], any other block one segment at a time.
#[inline(always)]
fn offsets_group<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &[T],
    offs: &[usize],
    out: &mut [MaybeUninit<T>],
    op: M,
    t: &SegmentedTuning,
) {
    for (k, slots) in out.chunks_mut(RUN).enumerate() {
        let w = &offs[k * RUN..=k * RUN + slots.len()];
        let len = w[1] - w[0];
        // A branch-free test, so the compiler vectorises the scan over the offsets.
        let equal = w.windows(2).fold(true, |ok, p| ok & (p[1] - p[0] == len));
        if equal && len < t.reduce_split {
            equal_run(&xs[w[0]..w[slots.len()]], len, slots, op);
        } else {
            for (slot, p) in slots.iter_mut().zip(w.windows(2)) {
                let seg = &xs[p[0]..p[1]];
                slot.write(if seg.len() >= t.reduce_split {
                    reduce_par(seg, op, t.task_elems)
                } else {
                    reduce_one(seg, op)
                });
            }
        }
    }
}

/// The per-task kernels: [`offsets_group`] and [`equal_run`], compiled once portably and once
/// for AVX2 (an 8-lane `f32` accumulator is then one register).
mod kernels {
    use super::*;

    pub(super) fn offsets_group<T: Copy + Send + Sync, M: Monoid<T>>(
        xs: &[T],
        offs: &[usize],
        out: &mut [MaybeUninit<T>],
        op: M,
        t: &SegmentedTuning,
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2_offsets_group(xs, offs, out, op, t) };
        }
        super::offsets_group(xs, offs, out, op, t)
    }

    pub(super) fn equal_run<T: Copy, M: Monoid<T>>(xs: &[T], len: usize, out: &mut [MaybeUninit<T>], op: M) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { avx2_equal_run(xs, len, out, op) };
        }
        super::equal_run(xs, len, out, op)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_offsets_group<T: Copy + Send + Sync, M: Monoid<T>>(
        xs: &[T],
        offs: &[usize],
        out: &mut [MaybeUninit<T>],
        op: M,
        t: &SegmentedTuning,
    ) {
        super::offsets_group(xs, offs, out, op, t)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_equal_run<T: Copy, M: Monoid<T>>(xs: &[T], len: usize, out: &mut [MaybeUninit<T>], op: M) {
        super::equal_run(xs, len, out, op)
    }
}

/// Writes one value per segment into `out` (`segs.num_segments()` slots), every slot exactly
/// once: the tasks' slices tile `out` (regular chunks, or the groups of [`groups`], which
/// cover every segment), and each kernel writes one slot per segment of its slice.
fn fill<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &[T],
    segs: &Segments,
    op: M,
    t: &SegmentedTuning,
    out: &mut [MaybeUninit<T>],
) {
    match segs.form() {
        Form::Regular(0) => out.iter_mut().for_each(|s| {
            s.write(op.identity());
        }),
        Form::Regular(len) if len < t.reduce_split => {
            let per_task = t.task_elems.div_ceil(len).max(1);
            out.par_chunks_mut(per_task)
                .zip(xs.par_chunks(per_task * len))
                .for_each(|(o, chunk)| kernels::equal_run(chunk, len, o, op));
        }
        // Long segments: each on all threads, and several at once when there are many (one
        // fork-join from inside the pool, not one injection per segment).
        Form::Regular(len) => out.par_iter_mut().zip(xs.par_chunks_exact(len)).for_each(|(s, seg)| {
            s.write(reduce_par(seg, op, t.task_elems));
        }),
        Form::Offsets(offsets) => {
            let groups = groups(segs, t.task_elems);
            by_segs(out, &groups)
                .into_par_iter()
                .zip(&groups)
                .for_each(|(o, g)| kernels::offsets_group(xs, &offsets[g.segs.start..=g.segs.end], o, op, t));
        }
    }
}

/// One value per segment (the identity for empty ones). Lengths already checked.
pub(crate) fn reduce<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &[T],
    segs: &Segments,
    op: M,
    t: &SegmentedTuning,
) -> Result<Vec<T>> {
    let nseg = segs.num_segments();
    let mut out: Vec<T> = try_with_capacity(nseg, "segment results")?;
    fill(xs, segs, op, t, &mut out.spare_capacity_mut()[..nseg]);
    // SAFETY: `fill` initialised all `nseg` slots (see its contract); a panic inside it
    // unwinds past this line and drops the vector with length 0.
    unsafe { out.set_len(nseg) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Add, Max, Mul};

    /// The oracle: a left fold of every segment, read from the offsets.
    fn oracle<T: Copy, M: Monoid<T>>(xs: &[T], segs: &Segments, op: M) -> Vec<T> {
        segs.offsets()
            .windows(2)
            .map(|w| xs[w[0]..w[1]].iter().fold(op.identity(), |a, &x| op.combine(a, x)))
            .collect()
    }

    fn tunings() -> [SegmentedTuning; 3] {
        let d = SegmentedTuning::DEFAULT;
        [
            d,
            SegmentedTuning { task_elems: 7, reduce_split: 600, ..d },
            SegmentedTuning { task_elems: 1, reduce_split: 3, ..d },
        ]
    }

    /// Lengths that hit every kernel: the constants, the primes around them, the boundaries
    /// of SHORT and MEDIUM, and runs of equal lengths broken inside and at a RUN boundary.
    fn shapes() -> Vec<Segments> {
        let mut out = vec![Segments::from_lengths(&[]).unwrap(), Segments::from_lengths(&[0, 0]).unwrap()];
        for len in [0usize, 1, 2, 3, 4, 5, 7, 8, 11, 15, 16, 17, 31, 64, 511, 512, 513, 1031] {
            let nseg = 3 * RUN / len.max(1) + 5;
            out.push(Segments::regular(len, nseg));
            out.push(Segments::from_lengths(&vec![len; nseg]).unwrap());
            let mut broken = vec![len; nseg];
            broken[nseg / 2] = len + 1;
            if nseg > RUN {
                broken[RUN - 1] = 0;
            }
            out.push(Segments::from_lengths(&broken).unwrap());
        }
        out.push(Segments::from_lengths(&[5000]).unwrap());
        out.push(Segments::from_lengths(&(0..700).map(|i| (i * 7919) % 97).collect::<Vec<_>>()).unwrap());
        out
    }

    #[test]
    fn integer_reductions_equal_the_fold_bit_for_bit() {
        for segs in shapes() {
            let xs: Vec<i64> = (0..segs.len() as i64).map(|i| (i * 2654435761) % 2001 - 1000).collect();
            let us: Vec<u32> = xs.iter().map(|&x| x as u32).collect();
            for t in tunings() {
                assert_eq!(reduce(&xs, &segs, Add, &t).unwrap(), oracle(&xs, &segs, Add), "{segs:?} {t:?}");
                assert_eq!(reduce(&xs, &segs, Max, &t).unwrap(), oracle(&xs, &segs, Max), "{segs:?} {t:?}");
                assert_eq!(reduce(&us, &segs, Mul, &t).unwrap(), oracle(&us, &segs, Mul), "{segs:?} {t:?}");
            }
        }
    }

    /// Float sums: exact (bitwise) below SHORT, where the kernel is the fold itself; longer
    /// ones within `len * eps * sum |x|`, the textbook bound for any association of a sum.
    #[test]
    fn float_sums_equal_the_fold_within_rounding() {
        for segs in shapes() {
            let xs: Vec<f32> = (0..segs.len()).map(|i| ((i as f32) * 0.7317).sin()).collect();
            let abs: Vec<f32> = xs.iter().map(|x| x.abs()).collect();
            let bound = oracle(&abs, &segs, Add);
            let want = oracle(&xs, &segs, Add);
            for t in tunings() {
                let got = reduce(&xs, &segs, Add, &t).unwrap();
                for (s, ((g, w), b)) in got.iter().zip(&want).zip(&bound).enumerate() {
                    let len = segs.segment(s).unwrap().len();
                    if len < SHORT && len < t.reduce_split {
                        assert_eq!(g.to_bits(), w.to_bits(), "segment {s} of {segs:?}");
                    } else {
                        assert!(
                            (g - w).abs() <= 2.0 * len as f32 * f32::EPSILON * b,
                            "{g} vs {w}, segment {s}"
                        );
                    }
                }
            }
        }
    }
}
