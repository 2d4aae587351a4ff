//! Segmented scans on the CPU: one single-pass tiled scan for every descriptor, whatever the
//! segment lengths.
//!
//! The array is cut into tiles of [`TILE_BYTES`] (they stay in a core's L2 between the two
//! steps below), handed out in order by an atomic ticket. A worker with tile `i`
//!
//! 1. scans the whole tile from the identity, restarting at every segment head: that needs
//!    nothing from earlier tiles. A tile holding a head knows its carry-out (the running value
//!    of its last segment) and publishes it at once;
//! 2. waits for tile `i - 1`'s carry (a tile with a head has published it before its own
//!    wait, so only runs of head-less tiles form a chain), publishes `carry ⊕ last` if it had
//!    no head, and combines the carry into the part before its first head (from L2).
//!
//! Memory sees one read and one write per element, as a copy does. Deadlock-free as
//! prefix-ops' parallel scan ([`crate::scan::parallel`], whose chain this reuses): a worker
//! waits only for a tile an earlier ticket holds whose owner is running, and a panicking
//! worker marks the chain failed so that the waiters stop.
//!
//! Inside a tile, two paths:
//!
//! - **AVX-512** (the CPU has AVX-512F and DQ, the elements are `i32 u32 i64 u64 f32 f64` and
//!   the operator `Add`, `Mul`, `Min` or `Max`): the kernels of [`super::scan_avx512`] scan
//!   64-byte blocks, each with its segment heads as a bit mask, by one masked Kogge-Stone
//!   network, so that a block costs the same whatever the segment lengths; heads come from a
//!   constant mask (regular lengths dividing the block, one-element segments, no head), an
//!   arithmetic progression (any other equal lengths, from a regular descriptor or detected
//!   in the tile's offsets by one vectorised pass), or the offsets. The exclusive scan is the
//!   same pass, shifted by a lane.
//! - **Portable** (any other type or operator, or no AVX-512): every piece (a segment, or the
//!   part of one the tile holds) starts from the identity and takes the cheapest exact kernel
//!   for its length: pieces of 4 or 8 elements one in-register network each; other pieces
//!   under [`SHORT`] a plain fold; longer pieces the vectorised blocked scan of [`single`],
//!   whose carry stays in a vector register. A tile whose elements are all one-element
//!   segments is recognised by one comparison pass over its offsets. This code is compiled
//!   twice, portably and for AVX2, and chosen at run time.
//!
//! Rounding (the documented orders): integer results are exact, as are `Min` and `Max` (float
//! `Min`/`Max` ignore a NaN operand on both paths, as the sequential loop does; the sign of a
//! zero where `-0.0` and `+0.0` tie is what `f32::min` leaves unspecified). Float `Add` and
//! `Mul`:
//!
//! - AVX-512 path: blocks of 16 `f32` or 8 `f64` aligned to the tile's start (tiles start at
//!   multiples of a block); in a block, each segment's part is the Kogge-Stone network of that
//!   part from its first element in the block; lane values are `r ⊕ v` for the lanes before
//!   the block's first head (`r` the running value at the previous block's end, the identity
//!   at the tile's start) and `identity ⊕ v` from the first head on; the running value after
//!   a block is computed the same way for its last lane. (`documented_order` in the tests
//!   writes this out lane by lane and checks it bit for bit.)
//! - Portable path: a piece under [`SHORT`] elements other than 4 or 8 folds exactly like the
//!   sequential loop; pieces of 4 and 8 elements are Kogge-Stone networks (`x0 ⊕ (x1 ⊕ x2)` at
//!   the third element, `(x0 ⊕ x1) ⊕ (x2 ⊕ x3)` at the fourth, …); longer pieces use the
//!   blocked scan of [`single`] (networks of 8 from the piece's start, one carry per block).
//!
//! On both paths a segment that enters a tile from an earlier one gets `carry ⊕ local` there:
//! the tile's part scanned from the identity, then the carry combined in as one value. Tiles
//! depend only on the length and the element type, so the serial and the threaded paths give
//! the same bits; the two paths round float sums differently (within the tolerance the tests
//! check), and which one runs depends on the CPU (`HETKIT_SEGSCAN_ISA=avx2` forces the
//! portable one).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::descriptor::{Form, Segments, common_step};
use crate::error::Result;
use crate::scan::parallel::{Chain, PoisonOnUnwind};
use crate::scan::{Monoid, single};
use crate::shared_mut::SharedMut;
use crate::sort::isa::Isa;

