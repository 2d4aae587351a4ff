//! Batched evaluation of the interpolant: `u(x_j) = Σ_blocks v[offset + k(x_j)] · φ(x_j)`.
//!
//! Loop order (thesis iopt1, Listing 4.3): blocks outer, points inner. Points are processed in
//! tiles of [`TILE`] (by default; [`EvalTuning`] holds the tuned tile and thresholds); inside a tile the coordinates and the per-dimension basis values are laid
//! out structure-of-arrays (AoSoA overall), so every inner loop runs over the tile's lanes and
//! vectorises. The blocks are walked as a trie (see `trie.rs`), which shares basis products and
//! position prefixes between blocks: per block and point there is about one multiply, one
//! shift-or, one gather and one multiply-add.
//!
//! Variants, all computing each point's sum in the same order, so [`EvalVariant::PointTiles`],
//! [`EvalVariant::SharedPrefix`] and [`EvalVariant::Cartesian`] return bit-identical results:
//!
//! | variant | parallel over | picked when (first rule that applies) |
//! |---|---|---|
//! | `Cartesian` | the first factor's values | `m >= tile` and the points are a lexicographic Cartesian product |
//! | `SharedPrefix` | tiles of points | `m >= tile` and the leading columns are constant (a slice through the domain) |
//! | `BlocksParallel` | subtrees of blocks, then a reduction | fewer than `2 · threads` tiles of points (`m = 0` included; the 2 is [`EvalTuning::blocks_parallel_tiles_per_thread`]) and at least 64 blocks |
//! | `PointTiles` | tiles of points | otherwise |
//!
//! `BlocksParallel` adds the per-subtree partial sums in a fixed order: deterministic, but
//! rounded differently from the others (within a few ulps of the sum's magnitude).

use ndarray::ArrayView2;
use rayon::prelude::*;
use sg_core::alloc::{checked_len, try_vec};
use sg_core::basis::basis_cell;
use sg_core::reference::check_point_coords;
use sg_core::{GridSpec, Real, SgError};

use crate::error::{Error, Result};
use crate::patterns::PointPattern;
use crate::trie::{Kind, Node, Trie};
pub use crate::tuning::{EVAL_KERNEL as TUNING_KERNEL, EvalTuning};
use hetero_sched::tune::dispatch::Tunable;

/// Points per tile by default: the lane count of the inner loops (a multiple of every SIMD
/// width). Tunable per machine through [`EvalTuning::tile`].
pub const TILE: usize = 64;

/// The largest tile [`EvalTuning::tile`] may ask for (the stack buffer of one coordinate row).
pub const MAX_TILE: usize = 256;

/// The evaluation variants; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalVariant {
    /// Parallel over tiles of points.
    PointTiles,
    /// Parallel over subtrees of blocks with a final reduction (small batches).
    BlocksParallel,
    /// Leading columns shared by all points are computed once per block.
    SharedPrefix,
    /// Points forming a lexicographic Cartesian product are expanded factor by factor.
    Cartesian,
}

/// An evaluation plan for one grid description: the trie of its blocks.
#[derive(Debug, Clone)]
pub struct Evaluator {
    trie: Trie,
    len: u64,
    /// First table row of each dimension's kinds.
    base: Vec<usize>,
    rows: usize,
}

impl Evaluator {
    /// Builds the trie of `spec`'s blocks (O(blocks x d log blocks)).
    ///
    /// # Errors
    /// [`Error::BlockTooLarge`]; [`SgError::Allocation`] when the plan does not fit in memory
    /// (sized from [`GridSpec::num_blocks`] before anything is built).
    pub fn new(spec: &GridSpec) -> Result<Self> {
        let trie = Trie::new(spec)?;
        let mut base = Vec::with_capacity(trie.d);
        let mut rows = 0;
        for k in &trie.kinds {
            base.push(rows);
            rows += k.len();
        }
        Ok(Evaluator { trie, len: spec.len(), base, rows })
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.trie.d
    }

    /// Number of blocks of the grid.
    pub fn blocks(&self) -> usize {
        self.trie.blocks
    }

