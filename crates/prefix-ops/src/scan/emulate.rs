//! CPU emulation of the GPU kernels' combination order, for exact (bit-for-bit) comparison of
//! float results and for documentation of that order.
//!
//! Every GPU scan kernel combines values in an order fixed by its configuration alone (never by
//! timing): within a thread a serial left fold over its `P` items; within a warp one of the
//! [`Network`]s over the 32 thread totals; within a block the same network over the warp totals;
//! across tiles (look-back) or chunks (batched kernels) a left fold of the tile/chunk aggregates.
//! The functions here perform exactly those operations in exactly that order, so a GPU result
//! must equal their output bit for bit, for floats too.
//!
//! # Panics
//! These are test models of fixed kernel configurations, defined only for the kernels' range
//! of [`Shape`]s (threads a positive multiple of 32 up to 1024, at least one item per thread;
//! `items >= 1` for [`rows_warp`]); outside it they may panic. [`Shape::lookback`] gives the
//! kernels' own shapes.

use super::op::{Monoid, Segmented};

/// Warp-level prefix network (the `.cuh` template parameter `NET`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Network {
    /// 5 steps, lane `i` combines lane `i - d` for `d = 1, 2, 4, 8, 16`.
    #[default]
    KoggeStone,
    /// 5 steps; in each group of `2h` lanes the upper half combines the lower half's last lane.
    Sklansky,
    /// 6 steps: odd lanes combine their left neighbour, Sklansky over odd lanes, then even lanes
    /// combine their left neighbour.
    LadnerFischer,
}

impl Network {
    /// Kernel-name suffix of the study instantiations: `"ks"`, `"sk"`, `"lf"`.
    pub fn suffix(self) -> &'static str {
        match self {
            Network::KoggeStone => "ks",
            Network::Sklansky => "sk",
            Network::LadnerFischer => "lf",
        }
    }
}

/// A kernel's shape: threads per block (a multiple of 32, at most 1024) and items per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Threads per block.
    pub threads: usize,
    /// Items per thread (`P`).
    pub items: usize,
    /// Warp network.
    pub network: Network,
}

impl Shape {
    /// The shape of the look-back and block kernels for elements of `bytes` bytes: 256 threads,
    /// P = 16 for 4-byte and P = 8 for 8-byte types, Kogge-Stone.
    pub fn lookback(bytes: usize) -> Shape {
        Shape { threads: 256, items: if bytes > 4 { 8 } else { 16 }, network: Network::KoggeStone }
    }
    /// Elements per tile.
    pub fn tile(&self) -> usize {
        self.threads * self.items
    }
}

/// The warp network over 32 lanes, in place, earlier operand first.
pub fn warp_inclusive<E: Copy, M: Monoid<E>>(x: &mut [E; 32], net: Network, op: M) {
    let sklansky_step = |x: &mut [E; 32], h: usize, only_odd: bool| {
        let old = *x;
        for lane in 0..32 {
            if lane & h != 0 && (!only_odd || lane & 1 == 1) {
                let src = (lane & !(2 * h - 1)) | (h - 1);
                x[lane] = op.combine(old[src], old[lane]);
            }
        }
    };
    match net {
        Network::KoggeStone => {
            let mut d = 1;
            while d < 32 {
                let old = *x;
                for lane in d..32 {
                    x[lane] = op.combine(old[lane - d], old[lane]);
                }
                d *= 2;
            }
        }
        Network::Sklansky => {
            for h in [1, 2, 4, 8, 16] {
                sklansky_step(x, h, false);
            }
        }
        Network::LadnerFischer => {
            for lane in (1..32).step_by(2) {
                x[lane] = op.combine(x[lane - 1], x[lane]);
            }
            for h in [2, 4, 8, 16] {
                sklansky_step(x, h, true);
            }
            for lane in (2..32).step_by(2) {
                x[lane] = op.combine(x[lane - 1], x[lane]);
            }
        }
    }
}

