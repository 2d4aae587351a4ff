//! CPU emulators of the kernels: the same loops, index arithmetic and tables as the `.cu` files in
//! `cuda-kernels/sg/`, run sequentially. They exist so that the host-built tables and the kernels'
//! index arithmetic are tested against the `sg-core` references on machines without a GPU; each
//! function names the device function it mirrors.
//!
//! Like the kernels, they take their arguments as the launch code has already checked them
//! (tables built for the grid, value and point slices of the right lengths, a configuration that
//! passed `validate`); they are test oracles, and panic on arguments that violate this.

use sg_core::Real;

use crate::config::{EvalConfig, SpvmConfig};
use crate::occupancy::SmLimits;
use crate::plan::{EvalPlan, SpvmPlan, plan_eval};
use crate::tables::{GROUP_WORDS, NONE, SweepTable, node_bits, node_level, node_link, node_side};

/// `sg_basis` (sg_common.cuh): basis value and in-level cell of kind `(level, side)` at `x`.
#[inline]
pub fn basis<T: Real>(level: u32, side: u32, x: T) -> (T, u32) {
    if level == 0 {
        return (if side == 1 { x } else { T::one() - x }, 0);
    }
    let l0 = level - 1;
    let scale = T::from_f64((1u64 << l0) as f64);
    let top = (1u32 << l0) - 1;
    let f = (scale * x).floor();
    let c = if f <= T::zero() {
        0
    } else if f >= T::from_f64(top as f64) {
        top
    } else {
        f.to_f64() as u32
    };
    let two = T::from_f64(2.0);
    let v = T::one() - (two * scale * x - T::from_f64((2 * c) as f64) - T::one()).abs();
    (v.max(T::zero()), c)
}

/// `sg_point_base`: offset of pole `(hi, lo = 0)` at the 1-D point `(level, index)` of a chain row.
#[inline]
pub fn point_base(chain: &[u64], s: u32, hi: u64, level: u32, index: u32) -> u64 {
    if level == 0 {
        let off = chain[index as usize];
        return if off == NONE { NONE } else { off + (hi << s) };
    }
    let p = u64::from(index >> 1);
    chain[1 + level as usize] + (((hi << (level - 1)) + p) << s)
}

/// `sg_parent`: the hierarchical parent on `side` (0 left, 1 right) of `(level, odd index)`.
#[inline]
pub fn parent(level: u32, index: u32, side: u32) -> (u32, u32) {
    let m = if side == 1 { index + 1 } else { index - 1 };
    if m == 0 {
        return (0, 0);
    }
    let z = m.trailing_zeros();
    (level - z, m >> z)
}

/// One element of a sweep work group at one level: the child's value index and its parents'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepElement {
    /// Index into the value array of the updated value.
    pub child: u64,
    /// Indices of the parents' values (`None`: no parent stored on that side).
    pub parents: [Option<u64>; 2],
}

/// The elements thread block `group` of a sweep handles at step `step`, in thread order
/// (`sg_sweep`'s decomposition of `e`). Returns the level too.
pub fn sweep_step(
    table: &SweepTable,
    group: usize,
    step: u32,
    ncomp: u32,
    hierarchize: bool,
) -> (u32, Vec<SweepElement>) {
    let g = &table.groups[group * GROUP_WORDS..][..GROUP_WORDS];
    let (c0, nch, hi0, hbits, top, s) = (g[0], g[1], g[2], g[3], g[4], g[5]);
    let (lo0, lbits) = (g[6], g[7]);
    let level = if hierarchize { top - step } else { step + 1 };
    let lb = level - 1;
    let shift = hbits + lb + lbits;
    let count = (u64::from(nch) << shift) * u64::from(ncomp);
    let nc = u64::from(ncomp);
    let elements = (0..count)
        .map(|e| {
            let (pe, comp) = (e / nc, e % nc);
            let ci = (pe >> shift) as u32;
            let r = pe & ((1u64 << shift) - 1);
            let hi = u64::from(hi0) + (r >> (lb + lbits));
            let p = ((r >> lbits) & ((1u64 << lb) - 1)) as u32;
            let lo = u64::from(lo0) + (r & ((1u64 << lbits) - 1));
            let row = (c0 + ci) as usize * table.stride as usize;
            let chain = &table.chains[row..row + table.stride as usize];
            let index = 2 * p + 1;
            let child = (point_base(chain, s, hi, level, index) + lo) * nc + comp;
            let parents = [0, 1].map(|side| {
                let (pl, pi) = parent(level, index, side);
                let base = point_base(chain, s, hi, pl, pi);
                (base != NONE).then(|| (base + lo) * nc + comp)
            });
            SweepElement { child, parents }
        })
        .collect();
    (level, elements)
}

