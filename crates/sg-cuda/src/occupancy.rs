//! The occupancy model the launch choices use: how many warps of a kernel one streaming
//! multiprocessor holds at once, from its registers per thread, its block size and its shared
//! memory per block (the CUDA occupancy calculator's rules). The H100 (sm_90) limits are the
//! default; [`SmLimits::for_device`] takes the shared memory sizes from the device.

use cuda_kernels::DeviceProps;

/// Per-SM resource limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmLimits {
    /// Registers per register-file partition (four partitions per SM, warps bound to one each).
    pub regs_per_partition: u32,
    /// Register-file partitions per SM.
    pub partitions: u32,
    /// Registers are allocated per warp in units of this many.
    pub reg_unit: u32,
    /// Resident warps per SM.
    pub max_warps: u32,
    /// Resident blocks per SM.
    pub max_blocks: u32,
    /// Shared memory per SM, bytes.
    pub shared_per_sm: usize,
    /// Shared memory one block may use after opting in, bytes.
    pub shared_per_block: usize,
    /// Shared memory the system reserves per resident block, bytes.
    pub shared_reserved_per_block: usize,
    /// Shared memory is allocated in units of this many bytes.
    pub shared_unit: usize,
    /// Streaming multiprocessors of the device.
    pub sm_count: u32,
}

impl SmLimits {
    /// The H100 SXM (sm_90): 64K registers in four partitions, 228 KB of shared memory per SM
    /// (227 KB per block, 1 KB reserved per block), 64 warps and 32 blocks per SM, 132 SMs.
    pub const H100: SmLimits = SmLimits {
        regs_per_partition: 16384,
        partitions: 4,
        reg_unit: 256,
        max_warps: 64,
        max_blocks: 32,
        shared_per_sm: 228 * 1024,
        shared_per_block: 227 * 1024,
        shared_reserved_per_block: 1024,
        shared_unit: 128,
        sm_count: 132,
    };

    /// The H100's register and warp limits (the same on sm_80 and sm_90) with the device's own
    /// shared memory sizes and SM count.
    pub fn for_device(props: &DeviceProps) -> SmLimits {
        SmLimits {
            shared_per_sm: props.shared_per_sm.max(props.shared_per_block_optin),
            shared_per_block: props.shared_per_block_optin.max(props.shared_per_block),
            sm_count: props.sm_count.max(1),
            ..SmLimits::H100
        }
    }

    /// Resident warps per SM of a kernel using `regs` registers per thread, launched with
    /// `threads` per block and `shared` bytes of shared memory per block; 0 when one block does
    /// not fit (too much shared memory or too many registers).
    pub fn resident_warps(&self, regs: u32, threads: u32, shared: usize) -> u32 {
        self.resident_blocks(regs, threads, shared) * threads.div_ceil(32)
    }

    /// Resident blocks per SM (see [`resident_warps`](Self::resident_warps)).
    pub fn resident_blocks(&self, regs: u32, threads: u32, shared: usize) -> u32 {
        let warps = threads.div_ceil(32).max(1);
        let per_warp = (regs.max(1) * 32).div_ceil(self.reg_unit) * self.reg_unit;
        let by_regs = self.partitions * (self.regs_per_partition / per_warp) / warps;
        let mut blocks = self.max_blocks.min(self.max_warps / warps).min(by_regs);
        if shared > self.shared_per_block {
            return 0;
        }
        if shared > 0 {
            let per_block = (shared + self.shared_reserved_per_block).next_multiple_of(self.shared_unit);
            blocks = blocks.min((self.shared_per_sm / per_block) as u32);
        }
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the CUDA occupancy calculator's figures for sm_90.
    #[test]
    fn resident_warps_match_the_occupancy_calculator() {
        let h = SmLimits::H100;
        // Warp-limited: 32 registers, 128 threads: 16 blocks, 64 warps.
        assert_eq!(h.resident_warps(32, 128, 0), 64);
        // Register-limited: 64 registers: 32 warps (8 blocks of 4 warps).
        assert_eq!(h.resident_warps(64, 128, 0), 32);
        // 255 registers round to 256 per thread: 8 warps.
        assert_eq!(h.resident_warps(255, 128, 0), 8);
        // Shared-limited: 100 KB per block leaves two blocks.
        assert_eq!(h.resident_blocks(32, 128, 100 * 1024), 2);
        // 227 KB is one block; one byte more is none.
        assert_eq!(h.resident_blocks(32, 128, 227 * 1024), 1);
        assert_eq!(h.resident_blocks(32, 128, 227 * 1024 + 1), 0);
        // The block limit: 32 blocks of one warp.
        assert_eq!(h.resident_blocks(16, 32, 0), 32);
    }
}