/// Warp part: (exclusive lane prefixes, warp total) of 32 thread totals.
fn warp_exclusive<E: Copy, M: Monoid<E>>(totals: &[E], net: Network, op: M) -> ([E; 32], E) {
    let mut x = [op.identity(); 32];
    x[..totals.len()].copy_from_slice(totals);
    warp_inclusive(&mut x, net, op);
    let mut excl = [op.identity(); 32];
    excl[1..].copy_from_slice(&x[..31]);
    (excl, x[31])
}

/// Block part (`BlockScan::exclusive_prefix`): each thread's prefix `warp_prefix ⊕ lane_excl`
/// and the block aggregate.
fn block_prefixes<E: Copy, M: Monoid<E>>(totals: &[E], net: Network, op: M) -> (Vec<E>, E) {
    let warps = totals.len() / 32;
    let mut lane_excl = Vec::with_capacity(totals.len());
    let mut warp_totals = Vec::with_capacity(warps);
    for w in totals.chunks(32) {
        let (excl, total) = warp_exclusive(w, net, op);
        lane_excl.extend_from_slice(&excl);
        warp_totals.push(total);
    }
    let mut scanned = [op.identity(); 32];
    scanned[..warps].copy_from_slice(&warp_totals);
    warp_inclusive(&mut scanned, net, op);
    let prefixes = (0..totals.len())
        .map(|t| {
            let w = t / 32;
            let warp_prefix = if w > 0 { scanned[w - 1] } else { op.identity() };
            op.combine(warp_prefix, lane_excl[t])
        })
        .collect();
    (prefixes, scanned[warps - 1])
}

/// Serial inclusive fold of each thread's items in place; returns the thread totals.
fn thread_folds<E: Copy, M: Monoid<E>>(items: &mut [E], p: usize, op: M) -> Vec<E> {
    items
        .chunks_mut(p)
        .map(|t| {
            for i in 1..t.len() {
                t[i] = op.combine(t[i - 1], t[i]);
            }
            t[t.len() - 1]
        })
        .collect()
}

/// The outputs of one thread's items from their serial folds `s` and the prefix in front.
fn outputs<T: Copy, E: Copy, M: Monoid<E>>(
    s: &[E],
    heads: &[bool],
    prefix: E,
    op: M,
    ident: T,
    value: impl Fn(E) -> T,
    exclusive: bool,
    out: &mut [T],
) {
    for i in 0..out.len() {
        out[i] = if !exclusive {
            value(op.combine(prefix, s[i]))
        } else if heads[i] {
            ident
        } else if i == 0 {
            value(prefix)
        } else {
            value(op.combine(prefix, s[i - 1]))
        };
    }
}

/// One look-back tile at a time, in the GPU's order; `make` builds a scan element from a value
/// and its head flag.
#[allow(clippy::too_many_arguments)]
fn lookback_generic<T: Copy, E: Copy, M: Monoid<E>>(
    xs: &mut [T],
    is_head: impl Fn(usize) -> bool,
    op: M,
    ident: T,
    make: impl Fn(T, bool) -> E,
    value: impl Fn(E) -> T + Copy,
    shape: Shape,
    exclusive: bool,
) {
    let tile = shape.tile();
    let mut incl_prev: Option<E> = None;
    for (k, chunk) in xs.chunks_mut(tile).enumerate() {
        let heads: Vec<bool> = (0..tile).map(|i| i < chunk.len() && is_head(k * tile + i)).collect();
        let mut s: Vec<E> =
            (0..tile).map(|i| make(if i < chunk.len() { chunk[i] } else { ident }, heads[i])).collect();
        let totals = thread_folds(&mut s, shape.items, op);
        let (prefixes, aggregate) = block_prefixes(&totals, shape.network, op);
        let tile_prefix = incl_prev.unwrap_or_else(|| op.identity());
        incl_prev = Some(match incl_prev {
            None => aggregate,
            Some(p) => op.combine(p, aggregate),
        });
        let mut out = vec![ident; tile];
        for t in 0..shape.threads {
            let r = t * shape.items..(t + 1) * shape.items;
            let full = op.combine(tile_prefix, prefixes[t]);
            outputs(&s[r.clone()], &heads[r.clone()], full, op, ident, value, exclusive, &mut out[r]);
        }
        chunk.copy_from_slice(&out[..chunk.len()]);
    }
}