/// Steps (levels) of group `group`: its top level.
pub fn group_steps(table: &SweepTable, group: usize) -> u32 {
    table.groups[group * GROUP_WORDS + 4]
}

/// `sg_hierarchize_*` / `sg_dehierarchize_*` over every dimension: one sweep per table.
pub fn sweep<T: Real>(tables: &[SweepTable], values: &mut [T], ncomp: u32, hierarchize: bool) {
    let half = T::from_f64(0.5);
    for table in tables {
        for group in 0..table.num_groups() {
            for step in 0..group_steps(table, group) {
                let (_, elements) = sweep_step(table, group, step, ncomp, hierarchize);
                for el in elements {
                    let mut sum = T::zero();
                    for p in el.parents.iter().flatten() {
                        sum += values[*p as usize];
                    }
                    let c = &mut values[el.child as usize];
                    if hierarchize {
                        *c -= half * sum;
                    } else {
                        *c += half * sum;
                    }
                }
            }
        }
    }
}

/// Where a leaf adds its contributions (`SgLeaf` of sg_evaluate.cuh): the value array and the
/// component tile `c0 .. c0 + acc.len()`.
struct Leaf<'a, T> {
    values: &'a [T],
    ncomp: usize,
    c0: usize,
}

/// `SgWalk` (sg_evaluate.cuh): the register kernel's recursive walk for one point, accumulating
/// the components of one tile.
#[allow(clippy::too_many_arguments)]
fn walk<T: Real>(
    nodes: &[u64],
    range: (u64, u64),
    t: usize,
    x: &[T],
    pp: T,
    pk: u32,
    leaf: &Leaf<'_, T>,
    acc: &mut [T],
) {
    let d = x.len();
    let mut i = range.0;
    while i < range.1 {
        let w = nodes[i as usize];
        let (v, c) = basis(node_level(w), node_side(w), x[t]);
        let p = if t == 0 { v } else { pp * v };
        let k = if t == 0 { c } else { (pk << node_bits(w)) | c };
        if t == d - 1 {
            let base = (node_link(w) + u64::from(k)) as usize * leaf.ncomp + leaf.c0;
            for (c, a) in acc.iter_mut().enumerate() {
                *a += leaf.values[base + c] * p;
            }
            i += 1;
        } else {
            walk(nodes, (i + 1, node_link(w)), t + 1, x, p, k, leaf, acc);
            i = node_link(w);
        }
    }
}

/// The component tiles of a launch: `(c0, nc)` for `c0 = 0, ctile, 2 ctile, …`.
fn tiles(ncomp: usize, ctile: u32) -> impl Iterator<Item = (usize, usize)> {
    let ctile = ctile.max(1) as usize;
    (0..ncomp).step_by(ctile).map(move |c0| (c0, ctile.min(ncomp - c0)))
}

/// `sg_stage_nodes`: the block-strided copy of the node array into shared memory (thread `tid`
/// copies words `tid, tid + blockDim, …`), returning what the walk reads.
pub fn stage_nodes(nodes: &[u64], staged: bool, block_size: usize) -> Vec<u64> {
    if !staged {
        return nodes.to_vec();
    }
    let mut smem = vec![u64::MAX; nodes.len()];
    for tid in 0..block_size {
        for i in (tid..nodes.len()).step_by(block_size) {
            smem[i] = nodes[i];
        }
    }
    smem
}

/// Stores `acc` as output row `j`, component `comp`; every row must be written exactly once.
fn store<T: Real>(out: &mut [T], idx: usize, acc: T) {
    assert!(out[idx].is_nan(), "output {idx} written twice");
    out[idx] = acc;
}

/// `sg_eval_*_dD_pPT` launched as `evaluate_device` launches it on an H100: the interpolant at
/// the rows of `points` (`m x d`, row-major), `ncomp` values per grid point; returns `m x ncomp`
/// (NaN where no thread wrote). The launch is [`plan_eval`] with ptxas's register counts.
///
/// # Panics
/// On a configuration `evaluate_device` would reject, or a row written twice.
pub fn evaluate_regs<T: Real>(
    nodes: &[u64],
    d: usize,
    values: &[T],
    ncomp: usize,
    points: &[T],
    cfg: &EvalConfig,
) -> Vec<T> {
    let plan = h100_plan::<T>(nodes, d, ncomp, points.len() / d, cfg);
    evaluate_regs_planned(nodes, d, values, ncomp, points, &plan)
}

