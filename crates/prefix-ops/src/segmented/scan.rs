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
//! Inside a tile every piece (a segment, or the part of one the tile holds) starts from the
//! identity and takes the cheapest exact kernel for its length: pieces of 4 or 8 elements
//! one in-register network each (segments of equal short length are what regular descriptors
//! and CSR rows are made of, and a per-element loop spent about 15 cycles per segment of 8);
//! other pieces under [`SHORT`] a plain fold; longer pieces the vectorised blocked scan of
//! [`single`], whose carry stays in a vector register. A tile whose elements are all
//! one-element segments (offsets `a, a + 1, …`) is recognised by one comparison pass over its
//! offsets instead of one piece per element. The tile code is compiled twice, portably and for
//! AVX2, and chosen at run time.
//!
//! Rounding (the documented order): integer results are exact, as are `Min` and `Max`. A float
//! piece of fewer than [`SHORT`] elements other than 4 or 8 folds exactly like the sequential
//! loop; pieces of 4 and 8 elements are Kogge-Stone networks (`x0 ⊕ (x1 ⊕ x2)` at the third
//! element, `(x0 ⊕ x1) ⊕ (x2 ⊕ x3)` at the fourth, …); longer pieces use the blocked scan of
//! [`single`] (networks of 8 from the piece's start, one carry per block). A segment that
//! enters a tile from an earlier one gets `carry ⊕ local` there: the tile's part scanned from
//! the identity, then the carry combined in as one value. Tiles depend only on the length and
//! the element type, so the serial and the threaded paths give the same bits.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::descriptor::{Form, Segments};
use crate::error::Result;
use crate::scan::parallel::{Chain, PoisonOnUnwind};
use crate::scan::{Monoid, single};
use crate::shared_mut::SharedMut;

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
struct Local<T> {
    first: usize,
    last: T,
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
            if heads.len() == part.len() && heads.iter().enumerate().all(|(k, &h)| h == a + k) {
                return singletons(part, op, exclusive);
            }
            local(part, a, heads.iter().copied(), op, exclusive)
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

fn local_in<T: Copy, M: Monoid<T>>(
    part: &mut [T],
    a: usize,
    form: Form<'_>,
    op: M,
    exclusive: bool,
) -> Local<T> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::local_in(part, a, form, op, exclusive) };
    }
    local_in_portable(part, a, form, op, exclusive)
}

fn fix<T: Copy, M: Monoid<T>>(open: &mut [T], carry: T, op: M) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { avx2::fix(open, carry, op) };
    }
    fix_portable(open, carry, op)
}

/// Scans every segment in place. Lengths already checked.
pub(crate) fn scan<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &mut [T],
    segs: &Segments,
    op: M,
    exclusive: bool,
) -> Result<()> {
    match segs.form() {
        Form::Regular(0) => {}
        // combine(identity, x) == x: an inclusive scan of one element changes nothing.
        Form::Regular(1) if !exclusive => {}
        form => {
            let tile = (TILE_BYTES / size_of::<T>().max(1)).max(single::LANES);
            let parallel = xs.len() >= PAR_MIN && rayon::current_num_threads() > 1;
            tiled(xs, form, op, exclusive, tile, parallel);
        }
    }
    Ok(())
}

/// The tiled scan with tiles of `tile` elements, on all threads or on this one.
fn tiled<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &mut [T],
    form: Form<'_>,
    op: M,
    exclusive: bool,
    tile: usize,
    parallel: bool,
) {
    if !parallel {
        let mut carry = op.identity();
        for (i, part) in xs.chunks_mut(tile).enumerate() {
            let l = local_in(part, i * tile, form, op, exclusive);
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
            let l = local_in(part, range.start, form, op, exclusive);
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
    use crate::scan::Add;

    /// The oracle: a plain loop over each segment, from the offsets.
    fn oracle(xs: &[i64], segs: &Segments, exclusive: bool) -> Vec<i64> {
        let mut out = xs.to_vec();
        for w in segs.offsets().windows(2) {
            let mut acc = 0i64;
            for x in &mut out[w[0]..w[1]] {
                let next = acc.wrapping_add(*x);
                *x = if exclusive { acc } else { next };
                acc = next;
            }
        }
        out
    }

    /// Tiny tiles on both the threaded and the single-thread path, so segments cross many
    /// tiles, start exactly on tile boundaries, or fit many to a tile.
    #[test]
    fn tiled_scans_equal_the_per_segment_loop() {
        let mut shapes =
            vec![Segments::from_lengths(&[]).unwrap(), Segments::from_lengths(&[0, 0, 0]).unwrap()];
        for len in [1usize, 2, 3, 7, 8, 13, 16, 17, 64, 97, 1000] {
            shapes.push(Segments::regular(len, 2000 / len + 3));
            shapes.push(Segments::from_lengths(&vec![len; 2000 / len + 3]).unwrap());
        }
        shapes.push(Segments::from_lengths(&[4099]).unwrap());
        shapes.push(Segments::from_lengths(&(0..500).map(|i| (i * 7919) % 41).collect::<Vec<_>>()).unwrap());
        shapes.push(Segments::from_lengths(&[0, 5, 0, 0, 1, 300, 0, 2, 2, 0]).unwrap());
        for segs in shapes {
            let xs: Vec<i64> = (0..segs.len() as i64).map(|i| (i * 2654435761) % 2001 - 1000).collect();
            for exclusive in [false, true] {
                let want = oracle(&xs, &segs, exclusive);
                for tile in [1, 7, 8, 16, 61, 256] {
                    for parallel in [false, true] {
                        let mut got = xs.clone();
                        tiled(&mut got, segs.form(), Add, exclusive, tile, parallel);
                        assert_eq!(
                            got, want,
                            "{segs:?} tile {tile} parallel {parallel} exclusive {exclusive}"
                        );
                    }
                }
            }
        }
    }
}