/// The single-pass look-back scan of one array (`scan_lookback_*`), in place.
pub fn lookback<T: Copy, M: Monoid<T>>(xs: &mut [T], op: M, shape: Shape, exclusive: bool) {
    lookback_generic(xs, |_| false, op, op.identity(), |v, _| v, |e| e, shape, exclusive);
}

/// The look-back scan with heads (`scan_lookback_rows_*` with `is_head(i) = i % N == 0`,
/// `scan_lookback_seg_*` with heads at the offsets), in place.
pub fn lookback_heads<T: Copy, M: Monoid<T>>(
    xs: &mut [T],
    is_head: impl Fn(usize) -> bool,
    op: M,
    shape: Shape,
    exclusive: bool,
) {
    let seg = Segmented(op);
    lookback_generic(xs, is_head, seg, op.identity(), |v, h| (h, v), |e: (bool, T)| e.1, shape, exclusive);
}

/// `scan_rows_warp_*`: one warp per row, chunks of `32 * items`, carry left-folded.
pub fn rows_warp<T: Copy, M: Monoid<T>>(
    xs: &mut [T],
    row_len: usize,
    op: M,
    items: usize,
    net: Network,
    exclusive: bool,
) {
    let no_heads = vec![false; items];
    for row in xs.chunks_mut(row_len.max(1)) {
        let mut carry = op.identity();
        for chunk in row.chunks_mut(32 * items) {
            let mut s: Vec<T> =
                (0..32 * items).map(|i| chunk.get(i).copied().unwrap_or(op.identity())).collect();
            let totals = thread_folds(&mut s, items, op);
            let (lane_excl, total) = warp_exclusive(&totals, net, op);
            let mut out = vec![op.identity(); 32 * items];
            for l in 0..32 {
                let r = l * items..(l + 1) * items;
                let prefix = op.combine(carry, lane_excl[l]);
                outputs(&s[r.clone()], &no_heads, prefix, op, op.identity(), |e| e, exclusive, &mut out[r]);
            }
            let n = chunk.len();
            chunk.copy_from_slice(&out[..n]);
            carry = op.combine(carry, total);
        }
    }
}

/// `scan_rows_block_*`: one block per row, tiles of `threads * items`, carry left-folded.
pub fn rows_block<T: Copy, M: Monoid<T>>(xs: &mut [T], row_len: usize, op: M, shape: Shape, exclusive: bool) {
    let no_heads = vec![false; shape.items];
    let tile = shape.tile();
    for row in xs.chunks_mut(row_len.max(1)) {
        let mut carry = op.identity();
        for chunk in row.chunks_mut(tile) {
            let mut s: Vec<T> = (0..tile).map(|i| chunk.get(i).copied().unwrap_or(op.identity())).collect();
            let totals = thread_folds(&mut s, shape.items, op);
            let (prefixes, aggregate) = block_prefixes(&totals, shape.network, op);
            let mut out = vec![op.identity(); tile];
            for t in 0..shape.threads {
                let r = t * shape.items..(t + 1) * shape.items;
                let prefix = op.combine(carry, prefixes[t]);
                outputs(&s[r.clone()], &no_heads, prefix, op, op.identity(), |e| e, exclusive, &mut out[r]);
            }
            let n = chunk.len();
            chunk.copy_from_slice(&out[..n]);
            carry = op.combine(carry, aggregate);
        }
    }
}