/// The plan [`evaluate_regs`] and [`evaluate_generic`] follow.
fn h100_plan<T>(nodes: &[u64], d: usize, ncomp: usize, m: usize, cfg: &EvalConfig) -> EvalPlan {
    plan_eval(cfg, size_of::<T>(), (d, m, ncomp), nodes.len() * 8, None, &SmLimits::H100)
        .expect("valid launch configuration")
}

/// [`evaluate_regs`] with an explicit launch plan: the kernel's thread mapping (one launch of
/// `plan.blocks` blocks; thread `tid` of block `b` owns rows `b · bs · pt + q · bs + tid`, threads
/// whose first row is past `m` return, rows past `m` are walked with `x = 0` and not stored), one
/// walk per point and component tile of `plan.ctile`. `plan.staged` walks the block-strided shared
/// copy of the nodes.
///
/// # Panics
/// On a row written twice.
pub fn evaluate_regs_planned<T: Real>(
    nodes: &[u64],
    d: usize,
    values: &[T],
    ncomp: usize,
    points: &[T],
    plan: &EvalPlan,
) -> Vec<T> {
    let m = points.len() / d;
    let (bs, pt) = (plan.threads as usize, plan.pt as usize);
    let walk_nodes = stage_nodes(nodes, plan.staged, bs);
    let n = walk_nodes.len() as u64;
    let mut out = vec![T::nan(); m * ncomp];
    for b in 0..plan.blocks as usize {
        for tid in 0..bs {
            let first = b * bs * pt + tid;
            if first >= m {
                continue; // the kernel's early return, after the staging barrier
            }
            let xs: Vec<Vec<T>> = (0..pt)
                .map(|q| {
                    let j = first + q * bs;
                    (0..d).map(|t| if j < m { points[j * d + t] } else { T::zero() }).collect()
                })
                .collect();
            for (c0, nc) in tiles(ncomp, plan.ctile) {
                let leaf = Leaf { values, ncomp, c0 };
                for (q, x) in xs.iter().enumerate() {
                    let mut acc = vec![T::zero(); nc];
                    walk(&walk_nodes, (0, n), 0, x, T::one(), 0, &leaf, &mut acc);
                    let j = first + q * bs;
                    if j < m {
                        for (c, a) in acc.into_iter().enumerate() {
                            store(&mut out, j * ncomp + c0 + c, a);
                        }
                    }
                }
            }
        }
    }
    out
}

/// `sg_eval_*_generic` launched as `evaluate_device` launches it on an H100 (one point per
/// thread, row `b · bs + tid`): the explicit-stack walk of the kernel for any `d`.
///
/// # Panics
/// As [`evaluate_regs`].
pub fn evaluate_generic<T: Real>(
    nodes: &[u64],
    d: usize,
    values: &[T],
    ncomp: usize,
    points: &[T],
    cfg: &EvalConfig,
) -> Vec<T> {
    let cfg1 = EvalConfig { points_per_thread: Some(1), ..*cfg };
    let plan = h100_plan::<T>(nodes, d, ncomp, points.len() / d, &cfg1);
    evaluate_generic_planned(nodes, d, values, ncomp, points, &plan)
}

/// [`evaluate_generic`] with an explicit launch plan (its `pt` is ignored: one point per thread).
///
/// # Panics
/// On a row written twice.
pub fn evaluate_generic_planned<T: Real>(
    nodes: &[u64],
    d: usize,
    values: &[T],
    ncomp: usize,
    points: &[T],
    plan: &EvalPlan,
) -> Vec<T> {
    let m = points.len() / d;
    let bs = plan.threads as usize;
    let blocks = m.div_ceil(bs);
    let walk_nodes = stage_nodes(nodes, plan.staged, bs);
    let n = walk_nodes.len() as u64;
    let mut out = vec![T::nan(); m * ncomp];
    let mut prod = vec![T::zero(); d];
    let mut idx = vec![0u32; d];
    let mut ends = vec![0u64; d];
    for b in 0..blocks {
        for tid in 0..bs {
            let j = b * bs + tid;
            if j >= m || d == 0 || d > GENERIC_MAX_D {
                continue;
            }
            let xs = &points[j * d..(j + 1) * d];
            for (c0, nc) in tiles(ncomp, plan.ctile) {
                let mut acc = vec![T::zero(); nc];
                let mut t = 0usize;
                ends[0] = n;
                let mut i = 0u64;
                while i < n {
                    while i == ends[t] {
                        t -= 1;
                    }
                    let w = walk_nodes[i as usize];
                    let (v, c) = basis(node_level(w), node_side(w), xs[t]);
                    let p = if t == 0 { v } else { prod[t - 1] * v };
                    let k = if t == 0 { c } else { (idx[t - 1] << node_bits(w)) | c };
                    if t == d - 1 {
                        let base = (node_link(w) + u64::from(k)) as usize * ncomp + c0;
                        for (cc, a) in acc.iter_mut().enumerate() {
                            *a += values[base + cc] * p;
                        }
                    } else {
                        prod[t] = p;
                        idx[t] = k;
                        ends[t + 1] = node_link(w);
                        t += 1;
                    }
                    i += 1;
                }
                for (cc, a) in acc.into_iter().enumerate() {
                    store(&mut out, j * ncomp + c0 + cc, a);
                }
            }
        }
    }
    out
}

