//! Segmented scans on the CPU: one single-pass tiled scan for every descriptor, whatever the
//! segment lengths.
//!
//! The array is cut into tiles of [`TILE_BYTES`] (they stay in a core's L2 between the two
//! steps below), handed out in order by an atomic ticket. A worker with tile `i`
//!
//! 1. scans the tile's part from its first segment head on, restarting at every head: that
//!    needs nothing from earlier tiles, and gives the tile's carry-out (the running value of
//!    its last segment), which it publishes at once; a tile without a head instead reduces
//!    itself (one read);
//! 2. waits for tile `i - 1`'s carry (a tile with a head has published it before its own
//!    wait, so only runs of head-less tiles form a chain), publishes `carry ⊕ sum` if it had
//!    no head, and scans the part before its first head from that carry (from L2).
//!
//! Memory sees one read and one write per element, as a copy does. Short pieces (below
//! [`SHORT`]) fold left to right: independent segments overlap in the pipeline; longer pieces
//! take the vectorised [`single`] scan. Deadlock-free as prefix-ops' parallel scan
//! ([`crate::scan::parallel`]): a worker waits only for a tile an earlier ticket holds whose
//! owner is running, and a panicking worker marks the chain failed so that the waiters stop.
//!
//! Rounding: integer results are exact. Float pieces below [`SHORT`] fold exactly like the
//! sequential loop; longer ones use the blocked scan of [`single`], and a segment crossing
//! tiles continues from the previous tile's carry, which adds that tile's sum as one value
//! (prefix-ops' documented scan tolerance).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::descriptor::{Form, Segments};
use crate::error::Result;
use crate::scan::parallel::{Chain, PoisonOnUnwind};
use crate::scan::{Monoid, single};
use crate::shared_mut::SharedMut;

/// Pieces shorter than this are scanned by a plain loop: the blocked scan's set-up costs more.
const SHORT: usize = 16;

/// Bytes per tile: the scan's (half of a 512 KiB L2), so a tile survives between its two steps.
const TILE_BYTES: usize = 256 << 10;

/// Inputs below this many elements are scanned by one thread (as prefix-ops' parallel scan).
const PAR_MIN: usize = 1 << 17;

/// Scans one piece from `carry`, in place; returns the running value after it.
#[inline]
fn scan_piece<T: Copy, M: Monoid<T>>(piece: &mut [T], carry: T, op: M, exclusive: bool) -> T {
    if piece.len() >= SHORT {
        return if exclusive {
            single::exclusive_from(piece, carry, op)
        } else {
            single::inclusive_from(piece, carry, op)
        };
    }
    let mut acc = carry;
    for x in piece {
        let next = op.combine(acc, *x);
        *x = if exclusive { acc } else { next };
        acc = next;
    }
    acc
}

/// What a tile knows before its carry-in arrives.
#[derive(Clone, Copy)]
enum Local<T> {
    /// The tile holds a head at this offset; everything from it on is scanned, and the last
    /// segment's running value is the tile's carry-out.
    Head { first: usize, last: T },
    /// No head: the tile continues the open segment; its reduction.
    Open { sum: T },
}

/// Step 1 on one tile: `heads` are the absolute segment starts inside the tile (`a` is its
/// first element), ascending, repeated for empty segments.
fn local<T: Copy, M: Monoid<T>>(
    part: &mut [T],
    a: usize,
    heads: impl Iterator<Item = usize>,
    op: M,
    exclusive: bool,
) -> Local<T> {
    let mut heads = heads.map(|h| h - a);
    let Some(first) = heads.next() else { return Local::Open { sum: single::reduce(part, op) } };
    let mut start = first;
    for h in heads {
        if h > start {
            scan_piece(&mut part[start..h], op.identity(), op, exclusive);
            start = h;
        }
    }
    // Heads lie inside the tile, so the last piece is not empty.
    let last = scan_piece(&mut part[start..], op.identity(), op, exclusive);
    Local::Head { first, last }
}

/// Step 2 on one tile: the part before the first head, from the carry-in.
fn finish<T: Copy, M: Monoid<T>>(part: &mut [T], l: &Local<T>, carry: T, op: M, exclusive: bool) {
    let open = match *l {
        Local::Head { first, .. } => first,
        Local::Open { .. } => part.len(),
    };
    scan_piece(&mut part[..open], carry, op, exclusive);
}

/// Step 1 with the tile's heads taken from the descriptor.
fn local_in<T: Copy, M: Monoid<T>>(
    part: &mut [T],
    a: usize,
    form: Form<'_>,
    op: M,
    exclusive: bool,
) -> Local<T> {
    let b = a + part.len();
    match form {
        Form::Regular(len) => {
            local(part, a, (a.next_multiple_of(len.max(1))..b).step_by(len.max(1)), op, exclusive)
        }
        Form::Offsets(o) => {
            // The heads inside the tile, found by two binary searches: the loop then walks a
            // slice, with no test against the tile's end per segment.
            let s = o.partition_point(|&x| x < a);
            let e = s + o[s..].partition_point(|&x| x < b);
            local(part, a, o[s..e].iter().copied(), op, exclusive)
        }
    }
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
            finish(part, &l, carry, op, exclusive);
            carry = match l {
                Local::Head { last, .. } => last,
                Local::Open { sum } => op.combine(carry, sum),
            };
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
            if let Local::Head { last, .. } = l {
                chain.publish(i, last);
            }
            let carry = if i == 0 {
                op.identity()
            } else {
                // Another worker panicked: stop, and let the scope resume its panic.
                let Some(c) = chain.wait(i - 1) else { return };
                c
            };
            if let Local::Open { sum } = l {
                chain.publish(i, op.combine(carry, sum));
            }
            finish(part, &l, carry, op, exclusive);
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