    /// Number of trie nodes: the multiply-and-shift steps per point (leaves included).
    pub fn trie_nodes(&self) -> usize {
        self.trie.nodes.len()
    }

    /// The variant [`evaluate`](Self::evaluate) uses for `points`, and the pattern it found,
    /// under the tuned parameters for this batch ([`Tunable::tuned`]).
    pub fn choose<T: Real>(&self, points: ArrayView2<'_, T>) -> (EvalVariant, PointPattern<T>) {
        self.choose_with(points, &EvalTuning::tuned::<T>(points.nrows()))
    }

    /// [`choose`](Self::choose) under explicit parameters.
    pub fn choose_with<T: Real>(
        &self,
        points: ArrayView2<'_, T>,
        tuning: &EvalTuning,
    ) -> (EvalVariant, PointPattern<T>) {
        let m = points.nrows();
        let tile = tuning.tile.clamp(1, MAX_TILE);
        let pattern = PointPattern::detect(points);
        let few_tiles =
            m.div_ceil(tile) < tuning.blocks_parallel_tiles_per_thread * rayon::current_num_threads();
        let variant = match &pattern {
            PointPattern::Cartesian { .. } if m >= tile => EvalVariant::Cartesian,
            PointPattern::SharedPrefix { .. } if m >= tile => EvalVariant::SharedPrefix,
            _ if few_tiles && self.blocks() >= 64 => EvalVariant::BlocksParallel,
            _ => EvalVariant::PointTiles,
        };
        (variant, pattern)
    }

    /// The interpolant at the rows of `points` (`m x d`); `values` are the surpluses, `s` per
    /// point. Returns `m x s` values, row-major. Picks the variant with [`choose`](Self::choose).
    ///
    /// # Errors
    /// [`SgError::Zero`] for `s = 0`, [`Error::Shape`] when `values.len() != len · s`,
    /// [`SgError::LengthMismatch`] for the wrong column count, [`SgError::NonFinite`] or
    /// [`SgError::OutsideDomain`] for a bad point, [`SgError::Allocation`] when the output does
    /// not fit in memory.
    pub fn evaluate<T: Real>(&self, values: &[T], s: usize, points: ArrayView2<'_, T>) -> Result<Vec<T>> {
        self.evaluate_tuned(values, s, points, &EvalTuning::tuned::<T>(points.nrows()))
    }

