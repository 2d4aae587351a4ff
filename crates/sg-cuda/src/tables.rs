//! The integer tables the kernels read, built once per grid description on the host.
//!
//! - [`TrieTable`]: the blocks as a trie over their per-dimension kinds, one 64-bit word per node
//!   in preorder (layout in `cuda-kernels/sg/sg_common.cuh`): bits 0–4 the public level (0 on the
//!   boundary), bit 5 the boundary side, bits 8–63 the link (inner node: index one past its
//!   subtree; leaf: the block's offset).
//! - [`SweepTable`]: per dimension, the chains (blocks differing only in `l_t`) as rows of
//!   offsets `[boundary 0, boundary 1, level 1, …, level top]`, and the work groups of the
//!   sweep kernel (one thread block each): rows
//!   `[first chain, chains, first hi, hi bits, top, s, first lo, lo bits]`.
//!
//! The CPU emulators in [`crate::emulate`] interpret exactly these arrays, so their tests check
//! the tables without a GPU.

use sg_core::alloc::{checked_len, try_with_capacity};
use sg_core::{BlockTable, GridSpec};

use crate::error::{Error, Result};

/// Offset entry of a chain row where the grid has no such block.
pub const NONE: u64 = u64::MAX;
/// Words per work-group row of a [`SweepTable`].
pub const GROUP_WORDS: usize = 8;
/// Bits of a trie node word below the link.
pub const LINK_SHIFT: u32 = 8;
const SIDE_BIT: u64 = 32;
// Every level sg-core allows fits the 5-bit level field of a node word (and keeps the sweep's
// odd indices 2p + 1 < 2^31 in u32).
const _: () = assert!(sg_core::MAX_LEVEL <= 31);

/// Default target of points per sweep work group: chains are packed into groups of about this
/// many points, each group one thread block of the sweep kernel.
pub const DEFAULT_GROUP_POINTS: u64 = 4096;

/// Smallest group target [`SweepTable::for_grid_filling`] shrinks to for a small grid: a block of
/// 256 threads then still has one element per thread on the finest level.
pub const MIN_GROUP_POINTS: u64 = 256;

/// Fewest `lo` bits a split keeps: runs of 32 consecutive values, one warp's coalesced access.
pub const MIN_LO_BITS: u32 = 5;

/// A block's kind in one dimension: boundary side (level 0) or hat level. Sorts boundary first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Kind {
    level: u32,
    side: u32,
}

/// The trie of a grid's blocks as node words in preorder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrieTable {
    d: usize,
    blocks: usize,
    nodes: Vec<u64>,
}

/// Public level of a node word (0: boundary).
#[inline]
pub fn node_level(w: u64) -> u32 {
    (w & 31) as u32
}

/// Boundary side of a node word.
#[inline]
pub fn node_side(w: u64) -> u32 {
    u32::from(w & SIDE_BIT != 0)
}

/// Link of a node word: subtree end (inner node) or block offset (leaf).
#[inline]
pub fn node_link(w: u64) -> u64 {
    w >> LINK_SHIFT
}

/// Position bits a node adds: `L − 1` for a hat level, 0 on the boundary.
#[inline]
pub fn node_bits(w: u64) -> u32 {
    node_level(w).saturating_sub(1)
}

fn node_word(kind: Kind, link: u64) -> u64 {
    u64::from(kind.level) | if kind.side == 1 { SIDE_BIT } else { 0 } | (link << LINK_SHIFT)
}

/// Checks `Σ (l_t − 1) <= 31` for every block (32-bit in-block positions).
fn check_block_bits(levels: &[u32]) -> Result<()> {
    let level_sum: u32 = levels.iter().map(|&l| l.saturating_sub(1)).sum();
    if level_sum > 31 {
        return Err(Error::BlockTooLarge { level_sum });
    }
    Ok(())
}

