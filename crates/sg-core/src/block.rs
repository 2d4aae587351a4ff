//! Blocks (hierarchical subspaces) and points in storage order.
//!
//! A block is the set of points sharing one level vector (and, on boundary grids, one boundary
//! pattern). Its points are stored contiguously, row-major over the per-dimension in-level
//! positions `p_t = (i_t − 1)/2` with **dimension 0 most significant** (Eq. 3.12); a boundary
//! dimension contributes a single position. So the point at offset `k` inside a block with
//! 0-based levels `l0` has `p_t = (k >> s_t) & (2^{l0_t} − 1)` with `s_t = Σ_{u>t} l0_u`.

use crate::alloc::{checked_len, try_with_capacity};
use crate::boundary::{AT1, INTERIOR, first_pattern, next_pattern};
use crate::error::Result;
use crate::spec::GridSpec;
use crate::tables::SubspaceTables;
use std::sync::Arc;

/// One block: public levels (0 in boundary dimensions), boundary sides, offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    levels: Vec<u32>,
    sides: u64,
    offset: u64,
    level_sum: u32,
}

impl Block {
    /// Public levels per dimension: `>= 1` interior, 0 boundary.
    #[inline]
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// Bit `t` is set when dimension `t` is a boundary dimension at `x_t = 1`.
    #[inline]
    pub fn sides(&self) -> u64 {
        self.sides
    }

    /// Index `i_t` shared by all points of the block in boundary dimension `t` (0 or 1).
    #[inline]
    pub fn side(&self, t: usize) -> u32 {
        ((self.sides >> t) & 1) as u32
    }

    /// Linear index of the block's first point.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// `Σ (l_t − 1)` over the interior dimensions: the block holds `2^level_sum` points.
    #[inline]
    pub fn level_sum(&self) -> u32 {
        self.level_sum
    }

    /// Number of points, `2^level_sum`.
    #[inline]
    pub fn len(&self) -> u64 {
        1u64 << self.level_sum
    }

    /// Always false.
    #[inline]
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Position inside the block of the point with these indices (public convention; boundary
    /// dimensions are ignored). Row-major, dimension 0 most significant.
    ///
    /// # Panics
    /// When `indices` is shorter than `d`.
    #[inline]
    pub fn local_index(&self, indices: &[u32]) -> u64 {
        let mut k = 0u64;
        for (t, &l) in self.levels.iter().enumerate() {
            if l > 0 {
                k = (k << (l - 1)) | (indices[t] >> 1) as u64;
            }
        }
        k
    }

    /// Indices (public convention) of the point at position `k` inside the block.
    ///
    /// # Panics
    /// When `indices` is shorter than `d`.
    pub fn indices_at(&self, mut k: u64, indices: &mut [u32]) {
        for t in (0..self.levels.len()).rev() {
            let l = self.levels[t];
            if l == 0 {
                indices[t] = self.side(t);
            } else {
                indices[t] = 2 * (k & ((1u64 << (l - 1)) - 1)) as u32 + 1;
                k >>= l - 1;
            }
        }
    }
}

/// Iterator over the blocks of a grid in storage order (see [`GridSpec::blocks`]).
#[derive(Debug)]
pub struct Blocks<'a> {
    spec: &'a GridSpec,
    sym: Vec<u8>,
    nb: usize,
    dims: Vec<usize>,
    face: Arc<SubspaceTables>,
    face_offset: u64,
    g: u32,
    b: u64,
    l0: Vec<u32>,
    done: bool,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(spec: &'a GridSpec) -> Self {
        let d = spec.dim();
        let mut it = Blocks {
            spec,
            sym: vec![INTERIOR; d],
            nb: 0,
            dims: Vec::with_capacity(d),
            face: spec.tables_arc(),
            face_offset: 0,
            g: 0,
            b: 0,
            l0: vec![0; d],
            done: false,
        };
        it.enter_face();
        it
    }

    fn enter_face(&mut self) {
        self.dims.clear();
        self.dims.extend((0..self.sym.len()).filter(|&t| self.sym[t] == INTERIOR));
        if let Some(layout) = self.spec.boundary_layout() {
            self.face = layout.face_tables(&self.dims);
        }
        self.g = 0;
        self.b = 0;
    }

    fn next_face(&mut self) -> bool {
        if self.spec.boundary_layout().is_none() {
            return false;
        }
        self.face_offset += self.face.len();
        if !next_pattern(&mut self.sym) {
            self.nb += 1;
            if self.nb > self.sym.len() {
                return false;
            }
            first_pattern(&mut self.sym, self.nb);
        }
        self.enter_face();
        true
    }
}