    /// [`evaluate`](Self::evaluate) under explicit parameters instead of the cached or default
    /// ones (what the tuner measures). A tile outside `1..=MAX_TILE` is clamped into it, a
    /// `subtrees_per_thread` of 0 acts as 1.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    pub fn evaluate_tuned<T: Real>(
        &self,
        values: &[T],
        s: usize,
        points: ArrayView2<'_, T>,
        tuning: &EvalTuning,
    ) -> Result<Vec<T>> {
        self.check(values, s, points)?;
        let (variant, pattern) = self.choose_with(points, tuning);
        let _span = tracing::debug_span!("sg_cpu::evaluate", m = points.nrows(), ?variant).entered();
        self.run(variant, pattern, values, s, points, tuning)
    }

    /// The interpolant with a given variant (for tests and benchmarks). A structured variant
    /// whose pattern the points do not have falls back to `PointTiles`.
    ///
    /// # Errors
    /// As [`evaluate`](Self::evaluate).
    pub fn evaluate_with<T: Real>(
        &self,
        variant: EvalVariant,
        values: &[T],
        s: usize,
        points: ArrayView2<'_, T>,
    ) -> Result<Vec<T>> {
        self.check(values, s, points)?;
        let pattern = match variant {
            EvalVariant::Cartesian | EvalVariant::SharedPrefix => PointPattern::detect(points),
            _ => PointPattern::General,
        };
        self.run(variant, pattern, values, s, points, &EvalTuning::DEFAULT)
    }

    fn run<T: Real>(
        &self,
        variant: EvalVariant,
        pattern: PointPattern<T>,
        values: &[T],
        s: usize,
        points: ArrayView2<'_, T>,
        tuning: &EvalTuning,
    ) -> Result<Vec<T>> {
        let tile = tuning.tile.clamp(1, MAX_TILE);
        let mut out = try_vec(
            "evaluation output",
            checked_len::<T>("evaluation output", points.nrows() as u64, s)?,
            T::zero(),
        )?;
        match (variant, pattern) {
            (EvalVariant::BlocksParallel, _) => {
                let subtrees = tuning.subtrees_per_thread.max(1) * rayon::current_num_threads();
                self.blocks_parallel(values, s, points, &mut out, tile, subtrees)?
            }
            (EvalVariant::Cartesian, PointPattern::Cartesian { factors }) => {
                self.cartesian(values, s, &factors, &mut out)
            }
            (EvalVariant::SharedPrefix | EvalVariant::Cartesian, PointPattern::SharedPrefix { prefix }) => {
                self.point_tiles(values, s, points, prefix, &mut out, tile)
            }
            _ => self.point_tiles(values, s, points, 0, &mut out, tile),
        }
        Ok(out)
    }

    fn check<T: Real>(&self, values: &[T], s: usize, points: ArrayView2<'_, T>) -> Result<()> {
        let d = self.dim();
        if s == 0 {
            return Err(SgError::Zero { what: "values per point (s)" }.into());
        }
        if Some(values.len()) != usize::try_from(self.len).ok().and_then(|n| n.checked_mul(s)) {
            return Err(Error::Shape(format!(
                "{} values for a grid of {} points with {s} values each",
                values.len(),
                self.len
            )));
        }
        if points.ncols() != d {
            return Err(
                SgError::LengthMismatch { what: "point columns", expected: d, got: points.ncols() }.into()
            );
        }
        for (row, x) in points.outer_iter().enumerate() {
            match x.as_slice() {
                Some(x) => check_point_coords(d, x, row)?,
                None => check_point_coords(d, &x.to_vec(), row)?,
            }
        }
        Ok(())
    }

    /// Basis value and cell of kind `k` of dimension `t` at `x`.
    #[inline]
    fn basis<T: Real>(&self, t: usize, k: usize, x: T) -> (T, u32) {
        match self.trie.kinds[t][k] {
            Kind::Boundary(0) => (T::one() - x, 0),
            Kind::Boundary(_) => (x, 0),
            Kind::Hat(l) => {
                let (cell, v) = basis_cell(l - 1, x);
                (v, cell)
            }
        }
    }

    fn point_tiles<T: Real>(
        &self,
        values: &[T],
        s: usize,
        points: ArrayView2<'_, T>,
        prefix: usize,
        out: &mut [T],
        tile: usize,
    ) {
        out.par_chunks_mut(tile * s).enumerate().for_each_init(
            || Scratch::new(self, tile),
            |sc, (i, acc)| {
                let j0 = i * tile;
                let w = acc.len() / s;
                sc.fill(self, w, |t, j| points[[j0 + j, t]]);
                sc.run(self, &self.trie.nodes, &[], values, s, acc, prefix);
            },
        );
    }

    fn blocks_parallel<T: Real>(
        &self,
        values: &[T],
        s: usize,
        points: ArrayView2<'_, T>,
        out: &mut [T],
        tile: usize,
        subtrees: usize,
    ) -> Result<()> {
        let ms = out.len();
        if ms == 0 {
            return Ok(());
        }
        let ranges = self.subtree_ranges(subtrees);
        // One private output per subtree range, reserved at once before any work.
        let what = "evaluation partial sums";
        let mut partials = try_vec(what, checked_len::<T>(what, ranges.len() as u64, ms)?, T::zero())?;
        partials.par_chunks_mut(ms).zip(&ranges).for_each_init(
            || Scratch::new(self, tile),
            |sc, (acc, &(a, b))| {
                let ancestors = self.trie.ancestors(a);
                for (i, acc) in acc.chunks_mut(tile * s).enumerate() {
                    let j0 = i * tile;
                    sc.fill(self, acc.len() / s, |t, j| points[[j0 + j, t]]);
                    sc.run(self, &self.trie.nodes[a..b], &ancestors, values, s, acc, 0);
                }
            },
        );
        for p in partials.chunks_exact(ms) {
            out.iter_mut().zip(p).for_each(|(o, &v)| *o += v);
        }
        Ok(())
    }

    /// Node ranges made of whole subtrees, at least `want` of them where the trie allows.
    fn subtree_ranges(&self, want: usize) -> Vec<(usize, usize)> {
        let mut depth = 0;
        let mut cuts = self.trie.split_points(depth);
        while cuts.len() - 1 < want && (depth as usize) + 1 < self.dim() {
            depth += 1;
            cuts = self.trie.split_points(depth);
        }
        cuts.windows(2).map(|w| (w[0], w[1])).collect()
    }

    fn cartesian<T: Real>(&self, values: &[T], s: usize, factors: &[Vec<T>], out: &mut [T]) {
        let d = self.dim();
        let m: usize = factors.iter().map(Vec::len).product();
        // Basis values and cells of every kind at every factor value, computed once.
        let tables: Vec<Vec<Vec<(T, u32)>>> = (0..d)
            .map(|t| {
                (0..self.trie.kinds[t].len())
                    .map(|k| factors[t].iter().map(|&x| self.basis(t, k, x)).collect())
                    .collect()
            })
            .collect();
        let rows_per_first = m / factors[0].len();
        out.par_chunks_mut(rows_per_first * s).enumerate().for_each(|(i0, acc)| {
            cartesian_rows(&self.trie, &tables, factors, i0, values, s, acc);
        });
    }
}

