//! The CPU kernels: the sequential reference loop, and the blocked, vectorised, parallel sweep.
//!
//! Both evaluate a point in the plan's order (see [`crate::plan`]), so they agree bitwise.
//! The fast sweep computes a row segment along axis 2 at a time, one vectorised pass per term
//! (the row stays in L1 between passes; one multiply and one add per term and element),
//! walks a block of `j_block` rows through `i_block` consecutive planes so that the `2 h + 1`
//! planes of input a block touches stay in cache, and hands the `i_block`-plane chunks to rayon.

use ndarray::{ArrayViewMut3, Axis};
use rayon::prelude::*;

use crate::element::Element;
use crate::plan::{Coef, Plan};

/// Cache-blocking of the CPU sweep: planes per parallel task and rows per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuBlocks {
    /// Consecutive planes (axis 0) one task computes.
    pub i_block: usize,
    /// Rows (axis 1) of a block walked through the task's planes.
    pub j_block: usize,
}

impl Default for CpuBlocks {
    /// Four planes and 32 rows: a block's input planes stay in a 1 MiB L2 for rows of 256 f64.
    fn default() -> Self {
        CpuBlocks { i_block: 4, j_block: 32 }
    }
}

/// Where a source buffer sits in the global grid: `src` holds global planes from `first` on,
/// each `n1 x n2`, in standard layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a, T> {
    pub(crate) data: &'a [T],
    pub(crate) first: usize,
}

/// The sequential reference: every interior point of global planes `planes`, one at a time,
/// into `out` (whose plane 0 is global plane `planes.start`).
pub(crate) fn sweep_reference<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    planes: std::ops::Range<usize>,
    out: &mut ArrayViewMut3<'_, T>,
) {
    let [_, n1, n2] = plan.shape;
    let [_, h1, h2] = plan.halo;
    let flat = plan.flat_offsets(n1, n2);
    for (p, gi) in planes.enumerate() {
        for j in h1..n1 - h1 {
            for k in h2..n2 - h2 {
                let local = ((gi - src.first) * n1 + j) * n2 + k;
                let global = (gi * n1 + j) * n2 + k;
                let mut acc = T::ZERO;
                for (m, (d, c)) in flat.iter().zip(&plan.coefs).enumerate() {
                    let v = c.at(global) * src.data[(local as isize + d) as usize];
                    acc = if m == 0 { v } else { acc + v };
                }
                if let Some(b) = &plan.bias {
                    acc += b.at(global);
                }
                out[[p, j, k]] = acc;
            }
        }
    }
}

/// The fast sweep over global planes `planes` into `out` (plane 0 = global `planes.start`),
/// parallel over chunks of `blocks.i_block` planes when `parallel`.
pub(crate) fn sweep_blocked<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    planes: std::ops::Range<usize>,
    out: &mut ArrayViewMut3<'_, T>,
    blocks: CpuBlocks,
    parallel: bool,
) {
    let ib = blocks.i_block.max(1);
    let start = planes.start;
    let task = |(c, mut chunk): (usize, ArrayViewMut3<'_, T>)| {
        let first = start + c * ib;
        block_walk(plan, src, first, &mut chunk, blocks.j_block.max(1));
    };
    let chunks = out.axis_chunks_iter_mut(Axis(0), ib).enumerate();
    if parallel {
        chunks.par_bridge().for_each(task);
    } else {
        chunks.for_each(task);
    }
}

/// One task: rows in blocks of `jb`, each block through all planes of `chunk`; compiled a
/// second time for AVX2 (no FMA: results stay bitwise those of the reference), chosen at run
/// time.
fn block_walk<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    first: usize,
    chunk: &mut ArrayViewMut3<'_, T>,
    jb: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, the only feature the function is compiled for.
        unsafe { block_walk_avx2(plan, src, first, chunk, jb) };
        return;
    }
    block_walk_generic(plan, src, first, chunk, jb);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_walk_avx2<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    first: usize,
    chunk: &mut ArrayViewMut3<'_, T>,
    jb: usize,
) {
    block_walk_generic(plan, src, first, chunk, jb);
}