impl TrieTable {
    /// Builds the trie of `spec`'s blocks.
    ///
    /// # Errors
    /// [`Error::BlockTooLarge`] for a block of 2^32 points or more; [`Error::Shape`] for a grid
    /// whose offsets do not fit the 56-bit link; [`SgError::Allocation`](sg_core::SgError::Allocation) when the tables do not
    /// fit in host memory (sized from the block count before anything is built).
    pub fn new(spec: &GridSpec) -> Result<Self> {
        let d = spec.dim();
        if spec.len() >= 1 << (64 - LINK_SHIFT) {
            return Err(Error::Shape(format!("{} points do not fit 56-bit trie links", spec.len())));
        }
        let table = spec.block_table()?;
        let nb = table.len();
        let what = "evaluation trie (device grid tables)";
        // One row of kinds per block, flat: no allocation per block.
        let mut flat: Vec<Kind> = try_with_capacity(what, checked_len::<Kind>(what, nb as u64, d)?)?;
        for b in 0..nb {
            let (levels, sides) = (table.levels(b), table.sides(b));
            check_block_bits(levels)?;
            flat.extend((0..d).map(|t| Kind { level: levels[t], side: ((sides >> t) & 1) as u32 }));
        }
        let keys = Keys { flat: &flat, d };
        let mut order: Vec<usize> = try_with_capacity(what, nb)?;
        order.extend(0..nb);
        order.sort_unstable_by(|&a, &b| keys.key(a).cmp(keys.key(b)));
        // Each block adds one node per dimension from the first one where it leaves its
        // predecessor in preorder.
        let count: usize =
            (0..nb).map(|i| if i == 0 { d } else { d - keys.shared(order[i - 1], order[i]) }).sum();
        let mut nodes = try_with_capacity(what, count)?;
        build_subtrees(&keys, &order, &table, 0, &mut nodes);
        Ok(TrieTable { d, blocks: nb, nodes })
    }

    /// Number of dimensions (trie depth).
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Number of blocks (leaves).
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// The node words in preorder.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes
    }

    /// Bytes of the node array (what the evaluation kernel stages in shared memory).
    pub fn bytes(&self) -> usize {
        self.nodes.len() * 8
    }
}

/// The blocks' kind vectors, one row of `d` per block.
struct Keys<'a> {
    flat: &'a [Kind],
    d: usize,
}

impl Keys<'_> {
    fn key(&self, b: usize) -> &[Kind] {
        &self.flat[b * self.d..(b + 1) * self.d]
    }

    /// Length of the common prefix of two blocks' kind vectors.
    fn shared(&self, a: usize, b: usize) -> usize {
        self.key(a).iter().zip(self.key(b)).take_while(|(x, y)| x == y).count()
    }
}

/// Appends the subtrees of the blocks `order` (sorted, sharing their first `t` kinds) in
/// preorder.
fn build_subtrees(keys: &Keys<'_>, order: &[usize], table: &BlockTable, t: usize, nodes: &mut Vec<u64>) {
    let d = keys.d;
    let mut i = 0;
    while i < order.len() {
        let kind = keys.key(order[i])[t];
        let j = i + order[i..].iter().take_while(|&&b| keys.key(b)[t] == kind).count();
        let at = nodes.len();
        nodes.push(0);
        if t + 1 == d {
            nodes[at] = node_word(kind, table.offset(order[i]));
        } else {
            build_subtrees(keys, &order[i..j], table, t + 1, nodes);
            nodes[at] = node_word(kind, nodes.len() as u64);
        }
        i = j;
    }
}

/// One chain while building: bits around dimension `t` and its offsets.
#[derive(Debug, Clone)]
struct Chain {
    s: u32,
    h: u32,
    boundary: [u64; 2],
    offsets: Vec<u64>,
}

impl Chain {
    fn top(&self) -> u32 {
        self.offsets.len() as u32
    }
    fn points(&self) -> u64 {
        (1u64 << (self.h + self.s)) * ((1u64 << self.top()) - 1)
    }
}

/// The chain rows and work groups of one dimension's sweep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepTable {
    /// Entries per chain row: `2 + max top`.
    pub stride: u32,
    /// Chain rows, `chains × stride`.
    pub chains: Vec<u64>,
    /// Work-group rows, `groups × GROUP_WORDS`.
    pub groups: Vec<u32>,
}