/// Per-task buffers of the tiled variants.
struct Scratch<T> {
    /// Lanes per row (the tile).
    lanes: usize,
    w: usize,
    /// Basis value and cell of every (dimension, kind) row at every lane.
    basis: Vec<T>,
    cell: Vec<u32>,
    /// Partial products and positions, one row per trie depth.
    prod: Vec<T>,
    idx: Vec<u32>,
}

impl<T: Real> Scratch<T> {
    fn new(ev: &Evaluator, lanes: usize) -> Self {
        let d = ev.dim();
        Scratch {
            lanes,
            w: 0,
            basis: vec![T::zero(); ev.rows * lanes],
            cell: vec![0; ev.rows * lanes],
            prod: vec![T::zero(); d * lanes],
            idx: vec![0; d * lanes],
        }
    }

    /// Basis tables for `w` points whose coordinates `x(t, j)` gives.
    fn fill(&mut self, ev: &Evaluator, w: usize, x: impl Fn(usize, usize) -> T) {
        self.w = w;
        let mut xs = [T::zero(); MAX_TILE];
        for t in 0..ev.dim() {
            for (j, v) in xs[..w].iter_mut().enumerate() {
                *v = x(t, j);
            }
            for (k, kind) in ev.trie.kinds[t].iter().enumerate() {
                let row = (ev.base[t] + k) * self.lanes;
                let (b, c) = (&mut self.basis[row..row + w], &mut self.cell[row..row + w]);
                match *kind {
                    Kind::Boundary(0) => {
                        b.iter_mut().zip(&xs).for_each(|(b, &x)| *b = T::one() - x);
                        c.fill(0);
                    }
                    Kind::Boundary(_) => {
                        b.copy_from_slice(&xs[..w]);
                        c.fill(0);
                    }
                    Kind::Hat(l) => {
                        for j in 0..w {
                            (c[j], b[j]) = basis_cell(l - 1, xs[j]);
                        }
                    }
                }
            }
        }
    }

