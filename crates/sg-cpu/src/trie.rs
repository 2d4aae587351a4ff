//! The blocks of a grid as a trie over their per-dimension "kinds", for evaluation.
//!
//! A block's basis product at a point is `Π_t φ_t(x_t)` and its in-block position is built
//! dimension by dimension (`k = k · 2^(l_t − 1) + cell_t`, dimension 0 most significant). Blocks
//! that agree in their first dimensions share that prefix of the product and of the position, so
//! walking the blocks as a trie in preorder computes each prefix once: about one multiply and one
//! shift per block and point, instead of `d` of each (the pseudo-recursive idea).

use sg_core::GridSpec;
use sg_core::alloc::{checked_len, try_with_capacity};

use crate::error::{Error, Result};

/// What a block is in one dimension: a boundary function or a hat level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    /// Boundary function `1 − x` (side 0) or `x` (side 1); contributes no position bits.
    Boundary(u8),
    /// Hat functions of public level `L >= 1`; contributes `L − 1` position bits.
    Hat(u32),
}

impl Kind {
    /// Position bits this kind adds.
    pub(crate) fn bits(self) -> u32 {
        match self {
            Kind::Boundary(_) => 0,
            Kind::Hat(l) => l - 1,
        }
    }
}

/// One trie node in preorder.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    /// Dimension (= depth).
    pub(crate) t: u32,
    /// Index of the kind in the per-dimension kind list of the [`Trie`].
    pub(crate) kind: u32,
    /// Position bits of the kind.
    pub(crate) bits: u32,
    /// Offset of the block (leaves only, at depth `d − 1`).
    pub(crate) offset: u64,
}

/// The trie of a grid's blocks.
#[derive(Debug, Clone)]
pub(crate) struct Trie {
    pub(crate) d: usize,
    /// Kinds present in each dimension; node kinds index into these.
    pub(crate) kinds: Vec<Vec<Kind>>,
    /// All nodes in preorder.
    pub(crate) nodes: Vec<Node>,
    /// Number of blocks (leaves).
    pub(crate) blocks: usize,
}

impl Trie {
    /// The trie of `spec`'s blocks. Every buffer's size is known from the block count before
    /// it is filled, and reserved fallibly.
    pub(crate) fn new(spec: &GridSpec) -> Result<Self> {
        let d = spec.dim();
        let table = spec.block_table()?;
        let nb = table.len();
        let what = "evaluation plan (trie of blocks)";
        // One row of kinds per block, flat: no allocation per block.
        let mut keys: Vec<Kind> = try_with_capacity(what, checked_len::<Kind>(what, nb as u64, d)?)?;
        for b in 0..nb {
            let (levels, sides) = (table.levels(b), table.sides(b));
            let level_sum: u32 = levels.iter().map(|&l| l.saturating_sub(1)).sum();
            if level_sum > 31 {
                return Err(Error::BlockTooLarge { level_sum });
            }
            keys.extend((0..d).map(|t| match levels[t] {
                0 => Kind::Boundary(((sides >> t) & 1) as u8),
                l => Kind::Hat(l),
            }));
        }
        let key = |b: usize| &keys[b * d..(b + 1) * d];
        // Lexicographic order of the kind vectors is the trie's preorder.
        let mut order: Vec<usize> = try_with_capacity(what, nb)?;
        order.extend(0..nb);
        order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
        let mut kinds: Vec<Vec<Kind>> = vec![Vec::new(); d];
        for b in 0..nb {
            for (t, k) in key(b).iter().enumerate() {
                if !kinds[t].contains(k) {
                    kinds[t].push(*k);
                }
            }
        }
        kinds.iter_mut().for_each(|k| k.sort());
        // The first dimension where a block leaves the previous one starts its new nodes.
        let shared = |i: usize| {
            if i == 0 {
                0
            } else {
                key(order[i - 1]).iter().zip(key(order[i])).take_while(|(a, b)| a == b).count()
            }
        };
        let count: usize = (0..nb).map(|i| d - shared(i)).sum();
        let mut nodes = try_with_capacity(what, count)?;
        for (i, &b) in order.iter().enumerate() {
            for t in shared(i)..d {
                let kind = kinds[t].binary_search(&key(b)[t]).expect("kind listed") as u32;
                let leaf = t == d - 1;
                nodes.push(Node {
                    t: t as u32,
                    kind,
                    bits: key(b)[t].bits(),
                    offset: if leaf { table.offset(b) } else { 0 },
                });
            }
        }
        Ok(Trie { d, kinds, nodes, blocks: nb })
    }

    /// Ranges of `nodes` that start at nodes of depth at most `depth`, so that each range is a
    /// run of whole subtrees (for splitting the blocks between threads).
    pub(crate) fn split_points(&self, depth: u32) -> Vec<usize> {
        let mut cuts: Vec<usize> =
            self.nodes.iter().enumerate().filter(|(_, n)| n.t <= depth).map(|(i, _)| i).collect();
        cuts.push(self.nodes.len());
        cuts
    }

    /// Nodes on the path from the root to the parent of `nodes[i]` (one per depth below it).
    pub(crate) fn ancestors(&self, i: usize) -> Vec<Node> {
        let mut path = Vec::new();
        let mut want = self.nodes[i].t;
        for j in (0..i).rev() {
            if want == 0 {
                break;
            }
            if self.nodes[j].t == want - 1 {
                path.push(self.nodes[j]);
                want -= 1;
            }
        }
        path.reverse();
        path
    }
}