impl SweepTable {
    /// The sweep tables of every dimension of `spec`. `group_points` is the target size of a
    /// work group: longer chains are split by ranges of `hi` (then of `lo`, keeping runs of at
    /// least 32 values), shorter chains with the same `(top, h, s)` are merged until the group
    /// holds about that many points.
    ///
    /// # Errors
    /// [`Error::BlockTooLarge`]; [`Error::Config`] for `group_points == 0`;
    /// [`SgError::Allocation`](sg_core::SgError::Allocation) when the tables do not fit in host memory.
    pub fn for_grid(spec: &GridSpec, group_points: u64) -> Result<Vec<SweepTable>> {
        Self::for_grid_filling(spec, group_points, 1)
    }

    /// [`for_grid`](Self::for_grid) with the group target of each dimension shrunk (down to
    /// [`MIN_GROUP_POINTS`], never above `group_points`) until the dimension's sweep has about
    /// `min_groups` work groups: a device of `S` SMs holding `B` sweep blocks each is filled by
    /// `min_groups = S · B` ([`sweep_group_target`]).
    ///
    /// # Errors
    /// As [`for_grid`](Self::for_grid).
    pub fn for_grid_filling(spec: &GridSpec, group_points: u64, min_groups: u64) -> Result<Vec<SweepTable>> {
        if group_points == 0 {
            return Err(Error::Config("sweep group size 0".into()));
        }
        let table = spec.block_table()?;
        for b in 0..table.len() {
            check_block_bits(table.levels(b))?;
        }
        (0..spec.dim()).map(|t| Self::new(&table, t, group_points, min_groups)).collect()
    }

    fn new(table: &BlockTable, t: usize, group_points: u64, min_groups: u64) -> Result<SweepTable> {
        let d = table.dim();
        let what = "hierarchization chains (device grid tables)";
        let others = |b: usize| {
            let levels = table.levels(b);
            (levels[..t].iter().chain(&levels[t + 1..]), table.sides(b) & !(1u64 << t))
        };
        // Blocks sorted by (levels and sides without dimension t, level in t): each chain is one
        // run, without a key allocation per block.
        let mut order: Vec<usize> = try_with_capacity(what, table.len())?;
        order.extend(0..table.len());
        order.sort_unstable_by(|&a, &b| {
            let ((la, sa), (lb, sb)) = (others(a), others(b));
            la.cmp(lb).then(sa.cmp(&sb)).then(table.levels(a)[t].cmp(&table.levels(b)[t]))
        });
        let same_chain = |a: &usize, b: &usize| {
            let ((la, sa), (lb, sb)) = (others(*a), others(*b));
            sa == sb && la.eq(lb)
        };
        let mut chains: Vec<Chain> = try_with_capacity(what, order.chunk_by(same_chain).count())?;
        for run in order.chunk_by(same_chain) {
            let levels = table.levels(run[0]);
            let bits = |r: std::ops::Range<usize>| levels[r].iter().map(|&l| l.saturating_sub(1)).sum();
            let mut chain =
                Chain { s: bits(t + 1..d), h: bits(0..t), boundary: [NONE, NONE], offsets: Vec::new() };
            for &b in run {
                let off = table.offset(b);
                match table.levels(b)[t] {
                    0 => chain.boundary[((table.sides(b) >> t) & 1) as usize] = off,
                    l => {
                        let i = l as usize - 1;
                        if chain.offsets.len() <= i {
                            chain.offsets.resize(i + 1, NONE);
                        }
                        chain.offsets[i] = off;
                    }
                }
            }
            if chain.top() > 0 {
                chains.push(chain);
            }
        }
        // Equal (top, h, s) next to each other so they can share a group; then a fixed order.
        chains.sort_by_key(|c| (std::cmp::Reverse(c.top()), c.h, c.s, c.offsets[0]));
        let stride = 2 + chains.iter().map(Chain::top).max().unwrap_or(0);
        let mut rows =
            try_with_capacity(what, checked_len::<u64>(what, chains.len() as u64, stride as usize)?)?;
        for c in &chains {
            rows.extend_from_slice(&c.boundary);
            rows.extend_from_slice(&c.offsets);
            rows.resize(rows.len() + (stride - 2 - c.top()) as usize, NONE);
        }
        let points: u64 = chains.iter().map(Chain::points).sum();
        let target = sweep_group_target(points, group_points, min_groups);
        Ok(SweepTable { stride, chains: rows, groups: make_groups(&chains, target) })
    }

