//! Multi-threaded scan with rayon: reduce tiles, scan the tile sums, rescan the tiles.
//!
//! The array is walked in *rounds* of `threads` tiles of [`TILE_BYTES`] each. In a round every
//! thread first reduces its tile (pass 1, read only, which also pulls the tile into that core's
//! L2), the round's tile sums are scanned sequentially onto the running carry, and every thread
//! rescans its tile from its offset (pass 2, served from L2). DRAM therefore sees one read and one
//! write per element, as in the single-thread loop, while the arithmetic is split over the cores.
//!
//! Below [`PAR_THRESHOLD`] elements the fork-join overhead outweighs the gain and the callers
//! use the single-thread path instead.

use rayon::prelude::*;

use super::op::Monoid;
use super::single;

/// Bytes per tile: a quarter of a typical 512 KiB – 2 MiB per-core L2, so a tile read in pass 1
/// is still there in pass 2.
pub const TILE_BYTES: usize = 128 * 1024;

/// Inputs shorter than this many elements are scanned on one thread. Measured on a 2-core AMD
/// EPYC VM (see the book): with 2^16 f32 the two-pass scan only breaks even.
pub const PAR_THRESHOLD: usize = 1 << 17;

/// Tile length in elements for `T`.
pub fn tile_len<T>() -> usize {
    (TILE_BYTES / size_of::<T>().max(1)).max(single::LANES)
}

/// Two-pass inclusive (`exclusive == false`) or exclusive scan over all rayon threads.
pub fn scan<T: Copy + Send + Sync, M: Monoid<T>>(xs: &mut [T], op: M, exclusive: bool) {
    let threads = rayon::current_num_threads();
    if threads < 2 || xs.len() < PAR_THRESHOLD {
        if exclusive {
            single::exclusive(xs, op)
        } else {
            single::inclusive(xs, op)
        }
        return;
    }
    let tile = tile_len::<T>();
    let mut carry = op.identity();
    let mut offsets = Vec::with_capacity(threads);
    for round in xs.chunks_mut(tile * threads) {
        // Pass 1: one reduction per tile, in parallel.
        let sums: Vec<T> = round.par_chunks(tile).map(|t| single::reduce(t, op)).collect();
        // The round's tile offsets, sequentially, in order.
        offsets.clear();
        for s in sums {
            offsets.push(carry);
            carry = op.combine(carry, s);
        }
        // Pass 2: rescan every tile from its offset.
        round.par_chunks_mut(tile).zip(offsets.par_iter()).for_each(|(t, &off)| {
            if exclusive {
                single::exclusive_from(t, off, op);
            } else {
                single::inclusive_from(t, off, op);
            }
        });
    }
}