    /// Runs `nodes` (after the `ancestors` that lead to the first of them) and adds every
    /// leaf's contribution to `acc` (`w x s`). Depths below `shared` hold the same value in
    /// every lane and are computed once.
    fn run(
        &mut self,
        ev: &Evaluator,
        nodes: &[Node],
        ancestors: &[Node],
        values: &[T],
        s: usize,
        acc: &mut [T],
        shared: usize,
    ) {
        let d = ev.dim();
        let (w, lanes) = (self.w, self.lanes);
        acc.fill(T::zero());
        // Scalar prefix (shared dimensions): lane 0 stands for all lanes.
        let mut sprod = vec![T::one(); d];
        let mut sidx = vec![0u32; d];
        let mut sacc = vec![T::zero(); s];
        for node in ancestors.iter().chain(nodes) {
            let t = node.t as usize;
            let row = (ev.base[t] + node.kind as usize) * lanes;
            let (b, c) = (&self.basis[row..row + w], &self.cell[row..row + w]);
            let off = node.offset as usize;
            let leaf = t + 1 == d;
            if t < shared {
                let (pp, pi) = if t == 0 { (None, 0) } else { (Some(sprod[t - 1]), sidx[t - 1]) };
                let p = pp.map_or(b[0], |pp| pp * b[0]);
                let k = (pi << node.bits) | c[0];
                if leaf {
                    let v = &values[(off + k as usize) * s..][..s];
                    sacc.iter_mut().zip(v).for_each(|(a, &v)| *a += v * p);
                } else {
                    (sprod[t], sidx[t]) = (p, k);
                }
                continue;
            }
            let (head, tail) = self.prod.split_at_mut(t * lanes);
            let (ihead, itail) = self.idx.split_at_mut(t * lanes);
            let out = &mut tail[..w];
            let oidx = &mut itail[..w];
            if t == 0 {
                out.copy_from_slice(b);
                oidx.copy_from_slice(c);
            } else if t == shared {
                let (pp, pi) = (sprod[t - 1], sidx[t - 1]);
                for j in 0..w {
                    out[j] = pp * b[j];
                    oidx[j] = (pi << node.bits) | c[j];
                }
            } else {
                let pp = &head[(t - 1) * lanes..][..w];
                let pi = &ihead[(t - 1) * lanes..][..w];
                for j in 0..w {
                    out[j] = pp[j] * b[j];
                    oidx[j] = (pi[j] << node.bits) | c[j];
                }
            }
            if leaf {
                gather(&values[off * s..], s, out, oidx, acc);
            }
        }
        if shared == d {
            for lane in acc.chunks_mut(s) {
                lane.copy_from_slice(&sacc);
            }
        }
    }
}

/// `acc[j] += block[idx[j]] · prod[j]` for every lane (`s` values per point).
#[inline]
fn gather<T: Real>(block: &[T], s: usize, prod: &[T], idx: &[u32], acc: &mut [T]) {
    if s == 1 {
        for ((a, &p), &k) in acc.iter_mut().zip(prod).zip(idx) {
            *a += block[k as usize] * p;
        }
    } else {
        for ((a, &p), &k) in acc.chunks_mut(s).zip(prod).zip(idx) {
            let v = &block[k as usize * s..][..s];
            a.iter_mut().zip(v).for_each(|(a, &v)| *a += v * p);
        }
    }
}

/// The rows of a Cartesian product whose first coordinate is `factors[0][i0]`, block by block:
/// depth `t` holds the partial products of `factors[1..=t]` (last dimension fastest).
fn cartesian_rows<T: Real>(
    trie: &Trie,
    tables: &[Vec<Vec<(T, u32)>>],
    factors: &[Vec<T>],
    i0: usize,
    values: &[T],
    s: usize,
    acc: &mut [T],
) {
    let d = trie.d;
    let mut prod: Vec<Vec<T>> = vec![Vec::new(); d];
    let mut idx: Vec<Vec<u32>> = vec![Vec::new(); d];
    for node in &trie.nodes {
        let t = node.t as usize;
        let tab = &tables[t][node.kind as usize];
        let (head, tail) = prod.split_at_mut(t);
        let (ihead, itail) = idx.split_at_mut(t);
        let (out, oidx) = (&mut tail[0], &mut itail[0]);
        out.clear();
        oidx.clear();
        if t == 0 {
            out.push(tab[i0].0);
            oidx.push(tab[i0].1);
        } else {
            for (&pp, &pi) in head[t - 1].iter().zip(&ihead[t - 1]) {
                for &(b, c) in tab.iter().take(factors[t].len()) {
                    out.push(pp * b);
                    oidx.push((pi << node.bits) | c);
                }
            }
        }
        if t + 1 == d {
            gather(&values[node.offset as usize * s..], s, out, oidx, acc);
        }
    }
}
