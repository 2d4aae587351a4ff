//! Multi-threaded scan with rayon: reduce tiles, scan the tile sums, rescan the tiles.
//!
//! The array is split into `4 × threads` contiguous chunks (a little slack for load balance).
//! Pass 1 reduces every chunk in parallel (read only, vectorised), the chunk sums are scanned
//! sequentially, and pass 2 rescans every chunk from its offset in parallel. That is two
//! fork-joins in all: an earlier version walked L2-sized rounds (one read and one write of DRAM
//! per element, but two fork-joins per 256 KiB) and ran 4x slower than one thread on the shared
//! 2-core test machine, where every fork-join waits for a descheduled worker.
//!
//! Below [`PAR_THRESHOLD`] elements the fork-join overhead outweighs the gain and the callers
//! use the single-thread path instead.

use rayon::prelude::*;

use super::op::Monoid;
use super::single;

/// Inputs shorter than this many elements are scanned on one thread (fork-join and the extra
/// read pass cost more than they save below about 2^17 elements on a 2-core machine).
pub const PAR_THRESHOLD: usize = 1 << 17;

/// Chunks per thread (slack so an unlucky thread does not hold everyone up).
const CHUNKS_PER_THREAD: usize = 4;

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
    let chunk = xs.len().div_ceil(threads * CHUNKS_PER_THREAD);
    // Pass 1: one reduction per chunk, in parallel.
    let sums: Vec<T> = xs.par_chunks(chunk).map(|c| single::reduce(c, op)).collect();
    // The chunk offsets, sequentially, in order.
    let mut carry = op.identity();
    let offsets: Vec<T> = sums
        .into_iter()
        .map(|s| {
            let off = carry;
            carry = op.combine(carry, s);
            off
        })
        .collect();
    // Pass 2: rescan every chunk from its offset.
    xs.par_chunks_mut(chunk).zip(offsets.par_iter()).for_each(|(c, &off)| {
        if exclusive {
            single::exclusive_from(c, off, op);
        } else {
            single::inclusive_from(c, off, op);
        }
    });
}