    /// Number of work groups (thread blocks of one sweep launch).
    pub fn num_groups(&self) -> usize {
        self.groups.len() / GROUP_WORDS
    }
}

/// The group target of a sweep over `points` interior points: `group_points`, shrunk towards
/// `points / min_groups` (so the launch has about `min_groups` blocks) but not below
/// [`MIN_GROUP_POINTS`] unless `group_points` itself is smaller.
pub fn sweep_group_target(points: u64, group_points: u64, min_groups: u64) -> u64 {
    let filling = (points / min_groups.max(1)).max(MIN_GROUP_POINTS);
    group_points.min(filling).max(1)
}

fn make_groups(chains: &[Chain], group_points: u64) -> Vec<u32> {
    let mut groups: Vec<u32> = Vec::new();
    let mut open: Option<(usize, u32)> = None; // (row start, chains so far)
    for (ci, c) in chains.iter().enumerate() {
        let points = c.points();
        let lo_room = c.s.saturating_sub(MIN_LO_BITS);
        if points > group_points && c.h + lo_room > 0 {
            open = None;
            // Split into 2^j pieces of about group_points each: the hi range first, then the lo
            // range (runs of at least 2^MIN_LO_BITS values stay contiguous).
            let want = points.div_ceil(group_points).next_power_of_two().trailing_zeros();
            let jh = want.min(c.h);
            let jl = (want - jh).min(lo_room);
            for hp in 0..1u32 << jh {
                for lp in 0..1u32 << jl {
                    groups.extend_from_slice(&[
                        ci as u32,
                        1,
                        hp << (c.h - jh),
                        c.h - jh,
                        c.top(),
                        c.s,
                        lp << (c.s - jl),
                        c.s - jl,
                    ]);
                }
            }
            continue;
        }
        if let Some((row, n)) = open {
            let head = &chains[groups[row] as usize];
            let same = (head.top(), head.h, head.s) == (c.top(), c.h, c.s);
            if same && u64::from(n) * points < group_points {
                groups[row + 1] = n + 1;
                open = Some((row, n + 1));
                continue;
            }
        }
        open = Some((groups.len(), 1));
        groups.extend_from_slice(&[ci as u32, 1, 0, c.h, c.top(), c.s, 0, c.s]);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every level sg-core allows fits the 5-bit level field without touching the side bit, and
    /// the fields come back unchanged at the extremes of the 56-bit link.
    #[test]
    fn node_words_round_trip() {
        for level in 0..=sg_core::MAX_LEVEL {
            for side in [0, 1] {
                for link in [0u64, 1, 0xff, 1 << 31, (1 << 32) + 5, (1 << (64 - LINK_SHIFT)) - 1] {
                    let w = node_word(Kind { level, side }, link);
                    assert_eq!((node_level(w), node_side(w), node_link(w)), (level, side, link));
                    assert_eq!(node_bits(w), level.saturating_sub(1));
                }
            }
        }
    }

    /// The host's layout constants are the kernels' (`#define`s in the embedded sources).
    #[test]
    fn layout_constants_match_the_kernel_sources() {
        let source = |name: &str| {
            cuda_kernels::embedded_modules().iter().find(|m| m.name == name).expect("embedded module").source
        };
        let eval = source("sg/eval/f64_generic");
        for define in [
            format!("#define SG_LEVEL_MASK {}u", 31),
            format!("#define SG_SIDE_BIT {SIDE_BIT}u"),
            format!("#define SG_LINK_SHIFT {LINK_SHIFT}"),
            format!("#define SG_NONE 0x{NONE:x}ull"),
            format!("#define SG_GENERIC_MAX_D {}", crate::emulate::GENERIC_MAX_D),
        ] {
            assert!(eval.contains(&define), "sg_evaluate lacks `{define}`");
        }
        let sweep = source("sg/sg_hierarchize");
        assert!(sweep.contains(&format!("#define SG_GROUP_WORDS {GROUP_WORDS}")));
        assert!(sweep.contains(&format!("#define SG_NONE 0x{NONE:x}ull")));
        assert_eq!(sg_core::MAX_DIM, crate::emulate::GENERIC_MAX_D, "the generic kernel covers every d");
    }
}
