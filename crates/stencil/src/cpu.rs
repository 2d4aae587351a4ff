//! The CPU kernels: the sequential reference loop, and the blocked, vectorised, parallel sweep.
//!
//! Both evaluate a point in the plan's order (see [`crate::plan`]), so they agree bitwise.
//! Constant-coefficient stencils run the specialised plane kernel of [`crate::taps`] (and,
//! for several sweeps, the temporal blocking of [`crate::temporal`]). The others (field
//! coefficients, a bias) compute a row segment along axis 2 at a time, one vectorised pass per
//! term (the row stays in L1 between passes), walk a block of `j_block` rows through `i_block`
//! consecutive planes so that the `2 h + 1` planes of input a block touches stay in cache, and
//! hand the `i_block`-plane chunks to rayon.

use ndarray::{ArrayViewMut3, Axis};
use rayon::prelude::*;

use crate::element::Element;
use crate::plan::{Coef, Plan};
use crate::taps::Taps;

/// Blocking of the CPU sweep.
///
/// Constant-coefficient stencils use `depth`, `j_block` and `chunks_per_thread` (temporal
/// blocking in [`Stencil::iterate`](crate::Stencil::iterate), and `j_block` rows per block in
/// one sweep); stencils with field coefficients or a bias use `i_block` and `j_block` (cache
/// blocking of each sweep).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpuBlocks {
    /// Consecutive planes (axis 0) one task computes (field-coefficient stencils).
    pub i_block: usize,
    /// Rows (axis 1) of a block walked through the task's planes; for constant coefficients,
    /// the rows of a band streamed through a temporally blocked pass (raised to at least
    /// `depth` times the halo along axis 1).
    pub j_block: usize,
    /// Sweeps per pass over the grid (temporal blocking); 1 is one sweep per pass.
    pub depth: usize,
    /// Chunks of planes per rayon thread in a temporally blocked pass (more balance the load
    /// between busy cores, fewer recompute less at the chunks' ends).
    pub chunks_per_thread: usize,
}

impl Default for CpuBlocks {
    /// Four planes and 32 rows; three sweeps per pass over bands of 32 rows (the rings of a
    /// band then stay in a 2 MiB L2 for 256-point rows of f64 up to the 13-point stencil's
    /// halo of 2); one chunk per thread.
    fn default() -> Self {
        CpuBlocks { i_block: 4, j_block: 32, depth: 3, chunks_per_thread: 1 }
    }
}

impl CpuBlocks {
    /// The number of chunks a temporally blocked pass is cut into on the current rayon pool.
    pub(crate) fn chunks(&self) -> usize {
        rayon::current_num_threads() * self.chunks_per_thread.max(1)
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
/// into `out` (whose plane 0 is global plane `planes.start`), in the plan's order.
pub(crate) fn sweep_reference<T: Element>(
    plan: &Plan<T>,
    src: Source<'_, T>,
    planes: std::ops::Range<usize>,
    out: &mut ArrayViewMut3<'_, T>,
) {
    let [_, n1, n2] = plan.shape;
    let [h0, h1, h2] = plan.halo;
    if let Some(program) = Taps::of(plan).and_then(|t| t.fast) {
        // The fast order, one point at a time.
        let ps = n1 * n2;
        for (p, gi) in planes.enumerate() {
            let inputs: Vec<&[T]> = (gi - h0..=gi + h0)
                .map(|q| &src.data[(q - src.first) * ps..(q - src.first + 1) * ps])
                .collect();
            for j in h1..n1 - h1 {
                for k in h2..n2 - h2 {
                    out[[p, j, k]] = program.point(&inputs, n2, j * n2 + k);
                }
            }
        }
        return;
    }
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
    if let Some(taps) = Taps::of(plan) {
        return sweep_taps(&taps, src, planes, out, blocks, parallel);
    }
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

/// The constant-coefficient sweep: the plane kernel on each output plane, its rows in blocks
/// of `j_block` (bounding a task's working set when planes are large), rayon over planes.
fn sweep_taps<T: Element>(
    taps: &Taps<T>,
    src: Source<'_, T>,
    planes: std::ops::Range<usize>,
    out: &mut ArrayViewMut3<'_, T>,
    blocks: CpuBlocks,
    parallel: bool,
) {
    let [_, n1, _] = taps.shape;
    let [h0, h1, _] = taps.halo;
    let ps = taps.plane_len();
    let jb = blocks.j_block.max(1);
    let start = planes.start;
    let task = |(p, mut plane): (usize, ArrayViewMut3<'_, T>)| {
        let gi = start + p;
        let inputs: Vec<&[T]> = (gi - h0..=gi + h0)
            .map(|q| {
                let at = (q - src.first) * ps;
                &src.data[at..at + ps]
            })
            .collect();
        let dst = plane.as_slice_mut().expect("output planes are contiguous");
        let mut j0 = h1;
        while j0 < n1 - h1 {
            let j1 = (j0 + jb).min(n1 - h1);
            taps.plane(&inputs, dst, j0..j1);
            j0 = j1;
        }
    };
    let chunks = out.axis_chunks_iter_mut(Axis(0), 1).enumerate();
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