/// Pieces shorter than this (other than 2, 4 and 8) are scanned by a plain loop: the blocked
/// scan's set-up costs more.
const SHORT: usize = 16;

/// Bytes per tile: the scan's (half of a 512 KiB L2), so a tile survives between its two steps.
const TILE_BYTES: usize = 256 << 10;

/// Inputs below this many elements are scanned by one thread (as prefix-ops' parallel scan).
const PAR_MIN: usize = 1 << 17;

/// In-register inclusive Kogge-Stone scan of `L` elements, earlier operand first.
#[inline(always)]
fn network<T: Copy, M: Monoid<T>, const L: usize>(mut v: [T; L], op: M) -> [T; L] {
    let mut d = 1;
    while d < L {
        let prev = v;
        for i in d..L {
            v[i] = op.combine(prev[i - d], prev[i]);
        }
        d *= 2;
    }
    v
}

/// Scans a piece of exactly `L` elements from the identity by one network; returns its total.
#[inline(always)]
fn fixed<T: Copy, M: Monoid<T>, const L: usize>(piece: &mut [T; L], op: M, exclusive: bool) -> T {
    let v = network(*piece, op);
    let id = op.identity();
    if exclusive {
        piece[0] = id;
        for i in 1..L {
            piece[i] = op.combine(id, v[i - 1]);
        }
    } else {
        for i in 0..L {
            piece[i] = op.combine(id, v[i]);
        }
    }
    op.combine(id, v[L - 1])
}

/// Scans one piece in place from the identity; returns the running value after it.
#[inline(always)]
fn scan_piece<T: Copy, M: Monoid<T>>(piece: &mut [T], op: M, exclusive: bool) -> T {
    let id = op.identity();
    if piece.len() >= SHORT {
        return if exclusive {
            single::exclusive_from_portable(piece, id, op)
        } else {
            single::inclusive_from_portable(piece, id, op)
        };
    }
    if let Ok(p) = <&mut [T; 8]>::try_from(&mut *piece) {
        return fixed(p, op, exclusive);
    }
    if let Ok(p) = <&mut [T; 4]>::try_from(&mut *piece) {
        return fixed(p, op, exclusive);
    }
    let mut acc = id;
    for x in piece {
        let next = op.combine(acc, *x);
        *x = if exclusive { acc } else { next };
        acc = next;
    }
    acc
}

/// What step 1 leaves for step 2: where the tile's first head is (its length when it has
/// none) and the running value at its end (the carry-out when it has a head; the open
/// segment's part, from the identity, when not).
#[derive(Clone, Copy)]
pub(super) struct Local<T> {
    pub(super) first: usize,
    pub(super) last: T,
}

/// Step 1 on one tile: `heads` are the absolute segment starts inside the tile (`a` is its
/// first element), ascending, repeated for empty segments.
#[inline(always)]
fn local<T: Copy, M: Monoid<T>>(
    part: &mut [T],
    a: usize,
    heads: impl Iterator<Item = usize>,
    op: M,
    exclusive: bool,
) -> Local<T> {
    let len = part.len();
    let mut heads = heads.map(|h| h - a);
    let first = heads.next().unwrap_or(len);
    let mut last = scan_piece(&mut part[..first], op, exclusive);
    let mut start = first;
    for h in heads.chain(std::iter::once(len)) {
        if h > start {
            last = scan_piece(&mut part[start..h], op, exclusive);
            start = h;
        }
    }
    Local { first, last }
}