#[inline(always)]
fn block_walk_generic<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    first: usize,
    chunk: &mut ArrayViewMut3<'_, T>,
    jb: usize,
) {
    let [_, n1, n2] = plan.shape;
    let [_, h1, h2] = plan.halo;
    let flat = plan.flat_offsets(n1, n2);
    let mut j0 = h1;
    while j0 < n1 - h1 {
        let j1 = (j0 + jb).min(n1 - h1);
        for (p, mut plane) in chunk.outer_iter_mut().enumerate() {
            let gi = first + p;
            for j in j0..j1 {
                let mut row = plane.index_axis_mut(Axis(0), j);
                let row = row.as_slice_mut().expect("output rows are contiguous");
                let local = ((gi - src.first) * n1 + j) * n2 + h2;
                let global = (gi * n1 + j) * n2 + h2;
                compute_row(plan, &flat, src.data, local, global, &mut row[h2..n2 - h2]);
            }
        }
        j0 = j1;
    }
}

/// `out[q]` for the row segment whose first element is at flat `local` in the source and flat
/// `global` in the grid (for field coefficients): one vectorised pass over the row per term,
/// the row staying in L1 between passes.
#[inline(always)]
fn compute_row<T: Element>(
    plan: &Plan<T>,
    flat: &[isize],
    src: &[T],
    local: usize,
    global: usize,
    out: &mut [T],
) {
    if let Some(uniform) = &plan.uniform {
        return uniform_row(uniform, src, local, out);
    }
    let len = out.len();
    for (m, (d, c)) in flat.iter().zip(&plan.coefs).enumerate() {
        let at = (local as isize + d) as usize;
        let x = &src[at..at + len];
        match (c, m == 0) {
            (Coef::Uniform(c), true) => out.iter_mut().zip(x).for_each(|(o, &v)| *o = *c * v),
            (Coef::Uniform(c), false) => out.iter_mut().zip(x).for_each(|(o, &v)| *o += *c * v),
            (Coef::Field(f), first) => {
                let f = &f.as_slice().expect("standard layout")[global..global + len];
                for ((o, &v), &w) in out.iter_mut().zip(x).zip(f) {
                    *o = if first { w * v } else { *o + w * v };
                }
            }
        }
    }
    match &plan.bias {
        Some(Coef::Uniform(b)) => out.iter_mut().for_each(|a| *a += *b),
        Some(Coef::Field(f)) => {
            let f = &f.as_slice().expect("standard layout")[global..global + len];
            out.iter_mut().zip(f).for_each(|(a, &b)| *a += b);
        }
        None => {}
    }
}

/// Bytes of a row segment kept in vector registers across all terms: eight AVX2 registers.
const CHUNK_BYTES: usize = 256;

/// The linear, constant-coefficient case: segments of the row accumulate every term in
/// registers and are stored once (no pass over the output per term).
#[inline(always)]
fn uniform_row<T: Element>(terms: &[(isize, T)], src: &[T], local: usize, out: &mut [T]) {
    match std::mem::size_of::<T>() {
        4 => chunked::<T, { CHUNK_BYTES / 4 }>(terms, src, local, out),
        _ => chunked::<T, { CHUNK_BYTES / 8 }>(terms, src, local, out),
    }
}

#[inline(always)]
fn chunked<T: Element, const W: usize>(terms: &[(isize, T)], src: &[T], local: usize, out: &mut [T]) {
    let mut q = 0;
    let mut chunks = out.chunks_exact_mut(W);
    for o in &mut chunks {
        let o: &mut [T; W] = o.try_into().expect("W elements");
        accumulate::<T, W>(terms, src, local + q, o);
        q += W;
    }
    for (r, o) in chunks.into_remainder().iter_mut().enumerate() {
        let mut one = [T::ZERO; 1];
        accumulate::<T, 1>(terms, src, local + q + r, &mut one);
        *o = one[0];
    }
}

/// `W` consecutive points, term by term in the plan's order.
#[inline(always)]
fn accumulate<T: Element, const W: usize>(terms: &[(isize, T)], src: &[T], at: usize, out: &mut [T; W]) {
    let Some(((d0, c0), rest)) = terms.split_first() else { return };
    let base = (at as isize + d0) as usize;
    let x: &[T; W] = src[base..base + W].try_into().expect("W elements");
    let mut acc = [T::ZERO; W];
    for w in 0..W {
        acc[w] = *c0 * x[w];
    }
    for (d, c) in rest {
        let base = (at as isize + d) as usize;
        let x: &[T; W] = src[base..base + W].try_into().expect("W elements");
        for w in 0..W {
            acc[w] += *c * x[w];
        }
    }
    *out = acc;
}
