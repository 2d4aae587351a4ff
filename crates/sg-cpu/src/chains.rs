//! Chains ("poles" of blocks): the blocks that differ only in their level in one dimension.
//!
//! In dimension `t`, a block's in-block position splits as `k = (hi · 2^(L−1) + p) · 2^s + lo`
//! with `p` the position in dimension `t`, `s` the bits of the dimensions after `t` and `hi` those
//! before it. `hi` and `lo` mean the same thing in every block of a chain, so for fixed `(hi, lo)`
//! the chain holds one 1-D hierarchical pole, and for fixed `hi` the `2^s` values of `lo` are
//! contiguous: the hierarchization update is a vector operation over them.

use rayon::prelude::*;

use sg_core::GridSpec;
use sg_core::alloc::try_with_capacity;

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
/// cheap comparisons), else the levels themselves. Only the other dimensions decide the variant,
/// so all blocks of one chain get the same one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum ChainKey {
    Packed(u128),
    Levels(Vec<u32>),
}

impl ChainKey {
    fn new(levels: &[u32], t: usize) -> Self {
        if levels.len() * 5 <= 128 && levels.iter().enumerate().all(|(u, &l)| u == t || l < 32) {
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
    let table = spec.block_table()?;
    for b in 0..table.len() {
        let level_sum: u32 = table.levels(b).iter().map(|&l| l.saturating_sub(1)).sum();
        if level_sum > 31 {
            return Err(Error::BlockTooLarge { level_sum });
        }
    }
    // Dimensions are independent: one rayon task each.
    (0..d).into_par_iter().map(|t| chains_of_dim(&table, t)).collect()
}

/// The chains of dimension `t`, longest first. The blocks are sorted by (levels and sides of the
/// other dimensions, level in `t`), so each chain is one run, its levels in order.
fn chains_of_dim(table: &sg_core::BlockTable, t: usize) -> Result<Vec<Chain>> {
    let d = table.dim();
    let mut entries: Vec<(ChainKey, u64, u32, usize)> =
        try_with_capacity("hierarchization plan (chains)", table.len())?;
    entries.extend((0..table.len()).map(|b| {
        let levels = table.levels(b);
        (ChainKey::new(levels, t), table.sides(b) & !(1u64 << t), levels[t], b)
    }));
    entries.sort_unstable();
    let mut chains = Vec::new();
    for run in entries.chunk_by(|x, y| x.0 == y.0 && x.1 == y.1) {
        let levels = table.levels(run[0].3);
        let bits = |range: std::ops::Range<usize>| -> u32 {
            levels[range].iter().map(|&l| l.saturating_sub(1)).sum()
        };
        let mut chain =
            Chain { s: bits(t + 1..d), h: bits(0..t), boundary: [None, None], offsets: Vec::new() };
        for &(_, _, lt, b) in run {
            let off = table.offset(b);
            if lt == 0 {
                chain.boundary[((table.sides(b) >> t) & 1) as usize] = Some(off);
            } else {
                let i = lt as usize - 1;
                if chain.offsets.len() <= i {
                    chain.offsets.resize(i + 1, u64::MAX);
                }
                chain.offsets[i] = off;
            }
        }
        if chain.top() > 0 {
            chains.push(chain);
        }
    }
    // Grids are downward closed: a chain holding level L holds every level below it.
    debug_assert!(chains.iter().all(|c| c.offsets.iter().all(|&o| o != u64::MAX)));
    // Long chains first, so rayon starts the big tasks early.
    chains.sort_by_key(|c| std::cmp::Reverse((c.top(), c.s + c.h)));
    Ok(chains)
}