/// Step 1 on a tile whose every element is a segment of its own.
#[inline(always)]
fn singletons<T: Copy, M: Monoid<T>>(part: &mut [T], op: M, exclusive: bool) -> Local<T> {
    let id = op.identity();
    let last = part.last().map_or(id, |&x| op.combine(id, x));
    if exclusive {
        part.fill(id);
    } else {
        part.iter_mut().for_each(|x| *x = op.combine(id, *x));
    }
    Local { first: 0, last }
}

/// `Some(step)` when the sorted heads are `h0, h0 + step, …` with `step >= 1` (a single head
/// counts, with a step past any tile); `None` otherwise (repeats included).
pub(super) fn arithmetic(heads: &[usize]) -> Option<usize> {
    match heads {
        [] | [_] => Some(usize::MAX / 4),
        _ => common_step(heads).filter(|&step| step >= 1),
    }
}

/// Step 1 with the tile's heads taken from the descriptor.
#[inline(always)]
fn local_in_portable<T: Copy, M: Monoid<T>>(
    part: &mut [T],
    a: usize,
    form: Form<'_>,
    op: M,
    exclusive: bool,
) -> Local<T> {
    let b = a + part.len();
    match form {
        Form::Regular(1) => singletons(part, op, exclusive),
        Form::Regular(len) => {
            local(part, a, (a.next_multiple_of(len.max(1))..b).step_by(len.max(1)), op, exclusive)
        }
        Form::Offsets(o) => {
            // The heads inside the tile, found by two binary searches: the loop then walks a
            // slice, with no test against the tile's end per segment.
            let s = o.partition_point(|&x| x < a);
            let e = s + o[s..].partition_point(|&x| x < b);
            let heads = &o[s..e];
            // Equal lengths inside the tile (a progression whose next term is past it): the
            // heads are counted, not read, and one-element segments skip the pieces.
            match (arithmetic(heads), heads.first(), heads.last()) {
                (Some(1), Some(&f), _) if f == a && heads.len() == part.len() => {
                    singletons(part, op, exclusive)
                }
                (Some(step), Some(&f), Some(&l)) if l.saturating_add(step) >= b => {
                    local(part, a, (f..b).step_by(step), op, exclusive)
                }
                _ => local(part, a, heads.iter().copied(), op, exclusive),
            }
        }
    }
}

/// Step 2's fix: the carry combined into the part before the tile's first head.
#[inline(always)]
fn fix_portable<T: Copy, M: Monoid<T>>(open: &mut [T], carry: T, op: M) {
    open.iter_mut().for_each(|x| *x = op.combine(carry, *x));
}

/// The same tile code compiled for AVX2 (one block of 8 `f32` per register). Rust never
/// contracts `a * b + c` into an FMA, so both builds round identically.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Form, Local, Monoid};

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn local_in<T: Copy, M: Monoid<T>>(
        part: &mut [T],
        a: usize,
        form: Form<'_>,
        op: M,
        exclusive: bool,
    ) -> Local<T> {
        super::local_in_portable(part, a, form, op, exclusive)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn fix<T: Copy, M: Monoid<T>>(open: &mut [T], carry: T, op: M) {
        super::fix_portable(open, carry, op)
    }
}

