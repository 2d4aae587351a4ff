//! Segmented scans on the CPU: segments given by offsets (CSR style) or by head flags.
//!
//! Work is split into fixed-size tiles whatever the segment lengths, so one huge segment and a
//! million tiny ones cost the same per element (the load-balancing argument of segmented
//! primitives). Pass 1 scans each tile locally, restarting at the heads inside it, and returns
//! `(tile has a head, running value at its end)`. A sequential pass over the tiles turns those
//! into the carry entering each tile; pass 2 combines the carry into the elements before the
//! tile's first head only (for many short segments that is a handful of elements).

use rayon::prelude::*;

use super::op::Monoid;

/// Tile length in elements.
const TILE: usize = 1 << 15;

/// Scans `tile` restarting at the local positions `heads` yields (ascending); returns
/// `(any head, value after the last element)`. The part before the first head starts from the
/// identity and is fixed later with the carry.
fn tile_pass<T: Copy, M: Monoid<T>>(
    tile: &mut [T],
    mut heads: impl Iterator<Item = usize>,
    op: M,
    exclusive: bool,
) -> (bool, T) {
    let mut acc = op.identity();
    let mut next_head = heads.next();
    let mut any = false;
    for (i, x) in tile.iter_mut().enumerate() {
        while next_head.is_some_and(|h| h <= i) {
            if next_head == Some(i) {
                acc = op.identity();
                any = true;
            }
            next_head = heads.next();
        }
        let v = *x;
        if exclusive {
            *x = acc;
            acc = op.combine(acc, v);
        } else {
            acc = op.combine(acc, v);
            *x = acc;
        }
    }
    (any, acc)
}

/// Combines `carry` into the elements of `tile` before its first head (`first_head`, or all).
fn tile_fixup<T: Copy, M: Monoid<T>>(tile: &mut [T], first_head: usize, carry: T, op: M) {
    let end = first_head.min(tile.len());
    for x in &mut tile[..end] {
        *x = op.combine(carry, *x);
    }
}

/// The carry entering each tile, from the tiles' `(any head, tail value)` summaries.
fn carries<T: Copy, M: Monoid<T>>(summaries: &[(bool, T)], op: M) -> Vec<T> {
    let mut carry = op.identity();
    summaries
        .iter()
        .map(|&(any, tail)| {
            let c = carry;
            carry = if any { tail } else { op.combine(carry, tail) };
            c
        })
        .collect()
}

/// Segmented scan of `data` with segments given by (already validated) CSR `offsets`.
pub(super) fn scan_offsets<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    offsets: &[usize],
    op: M,
    exclusive: bool,
) {
    // Segment starts inside [lo, hi), as local positions, from the sorted offsets.
    let heads_in = |lo: usize, hi: usize| {
        let from = offsets.partition_point(|&o| o < lo);
        offsets[from..].iter().take_while(move |&&o| o < hi).map(move |&o| o - lo)
    };
    let summaries: Vec<(bool, T)> = data
        .par_chunks_mut(TILE)
        .enumerate()
        .map(|(t, tile)| {
            let lo = t * TILE;
            tile_pass(tile, heads_in(lo, lo + tile.len()), op, exclusive)
        })
        .collect();
    let carry = carries(&summaries, op);
    data.par_chunks_mut(TILE).enumerate().for_each(|(t, tile)| {
        let lo = t * TILE;
        let first = heads_in(lo, lo + tile.len()).next().unwrap_or(tile.len());
        tile_fixup(tile, first, carry[t], op);
    });
}

/// Segmented scan of `data` restarting at every `heads[i] == true` (lengths already checked).
pub(super) fn scan_flags<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    heads: &[bool],
    op: M,
    exclusive: bool,
) {
    let summaries: Vec<(bool, T)> = data
        .par_chunks_mut(TILE)
        .zip(heads.par_chunks(TILE))
        .map(|(tile, flags)| tile_pass(tile, local_heads(flags), op, exclusive))
        .collect();
    let carry = carries(&summaries, op);
    data.par_chunks_mut(TILE).zip(heads.par_chunks(TILE)).enumerate().for_each(|(t, (tile, flags))| {
        let first = flags.iter().position(|&h| h).unwrap_or(tile.len());
        tile_fixup(tile, first, carry[t], op);
    });
}

/// Local positions of the `true` flags.
fn local_heads(flags: &[bool]) -> impl Iterator<Item = usize> + '_ {
    flags.iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i)
}
