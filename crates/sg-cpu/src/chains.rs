//! Chains ("poles" of blocks): the blocks that differ only in their level in one dimension.
//!
//! In dimension `t`, a block's in-block position splits as `k = (hi · 2^(L−1) + p) · 2^s + lo`
//! with `p` the position in dimension `t`, `s` the bits of the dimensions after `t` and `hi` those
//! before it. `hi` and `lo` mean the same thing in every block of a chain, so for fixed `(hi, lo)`
//! the chain holds one 1-D hierarchical pole, and for fixed `hi` the `2^s` values of `lo` are
//! contiguous: the hierarchization update is a vector operation over them.

use std::collections::HashMap;

use sg_core::GridSpec;

use crate::error::{Error, Result};

/// Blocks of one chain in one dimension.
#[derive(Debug, Clone)]
pub(crate) struct Chain {
    /// Bits of the in-block position below dimension `t` (`lo` has `2^s` values).
    pub(crate) s: u32,
    /// Bits above dimension `t` (`hi` has `2^h` values).
    pub(crate) h: u32,
    /// Offsets of the boundary blocks (`l_t = 0`) at `x_t = 0` and `x_t = 1`, if present.
    pub(crate) boundary: [Option<u64>; 2],
    /// `offsets[L − 1]`: offset of the block with public level `L` in dimension `t`.
    pub(crate) offsets: Vec<u64>,
}

impl Chain {
    /// Offset of the first value of pole `(hi, lo = 0)` at 1-D point `(level, index)` (public
    /// convention), or `None` for a boundary point the grid does not store.
    #[inline]
    pub(crate) fn point_base(&self, hi: u64, level: u32, index: u32) -> Option<u64> {
        if level == 0 {
            return self.boundary[index as usize].map(|off| off + (hi << self.s));
        }
        let p = (index >> 1) as u64;
        Some(self.offsets[level as usize - 1] + (((hi << (level - 1)) + p) << self.s))
    }

    /// Highest interior level of the chain (0 when it has only boundary blocks).
    pub(crate) fn top(&self) -> u32 {
        self.offsets.len() as u32
    }
}

/// The level vector without dimension `t`: packed 5 bits a level when it fits (no allocation,
/// cheap hashing), else the levels themselves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ChainKey {
    Packed(u128),
    Levels(Vec<u32>),
}

impl ChainKey {
    fn new(levels: &[u32], t: usize) -> Self {
        if levels.len() * 5 <= 128 && levels.iter().all(|&l| l < 32) {
            let packed = levels
                .iter()
                .enumerate()
                .filter(|&(u, _)| u != t)
                .fold(0u128, |k, (_, &l)| (k << 5) | l as u128);
            ChainKey::Packed(packed)
        } else {
            let mut v = levels.to_vec();
            v[t] = 0;
            ChainKey::Levels(v)
        }
    }
}

/// Chains of every dimension.
pub(crate) fn build(spec: &GridSpec) -> Result<Vec<Vec<Chain>>> {
    let d = spec.dim();
    let table = spec.block_table();
    for b in 0..table.len() {
        let level_sum: u32 = table.levels(b).iter().map(|&l| l.saturating_sub(1)).sum();
        if level_sum > 31 {
            return Err(Error::BlockTooLarge { level_sum });
        }
    }
    let mut all = Vec::with_capacity(d);
    for t in 0..d {
        // Key: the levels and sides of the other dimensions.
        let mut by_key: HashMap<(ChainKey, u64), Chain> = HashMap::with_capacity(table.len());
        for b in 0..table.len() {
            let levels = table.levels(b);
            let sides = table.sides(b);
            let key_levels = ChainKey::new(levels, t);
            let bits = |range: std::ops::Range<usize>| -> u32 {
                levels[range].iter().map(|&l| l.saturating_sub(1)).sum()
            };
            let chain = by_key.entry((key_levels, sides & !(1u64 << t))).or_insert_with(|| Chain {
                s: bits(t + 1..d),
                h: bits(0..t),
                boundary: [None, None],
                offsets: Vec::new(),
            });
            let (lt, off) = (levels[t], table.offset(b));
            if lt == 0 {
                chain.boundary[((sides >> t) & 1) as usize] = Some(off);
            } else {
                let i = lt as usize - 1;
                if chain.offsets.len() <= i {
                    chain.offsets.resize(i + 1, u64::MAX);
                }
                chain.offsets[i] = off;
            }
        }
        let mut chains: Vec<Chain> = by_key.into_values().filter(|c| c.top() > 0).collect();
        // Grids are downward closed: a chain holding level L holds every level below it.
        debug_assert!(chains.iter().all(|c| c.offsets.iter().all(|&o| o != u64::MAX)));
        // Long chains first, so rayon starts the big tasks early.
        chains.sort_by_key(|c| std::cmp::Reverse((c.top(), c.s + c.h)));
        all.push(chains);
    }
    Ok(all)
}