/// Step 1 on one tile: the AVX-512 kernels where the CPU, the type and the operator allow and
/// `wide` is set, the portable code otherwise.
fn local_in<T: Copy + 'static, M: Monoid<T> + 'static>(
    part: &mut [T],
    a: usize,
    form: Form<'_>,
    op: M,
    exclusive: bool,
    wide: bool,
) -> Local<T> {
    #[cfg(target_arch = "x86_64")]
    if wide && let Some(l) = super::scan_avx512::local_in::<T, M>(part, a, form, exclusive) {
        return l;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    #[cfg(target_arch = "x86_64")]
    if isa() >= Isa::Avx2 {
        // SAFETY: the CPU has AVX2 (`isa()` never exceeds what it detected).
        return unsafe { avx2::local_in(part, a, form, op, exclusive) };
    }
    local_in_portable(part, a, form, op, exclusive)
}

fn fix<T: Copy, M: Monoid<T>>(open: &mut [T], carry: T, op: M) {
    #[cfg(target_arch = "x86_64")]
    if isa() >= Isa::Avx2 {
        // SAFETY: the CPU has AVX2 (`isa()` never exceeds what it detected).
        return unsafe { avx2::fix(open, carry, op) };
    }
    fix_portable(open, carry, op)
}

/// The widest instructions the scans may use: what the CPU has, capped by `HETKIT_SORT_ISA`
/// (every vector path of prefix-ops) and by `HETKIT_SEGSCAN_ISA` (the scans alone), so that
/// the tests run the AVX2 and the portable builds on a CPU with AVX-512.
pub(super) fn isa() -> Isa {
    static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();
    *ISA.get_or_init(|| crate::sort::isa::isa().min(crate::sort::isa::env_cap("HETKIT_SEGSCAN_ISA")))
}

/// Scans every segment in place. Lengths already checked.
pub(crate) fn scan<T: Copy + Send + Sync + 'static, M: Monoid<T> + 'static>(
    xs: &mut [T],
    segs: &Segments,
    op: M,
    exclusive: bool,
) -> Result<()> {
    // Equal lengths, from either form, take the regular paths: the offsets are not read.
    match segs.equal_length().map_or(segs.form(), Form::Regular) {
        Form::Regular(0) => {}
        // combine(identity, x) == x: an inclusive scan of one element changes nothing. Not for
        // the built-in float operators, whose `combine(identity, x)` is not `x` for every NaN
        // (`Min` ignores it, `Add` quiets a signalling one), as the sequential loop computes.
        Form::Regular(1) if !exclusive && !is_float::<T>() => {}
        form => {
            let tile = (TILE_BYTES / size_of::<T>().max(1)).max(single::LANES);
            let parallel = xs.len() >= PAR_MIN && rayon::current_num_threads() > 1;
            tiled(xs, form, op, exclusive, tile, parallel, true);
        }
    }
    Ok(())
}

fn is_float<T: 'static>() -> bool {
    use std::any::TypeId;
    TypeId::of::<T>() == TypeId::of::<f32>() || TypeId::of::<T>() == TypeId::of::<f64>()
}