/// `SG_GENERIC_MAX_D` of sg_evaluate.cuh: the generic kernel's stack depth.
pub const GENERIC_MAX_D: usize = 64;

/// `sg_spvm_*_pPT` (and `sg_spvm_reduce_*`) launched as `spvm_device` launches them:
/// `y[j] = Σ_i x[i] · a[ix[i] · lda + j]` (a row index at or past `a.len() / lda` contributes
/// NaN, as on the device) over the grid of `plan`: block `(bx, by)` sums the selected rows
/// `by · rows_per_chunk ..` in sub-chunks of `blockDim.x` staged in the shared layout
/// `[x chunk | pad to 8 bytes | row chunk]` (checked against the host's byte count), thread `tid`
/// owning outputs `bx · bs · pt + q · bs + tid`; with several chunks the partial rows are added
/// in chunk order. The summation order is the kernels'.
///
/// # Panics
/// On a configuration `spvm_device` would reject, a plan that does not cover the rows, or a
/// shared layout past the host's bytes.
pub fn spvm<T: Real>(
    p: usize,
    lda: usize,
    x: &[T],
    ix: &[u64],
    a: &[T],
    cfg: &SpvmConfig,
    plan: &SpvmPlan,
) -> Vec<T> {
    cfg.validate().expect("valid launch configuration");
    let (bs, pt) = (cfg.block_size as usize, cfg.outputs_per_thread as usize);
    // The kernel's layout: xs at byte 0, rows at sizeof(T)·bs rounded up to 8.
    let rows_at = size_of::<T>() * bs + (8 - (size_of::<T>() * bs) % 8) % 8;
    assert!(
        rows_at.is_multiple_of(8) && rows_at + 8 * bs <= cfg.shared_bytes::<T>() as usize,
        "shared layout"
    );
    let nsel = x.len();
    let rpc = plan.rows_per_chunk as usize;
    let chunks = plan.chunks as usize;
    assert!(chunks * rpc >= nsel && plan.col_blocks as usize * bs * pt >= p, "the plan covers the rows");
    let nrows = (a.len() / lda.max(1)) as u64;
    let mut out = vec![T::nan(); chunks * p];
    let mut xs = vec![T::nan(); bs];
    let mut rows = vec![u64::MAX; bs];
    for by in 0..chunks {
        let begin = by * rpc;
        let end = (begin + rpc).min(nsel).max(begin);
        for bx in 0..plan.col_blocks as usize {
            let mut acc = vec![T::zero(); bs * pt];
            let mut i0 = begin;
            while i0 < end {
                let chunk = (end - i0).min(bs);
                // Threads 0..chunk stage one coefficient and one row index each; a row past the
                // matrix stages NaN on row 0.
                for t in 0..chunk {
                    let (r, ok) = (ix[i0 + t], ix[i0 + t] < nrows);
                    xs[t] = if ok { x[i0 + t] } else { T::nan() };
                    rows[t] = if ok { r } else { 0 };
                }
                for tid in 0..bs {
                    for i in 0..chunk {
                        for q in 0..pt {
                            let j = bx * bs * pt + q * bs + tid;
                            if j < p {
                                acc[tid * pt + q] += xs[i] * a[rows[i] as usize * lda + j];
                            }
                        }
                    }
                }
                i0 += bs;
            }
            for tid in 0..bs {
                for q in 0..pt {
                    let j = bx * bs * pt + q * bs + tid;
                    if j < p {
                        store(&mut out, by * p + j, acc[tid * pt + q]);
                    }
                }
            }
        }
    }
    if chunks == 1 {
        return out;
    }
    (0..p).map(|j| (0..chunks).fold(T::zero(), |s, c| s + out[c * p + j])).collect()
}
