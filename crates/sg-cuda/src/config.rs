//! Launch parameters of the kernels (the thesis's bs and pt, §5.4.2), with defaults chosen from
//! the dimension and the device.

use crate::error::{Error, Result};

/// Largest `d` with a register-resident (templated) evaluation kernel; beyond it the generic
/// kernel runs.
pub const MAX_TEMPLATED_DIM: usize = 16;

/// Launch parameters of batched evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalConfig {
    /// Threads per block (the thesis's bs): a multiple of 32, at most 1024. The register-heavy
    /// instantiations (large d at pt 2 or 4 use up to 255 registers per thread on sm_90) run at
    /// most 256 threads per block; a larger request is an [`Error::Config`] at launch.
    pub block_size: u32,
    /// Points per thread (pt): 1, 2 or 4; `None` picks by element type and dimension from the
    /// occupancy model (see [`EvalConfig::points_per_thread_for`]). The generic kernel (d > 16)
    /// always uses 1.
    pub points_per_thread: Option<u32>,
    /// Allow staging the trie in shared memory (`true`, the default): it is staged when it fits
    /// and costs no resident warps ([`crate::plan::stage_trie`]); `false` always reads it from
    /// global memory through the caches.
    pub stage_trie: bool,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig { block_size: 128, points_per_thread: None, stage_trie: true }
    }
}

impl EvalConfig {
    /// The default pt for dimension `d` and elements of `elem_bytes` bytes at `block_size`
    /// threads: chosen by occupancy from ptxas's register counts for sm_90 (the most points in
    /// flight per SM among the instantiations that neither spill nor drop below 16 resident
    /// warps; see [`crate::plan::pick_points_per_thread`] and the table in the book). The thesis
    /// found the best pt falling with d and predictable from the register count; this makes that
    /// prediction explicit.
    pub fn points_per_thread_for(elem_bytes: usize, d: usize, block_size: u32) -> u32 {
        crate::plan::default_points_per_thread(elem_bytes, d, block_size)
    }

    /// The pt this configuration uses at dimension `d` for elements of `elem_bytes` bytes.
    pub fn pt_for(&self, elem_bytes: usize, d: usize) -> u32 {
        if d > MAX_TEMPLATED_DIM {
            1
        } else {
            self.points_per_thread
                .unwrap_or_else(|| Self::points_per_thread_for(elem_bytes, d, self.block_size))
        }
    }

    /// [`pt_for`](Self::pt_for) for element type `T`.
    pub fn pt<T>(&self, d: usize) -> u32 {
        self.pt_for(size_of::<T>(), d)
    }

    /// Thread blocks of one evaluation launch for `m` points of dimension `d` and element type
    /// `T`: each block covers `block_size · pt` consecutive points (the kernel's row
    /// `b · blockDim.x · PT + q · blockDim.x + threadIdx.x`), so `⌈m / (block_size · pt)⌉`.
    ///
    /// # Errors
    /// [`Error::Shape`] when that exceeds CUDA's grid limit of 2^31 − 1 blocks.
    pub fn blocks<T>(&self, d: usize, m: usize) -> Result<u32> {
        let per_block = self.block_size as usize * self.pt::<T>(d) as usize;
        crate::launch::grid_x(m.div_ceil(per_block.max(1)), &format!("evaluation of {m} points"))
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`] for a block size that is not a multiple of 32 in 32..=1024 or a pt other
    /// than 1, 2, 4.
    pub fn validate(&self) -> Result<()> {
        check_block(self.block_size)?;
        if let Some(pt) = self.points_per_thread
            && !matches!(pt, 1 | 2 | 4)
        {
            return Err(Error::Config(format!("points per thread {pt} (1, 2 or 4)")));
        }
        Ok(())
    }
}

/// Launch parameters of hierarchization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepConfig {
    /// Threads per block (one block per work group).
    pub block_size: u32,
    /// Most points per work group: long chains are split by `hi` (then `lo`) ranges, short ones
    /// merged. Uploading shrinks the target (down to
    /// [`MIN_GROUP_POINTS`](crate::tables::MIN_GROUP_POINTS)) for grids that would otherwise give
    /// a sweep fewer blocks than the device holds at once.
    pub group_points: u64,
}

impl Default for SweepConfig {
    fn default() -> Self {
        SweepConfig { block_size: 256, group_points: crate::tables::DEFAULT_GROUP_POINTS }
    }
}

impl SweepConfig {
    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`] for a bad block size or `group_points == 0`.
    pub fn validate(&self) -> Result<()> {
        check_block(self.block_size)?;
        if self.group_points == 0 {
            return Err(Error::Config("sweep group size 0".into()));
        }
        Ok(())
    }
}

/// Launch parameters of spvm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpvmConfig {
    /// Threads per block.
    pub block_size: u32,
    /// Outputs per thread: 1, 2 or 4.
    pub outputs_per_thread: u32,
}

impl Default for SpvmConfig {
    fn default() -> Self {
        SpvmConfig { block_size: 256, outputs_per_thread: 2 }
    }
}

impl SpvmConfig {
    /// Dynamic shared memory of one block for element type `T`: the staged coefficients (a `T`
    /// per thread, padded to 8 bytes) followed by the staged row indices (a `u64` per thread),
    /// the layout `sg_spvm` indexes.
    pub fn shared_bytes<T>(&self) -> u32 {
        self.shared_bytes_for(size_of::<T>())
    }

    /// [`shared_bytes`](Self::shared_bytes) for elements of `elem_bytes` bytes.
    pub fn shared_bytes_for(&self, elem_bytes: usize) -> u32 {
        let bs = self.block_size as usize;
        ((elem_bytes * bs).next_multiple_of(8) + 8 * bs) as u32
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::Config`].
    pub fn validate(&self) -> Result<()> {
        check_block(self.block_size)?;
        if !matches!(self.outputs_per_thread, 1 | 2 | 4) {
            return Err(Error::Config(format!("outputs per thread {} (1, 2 or 4)", self.outputs_per_thread)));
        }
        Ok(())
    }
}

fn check_block(bs: u32) -> Result<()> {
    if bs == 0 || bs > 1024 || !bs.is_multiple_of(32) {
        return Err(Error::Config(format!("block size {bs} (a multiple of 32 up to 1024)")));
    }
    Ok(())
}