impl Iterator for Blocks<'_> {
    type Item = Block;

    fn next(&mut self) -> Option<Block> {
        let n = self.spec.level();
        while !self.done {
            while self.g < n && self.b >= self.face.blocks_in_group(self.g) {
                self.g += 1;
                self.b = 0;
            }
            if self.g < n {
                let k = self.dims.len();
                self.face.inv_pos(self.g, self.b, &mut self.l0[..k]);
                let mut levels = vec![0u32; self.sym.len()];
                let mut sides = 0u64;
                for (t, &s) in self.sym.iter().enumerate() {
                    if s == AT1 {
                        sides |= 1 << t;
                    }
                }
                for (s, &t) in self.dims.iter().enumerate() {
                    levels[t] = self.l0[s] + 1;
                }
                let offset = self.face_offset + self.face.group_offset(self.g) + (self.b << self.g);
                let block = Block { levels, sides, offset, level_sum: self.g };
                self.b += 1;
                return Some(block);
            }
            if !self.next_face() {
                self.done = true;
            }
        }
        None
    }
}

/// Every block of a grid as flat arrays in storage order: the input of block-structured
/// kernels (the matrix `L` of the thesis's Ch. 5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockTable {
    d: usize,
    levels: Vec<u32>,
    sides: Vec<u64>,
    offsets: Vec<u64>,
}

impl BlockTable {
    /// Collects [`GridSpec::blocks`]. The size is known from [`GridSpec::num_blocks`] before
    /// anything is enumerated, and reserved fallibly.
    ///
    /// # Errors
    /// [`SgError::Allocation`](crate::SgError::Allocation) when the table does not fit in memory.
    pub fn new(spec: &GridSpec) -> Result<Self> {
        let d = spec.dim();
        let what = "block table";
        let blocks = checked_len::<u64>(what, spec.num_blocks(), 1)?;
        let mut t = BlockTable {
            d,
            levels: try_with_capacity(what, checked_len::<u32>(what, blocks as u64, d)?)?,
            sides: try_with_capacity(what, blocks)?,
            offsets: try_with_capacity(what, blocks.saturating_add(1))?,
        };
        for b in spec.blocks() {
            t.levels.extend_from_slice(b.levels());
            t.sides.push(b.sides());
            t.offsets.push(b.offset());
        }
        t.offsets.push(spec.len());
        Ok(t)
    }

    /// Number of dimensions (row length of [`levels_flat`](Self::levels_flat)).
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.sides.len()
    }

    /// True for a table without blocks (never for a table built from a grid).
    pub fn is_empty(&self) -> bool {
        self.sides.is_empty()
    }

    /// Public levels of block `b` (0 in boundary dimensions).
    ///
    /// # Panics
    /// For `b >= len()`, like slice indexing (so do `sides`, `offset` and `block_len`).
    pub fn levels(&self, b: usize) -> &[u32] {
        &self.levels[b * self.d..(b + 1) * self.d]
    }

    /// All level vectors, `len() × d`, row-major.
    pub fn levels_flat(&self) -> &[u32] {
        &self.levels
    }

    /// Boundary sides of block `b` (bit `t`: boundary dimension `t` at `x_t = 1`).
    pub fn sides(&self, b: usize) -> u64 {
        self.sides[b]
    }

    /// Offset of block `b`; `offset(len())` is the number of points.
    pub fn offset(&self, b: usize) -> u64 {
        self.offsets[b]
    }

    /// The `len() + 1` offsets (exclusive prefix sums of the block sizes).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Number of points of block `b`.
    pub fn block_len(&self, b: usize) -> u64 {
        self.offsets[b + 1] - self.offsets[b]
    }
}

/// One grid point: linear index, public levels and indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GridPoint {
    /// Linear index.
    pub index: u64,
    /// Public levels.
    pub levels: Vec<u32>,
    /// Public indices.
    pub indices: Vec<u32>,
}

/// Iterator over the points in storage order (see [`GridSpec::points`]).
#[derive(Debug)]
pub struct Points<'a> {
    blocks: Blocks<'a>,
    current: Option<Block>,
    k: u64,
}

impl<'a> Points<'a> {
    pub(crate) fn new(spec: &'a GridSpec) -> Self {
        let mut blocks = spec.blocks();
        let current = blocks.next();
        Points { blocks, current, k: 0 }
    }
}

impl Iterator for Points<'_> {
    type Item = GridPoint;

    fn next(&mut self) -> Option<GridPoint> {
        loop {
            let block = self.current.as_ref()?;
            if self.k < block.len() {
                let mut indices = vec![0; block.levels().len()];
                block.indices_at(self.k, &mut indices);
                let p =
                    GridPoint { index: block.offset() + self.k, levels: block.levels().to_vec(), indices };
                self.k += 1;
                return Some(p);
            }
            self.current = self.blocks.next();
            self.k = 0;
        }
    }
}