/// The tiled scan with tiles of `tile` elements, on all threads or on this one; `wide` lets
/// the AVX-512 kernels run where the CPU has them.
fn tiled<T: Copy + Send + Sync + 'static, M: Monoid<T> + 'static>(
    xs: &mut [T],
    form: Form<'_>,
    op: M,
    exclusive: bool,
    tile: usize,
    parallel: bool,
    wide: bool,
) {
    if !parallel {
        let mut carry = op.identity();
        for (i, part) in xs.chunks_mut(tile).enumerate() {
            let l = local_in(part, i * tile, form, op, exclusive, wide);
            fix(&mut part[..l.first], carry, op);
            carry = if l.first < part.len() { l.last } else { op.combine(carry, l.last) };
        }
        return;
    }
    let len = xs.len();
    let tiles = len.div_ceil(tile);
    let chain = Chain::<T>::new(tiles);
    let ticket = AtomicUsize::new(0);
    let data = SharedMut::new(xs);
    let worker = || {
        let _poison = PoisonOnUnwind(&chain.failed);
        loop {
            let i = ticket.fetch_add(1, Ordering::Relaxed);
            if i >= tiles {
                return;
            }
            let range = i * tile..((i + 1) * tile).min(len);
            // SAFETY: each ticket is handed out once, so tile `i` is this worker's alone, and
            // `xs` outlives the scope below.
            let part = unsafe { std::slice::from_raw_parts_mut(data.get().add(range.start), range.len()) };
            let l = local_in(part, range.start, form, op, exclusive, wide);
            let has_head = l.first < part.len();
            if has_head {
                chain.publish(i, l.last);
            }
            let carry = if i == 0 {
                op.identity()
            } else {
                // Another worker panicked: stop, and let the scope resume its panic.
                let Some(c) = chain.wait(i - 1) else { return };
                c
            };
            if !has_head {
                chain.publish(i, op.combine(carry, l.last));
            }
            fix(&mut part[..l.first], carry, op);
        }
    };
    let threads = rayon::current_num_threads();
    rayon::scope(|s| {
        for _ in 1..threads.min(tiles) {
            s.spawn(|_| worker());
        }
        worker();
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{Add, Max, Min, Mul};

    /// The oracle: a plain loop over each segment, from the offsets.
    fn oracle<T: Copy>(xs: &[T], segs: &Segments, id: T, f: impl Fn(T, T) -> T, exclusive: bool) -> Vec<T> {
        let mut out = xs.to_vec();
        for w in segs.offsets().windows(2) {
            let mut acc = id;
            for x in &mut out[w[0]..w[1]] {
                let next = f(acc, *x);
                *x = if exclusive { acc } else { next };
                acc = next;
            }
        }
        out
    }

    /// Shapes for the tile tests: empty, empty segments, every short length as offsets and
    /// regular, one long segment, mixed lengths, progressions that stop inside a tile.
    fn shapes() -> Vec<Segments> {
        let mut shapes =
            vec![Segments::from_lengths(&[]).unwrap(), Segments::from_lengths(&[0, 0, 0]).unwrap()];
        for len in [1usize, 2, 3, 4, 7, 8, 13, 16, 17, 31, 64, 97, 1000] {
            shapes.push(Segments::regular(len, 2000 / len + 3));
            shapes.push(Segments::from_lengths(&vec![len; 2000 / len + 3]).unwrap());
        }
        shapes.push(Segments::from_lengths(&[4099]).unwrap());
        shapes.push(Segments::from_lengths(&(0..500).map(|i| (i * 7919) % 41).collect::<Vec<_>>()).unwrap());
        shapes.push(Segments::from_lengths(&[0, 5, 0, 0, 1, 300, 0, 2, 2, 0]).unwrap());
        let mut eights = vec![8usize; 200];
        eights.push(1500);
        eights.extend([8; 50]);
        shapes.push(Segments::from_lengths(&eights).unwrap());
        let mut near = vec![1usize; 900];
        near.push(2);
        shapes.push(Segments::from_lengths(&near).unwrap());
        let mut phased = vec![3usize];
        phased.extend([8; 250]);
        phased.extend([1; 300]);
        shapes.push(Segments::from_lengths(&phased).unwrap());
        let primes = [2usize, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];
        shapes.push(Segments::from_lengths(&primes.repeat(8)).unwrap());
        let mut ones = vec![1usize; 900];
        ones[450] = 0;
        ones.push(700);
        shapes.push(Segments::from_lengths(&ones).unwrap());
        shapes
    }

    /// Every tiling of `xs` (tiny tiles, so segments cross many tiles, start on tile
    /// boundaries or fit many to a tile; threaded and not; the AVX-512 kernels and the
    /// portable path) against `want`, compared by `eq`.
    fn check_tilings<T: Copy + Send + Sync + std::fmt::Debug + 'static, M: Monoid<T> + 'static>(
        xs: &[T],
        segs: &Segments,
        op: M,
        exclusive: bool,
        want: &[T],
        eq: impl Fn(&T, &T) -> bool,
    ) {
        for tile in [1, 7, 8, 16, 61, 256, 4096] {
            for parallel in [false, true] {
                for wide in [false, true] {
                    let mut got = xs.to_vec();
                    tiled(&mut got, segs.form(), op, exclusive, tile, parallel, wide);
                    let bad = got.iter().zip(want).position(|(g, w)| !eq(g, w));
                    assert!(
                        bad.is_none(),
                        "{segs:?} tile {tile} parallel {parallel} wide {wide} exclusive {exclusive}: at {bad:?}"
                    );
                }
            }
        }
    }

    fn same<T: PartialEq>(a: &T, b: &T) -> bool {
        a == b
    }

    #[test]
    fn tiled_scans_equal_the_per_segment_loop() {
        for segs in shapes() {
            let n = segs.len();
            let i64s: Vec<i64> = (0..n as i64).map(|i| (i * 2654435761) % 2001 - 1000).collect();
            let u32s: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
            let i32s: Vec<i32> = u32s.iter().map(|&x| x as i32 % 1000).collect();
            let u64s: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E3779B97F4A7C15)).collect();
            let f32s: Vec<f32> = i64s.iter().map(|&x| x as f32 * 0.37).collect();
            let f64s: Vec<f64> = i64s.iter().map(|&x| x as f64 * 0.37).collect();
            let bits32 = |a: &f32, b: &f32| a.to_bits() == b.to_bits();
            let bits64 = |a: &f64, b: &f64| a.to_bits() == b.to_bits();
            for ex in [false, true] {
                check_tilings(&i64s, &segs, Add, ex, &oracle(&i64s, &segs, 0, i64::wrapping_add, ex), same);
                check_tilings(&u64s, &segs, Add, ex, &oracle(&u64s, &segs, 0, u64::wrapping_add, ex), same);
                check_tilings(&u64s, &segs, Mul, ex, &oracle(&u64s, &segs, 1, u64::wrapping_mul, ex), same);
                check_tilings(&u64s, &segs, Min, ex, &oracle(&u64s, &segs, u64::MAX, u64::min, ex), same);
                check_tilings(&i64s, &segs, Max, ex, &oracle(&i64s, &segs, i64::MIN, i64::max, ex), same);
                check_tilings(&i32s, &segs, Add, ex, &oracle(&i32s, &segs, 0, i32::wrapping_add, ex), same);
                check_tilings(&i32s, &segs, Mul, ex, &oracle(&i32s, &segs, 1, i32::wrapping_mul, ex), same);
                check_tilings(&i32s, &segs, Min, ex, &oracle(&i32s, &segs, i32::MAX, i32::min, ex), same);
                check_tilings(&u32s, &segs, Max, ex, &oracle(&u32s, &segs, 0, u32::max, ex), same);
                check_tilings(&u32s, &segs, Add, ex, &oracle(&u32s, &segs, 0, u32::wrapping_add, ex), same);
                let want = oracle(&f32s, &segs, f32::INFINITY, f32::min, ex);
                check_tilings(&f32s, &segs, Min, ex, &want, bits32);
                let want = oracle(&f64s, &segs, f64::NEG_INFINITY, f64::max, ex);
                check_tilings(&f64s, &segs, Max, ex, &want, bits64);
                // Sums of multiples of 0.37 of small integers: not exact in every order, so
                // within rounding of the running sum of magnitudes.
                let want = oracle(&f32s, &segs, -0.0, |a, b| a + b, ex);
                let mags: Vec<f32> = f32s.iter().map(|x| x.abs()).collect();
                let mags = oracle(&mags, &segs, 0.0, |a, b| a + b, ex);
                for tile in [7, 256] {
                    for wide in [false, true] {
                        let mut got = f32s.clone();
                        tiled(&mut got, segs.form(), Add, ex, tile, true, wide);
                        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                            assert!(
                                (g - w).abs() <= 1e-5 * (1.0 + mags[i]),
                                "{segs:?} f32 Add at {i}: {g} vs {w}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// NaNs: `Min`/`Max` ignore them, as the sequential loop does (a segment of NaNs scans to
    /// the identity), on both paths; one-element segments included.
    #[test]
    fn float_min_max_ignore_nans_like_the_loop() {
        for segs in shapes() {
            let n = segs.len();
            let xs: Vec<f32> = (0..n)
                .map(|i| if i % 3 == 0 || i % 7 == 1 { f32::NAN } else { (i as f32 * 0.61).sin() })
                .collect();
            for ex in [false, true] {
                let bits = |a: &f32, b: &f32| a.to_bits() == b.to_bits();
                check_tilings(&xs, &segs, Min, ex, &oracle(&xs, &segs, f32::INFINITY, f32::min, ex), bits);
                check_tilings(
                    &xs,
                    &segs,
                    Max,
                    ex,
                    &oracle(&xs, &segs, f32::NEG_INFINITY, f32::max, ex),
                    bits,
                );
                let mut got = xs.clone();
                scan(&mut got, &segs, Min, ex).unwrap();
                let want = oracle(&xs, &segs, f32::INFINITY, f32::min, ex);
                assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "{segs:?} scan()");
            }
        }
    }

    /// The documented float order of the AVX-512 kernels, written out lane by lane: blocks of
    /// `w` aligned to the tile's start, a Kogge-Stone network per segment part from its first
    /// element in the block, `(running or identity) ⊕ network value` per lane, the running value
    /// from block to block, and `carry ⊕ local` over a tile's part before its first head.
    fn documented_order(xs: &[f32], segs: &Segments, tile: usize, w: usize, exclusive: bool) -> Vec<f32> {
        let heads = segs.head_flags();
        let mut out = xs.to_vec();
        let mut carry = -0.0f32;
        for t0 in (0..xs.len()).step_by(tile) {
            let t1 = (t0 + tile).min(xs.len());
            let mut run = -0.0f32;
            let mut last = run;
            for b0 in (t0..t1).step_by(w) {
                let lanes = (t1 - b0).min(w);
                let head = |i: usize| i < lanes && heads[b0 + i];
                let mut v: Vec<f32> = (0..w).map(|i| if i < lanes { xs[b0 + i] } else { -0.0 }).collect();
                let mut d = 1;
                while d < w {
                    let prev = v.clone();
                    for i in d..w {
                        if !(i + 1 - d..=i).any(head) {
                            v[i] = prev[i - d] + prev[i];
                        }
                    }
                    d *= 2;
                }
                let first = (0..w).find(|&i| head(i)).unwrap_or(w);
                let incl: Vec<f32> =
                    (0..w).map(|i| if i < first { run + v[i] } else { -0.0 + v[i] }).collect();
                for i in 0..lanes {
                    out[b0 + i] = match (exclusive, head(i), i) {
                        (false, _, _) => incl[i],
                        (true, true, _) => -0.0,
                        (true, false, 0) => run,
                        (true, false, _) => incl[i - 1],
                    };
                }
                last = incl[lanes - 1];
                run = if first < w { -0.0 + v[w - 1] } else { run + v[w - 1] };
            }
            let first = (t0..t1).find(|&i| heads[i]).unwrap_or(t1);
            for x in &mut out[t0..first] {
                *x += carry;
            }
            carry = if first < t1 { last } else { carry + last };
        }
        out
    }

    /// The AVX-512 kernels' float sums reproduce the documented order bit for bit.
    #[test]
    fn avx512_float_sums_follow_the_documented_order() {
        #[cfg(target_arch = "x86_64")]
        if !super::super::scan_avx512::available() {
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        return;
        for segs in shapes() {
            let xs: Vec<f32> = (0..segs.len()).map(|i| ((i as f32) * 0.731).sin() * 1e3).collect();
            for ex in [false, true] {
                for tile in [16, 48, 256] {
                    let want = documented_order(&xs, &segs, tile, 16, ex);
                    let mut got = xs.clone();
                    tiled(&mut got, segs.form(), Add, ex, tile, false, true);
                    let bad = got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits());
                    assert!(bad.is_none(), "{segs:?} tile {tile} exclusive {ex}: at {bad:?}");
                }
            }
        }
    }
}
