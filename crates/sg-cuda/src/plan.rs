//! Launch plans: what one call of evaluation, spvm or hierarchization launches (kernels, grid
//! shapes, shared memory) decided from the configuration, the problem and the occupancy model
//! ([`SmLimits`]), as plain functions the launch code, the emulators and the cost model share.

use crate::config::{EvalConfig, MAX_TEMPLATED_DIM, SpvmConfig};
use crate::error::{Error, Result};
use crate::launch;
use crate::occupancy::SmLimits;

/// Registers per thread of `sg_eval_{f32,f64}_dD_p{1,2,4}` (rows `d = 1..=16`, columns
/// `pt = 1, 2, 4`) and of the generic kernel, from `ptxas -arch=sm_90 -v` (CUDA 12.9) on NVRTC
/// 12.9's PTX (`scripts/ptxas-report.sh --filter sg/eval/`). A count of 255 means ptxas ran out of
/// registers and spilled (f64 at pt 4 from d = 9, and pt 2 at d = 16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalRegisters {
    /// `[d - 1][pt index]`.
    pub templated: [[u32; 3]; MAX_TEMPLATED_DIM],
    /// The generic kernel (any d, one point per thread).
    pub generic: u32,
}

/// The points-per-thread values of the templated kernels, in the column order of
/// [`EvalRegisters::templated`].
pub const EVAL_PTS: [u32; 3] = [1, 2, 4];

/// ptxas's register counts of the f32 evaluation kernels on sm_90.
pub const EVAL_REGISTERS_F32: EvalRegisters = EvalRegisters {
    templated: [
        [32, 32, 36],
        [28, 32, 48],
        [28, 38, 60],
        [32, 44, 72],
        [32, 60, 90],
        [35, 62, 110],
        [51, 70, 122],
        [62, 80, 138],
        [62, 96, 153],
        [64, 104, 163],
        [55, 103, 211],
        [63, 109, 229],
        [69, 117, 218],
        [68, 123, 225],
        [77, 133, 238],
        [80, 159, 253],
    ],
    generic: 32,
};

/// ptxas's register counts of the f64 evaluation kernels on sm_90.
pub const EVAL_REGISTERS_F64: EvalRegisters = EvalRegisters {
    templated: [
        [31, 32, 48],
        [29, 38, 76],
        [32, 55, 96],
        [38, 67, 149],
        [45, 79, 158],
        [52, 95, 188],
        [59, 124, 198],
        [66, 140, 242],
        [80, 138, 255],
        [80, 168, 255],
        [94, 168, 255],
        [102, 176, 255],
        [109, 190, 255],
        [108, 204, 255],
        [123, 252, 255],
        [130, 255, 255],
    ],
    generic: 40,
};

/// ptxas's table for elements of `elem_bytes` bytes (4: f32, else f64).
pub fn eval_registers(elem_bytes: usize) -> &'static EvalRegisters {
    if elem_bytes == 4 { &EVAL_REGISTERS_F32 } else { &EVAL_REGISTERS_F64 }
}

/// Registers per thread at which ptxas has spilled (its per-thread maximum on sm_90).
pub const SPILL_REGISTERS: u32 = 255;

/// Fewest resident warps per SM a default configuration may leave: a quarter of the SM's 64,
/// what the walk's dependent loads (node word, then value gather) need to hide their latency.
pub const MIN_RESIDENT_WARPS: u32 = 16;

/// The points-per-thread decision: among the `pts` whose `regs` do not spill, the one with the
/// most points in flight per SM (resident warps × pt) at `threads` per block, counting only
/// those that keep [`MIN_RESIDENT_WARPS`]; ties go to the smaller pt. When none keeps that many
/// warps, the non-spilling one with the most resident warps; `pt = 1` when all spill.
pub fn pick_points_per_thread(limits: &SmLimits, threads: u32, pts: &[u32], regs: &[u32]) -> u32 {
    let candidates = || {
        pts.iter()
            .zip(regs)
            .filter(|(_, r)| **r < SPILL_REGISTERS)
            .map(|(&pt, &r)| (pt, limits.resident_warps(r, threads, 0)))
    };
    let mut best = (0u32, 0u32);
    for (pt, warps) in candidates().filter(|&(_, w)| w >= MIN_RESIDENT_WARPS) {
        if warps * pt > best.0 {
            best = (warps * pt, pt);
        }
    }
    if best.1 != 0 {
        return best.1;
    }
    let mut most = (0u32, 1u32);
    for (pt, warps) in candidates() {
        if warps > most.0 {
            most = (warps, pt);
        }
    }
    most.1
}

/// The default pt of the templated kernel for dimension `d` and elements of `elem_bytes`
/// bytes at `threads` per block on the H100: [`pick_points_per_thread`] over ptxas's register
/// counts. 1 beyond [`MAX_TEMPLATED_DIM`] (the generic kernel) and for `d = 0`.
pub fn default_points_per_thread(elem_bytes: usize, d: usize, threads: u32) -> u32 {
    if d == 0 || d > MAX_TEMPLATED_DIM {
        return 1;
    }
    let regs = &eval_registers(elem_bytes).templated[d - 1];
    pick_points_per_thread(&SmLimits::H100, threads, &EVAL_PTS, regs)
}

/// Registers per thread of the evaluation kernel a launch uses (ptxas's sm_90 count).
pub fn eval_kernel_registers(elem_bytes: usize, d: usize, pt: u32) -> u32 {
    let table = eval_registers(elem_bytes);
    match EVAL_PTS.iter().position(|&p| p == pt) {
        Some(i) if (1..=MAX_TEMPLATED_DIM).contains(&d) => table.templated[d - 1][i],
        _ => table.generic,
    }
}

/// The trie-staging decision: stage the `trie_bytes` node array in shared memory only when it
/// fits beside the block's other `shared` bytes and costs no resident warps (a block-wide
/// broadcast of a node word from L1 is already cheap; staging pays only when it is free).
pub fn stage_trie(limits: &SmLimits, regs: u32, threads: u32, shared: usize, trie_bytes: usize) -> bool {
    let with = limits.resident_warps(regs, threads, shared + trie_bytes);
    with > 0 && with >= limits.resident_warps(regs, threads, shared)
}

/// The component tile: how many of `ncomp` output components one trie walk accumulates. The
/// first lives in registers, each further one in `pt · threads` shared slots of `elem_bytes`; the
/// tile is the largest that keeps at least half the resident blocks the kernel has without
/// shared accumulators (all components in one walk whenever that holds), and at least 1.
pub fn component_tile(
    limits: &SmLimits,
    regs: u32,
    threads: u32,
    pt: u32,
    elem_bytes: usize,
    ncomp: usize,
) -> u32 {
    let per_comp = pt as usize * threads as usize * elem_bytes;
    let base = limits.resident_blocks(regs, threads, 0);
    if ncomp <= 1 || base == 0 || per_comp == 0 {
        return 1;
    }
    let keep = base.div_ceil(2) as usize;
    // The most shared bytes per block that still leave `keep` blocks resident.
    let per_block = (limits.shared_per_sm / keep) / limits.shared_unit * limits.shared_unit;
    let budget = per_block.saturating_sub(limits.shared_reserved_per_block).min(limits.shared_per_block);
    let extra = budget / per_comp;
    (1 + extra).min(ncomp).min(u32::MAX as usize) as u32
}

/// One evaluation call's launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalPlan {
    /// Points per thread of the kernel (1 for the generic kernel).
    pub pt: u32,
    /// Thread blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Components per trie walk.
    pub ctile: u32,
    /// The trie is staged in shared memory.
    pub staged: bool,
    /// Dynamic shared memory per block: staged nodes, then the accumulators.
    pub shared_bytes: usize,
    /// Registers per thread the plan assumed.
    pub regs: u32,
}

impl EvalPlan {
    /// Trie walks per point: `⌈ncomp / ctile⌉`.
    pub fn walks(&self, ncomp: usize) -> usize {
        ncomp.div_ceil(self.ctile.max(1) as usize)
    }

    /// Shared bytes of the accumulators alone.
    pub fn accumulator_bytes(&self, elem_bytes: usize) -> usize {
        (self.ctile as usize - 1) * self.pt as usize * self.threads as usize * elem_bytes
    }
}

/// The plan of one evaluation of `m` points of dimension `d` with `ncomp` components over a trie
/// of `trie_bytes`, for a kernel of `regs` registers per thread (`None`: ptxas's sm_90 count).
///
/// # Errors
/// [`Error::Config`] for a configuration `validate` rejects; [`Error::Shape`] past the grid
/// limit.
pub fn plan_eval(
    cfg: &EvalConfig,
    elem_bytes: usize,
    (d, m, ncomp): (usize, usize, usize),
    trie_bytes: usize,
    regs: Option<u32>,
    limits: &SmLimits,
) -> Result<EvalPlan> {
    cfg.validate()?;
    let pt = cfg.pt_for(elem_bytes, d);
    let threads = cfg.block_size;
    let regs = regs.unwrap_or_else(|| eval_kernel_registers(elem_bytes, d, pt));
    let ctile = component_tile(limits, regs, threads, pt, elem_bytes, ncomp);
    let acc = (ctile as usize - 1) * pt as usize * threads as usize * elem_bytes;
    let staged = cfg.stage_trie && stage_trie(limits, regs, threads, acc, trie_bytes);
    let per_block = threads as usize * pt as usize;
    let blocks = launch::grid_x(m.div_ceil(per_block), &format!("evaluation of {m} points"))?;
    let shared_bytes = acc + if staged { trie_bytes } else { 0 };
    if shared_bytes > limits.shared_per_block {
        return Err(Error::Config(format!(
            "evaluation needs {shared_bytes} bytes of shared memory per block"
        )));
    }
    Ok(EvalPlan { pt, blocks, threads, ctile, staged, shared_bytes, regs })
}

/// Fewest selected rows one spvm block sums: the partial sums it writes and the reduction reads
/// back cost `2 / rows` of the matrix traffic, under 4 % from here.
pub const SPVM_MIN_ROWS_PER_CHUNK: usize = 64;

/// Most blocks of the grid-stride reduction of spvm's partial sums (8 per SM on the H100).
pub const REDUCE_MAX_BLOCKS: usize = 1056;

/// Largest `gridDim.y`.
const MAX_GRID_Y: usize = 65535;

/// One spvm call's launches: a grid of `col_blocks × chunks` blocks, block `(x, y)` summing the
/// selected rows `y · rows_per_chunk ..` for its columns; with more than one chunk, each writes
/// a partial `y` and a second kernel adds the partials in chunk order (deterministic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpvmPlan {
    /// Blocks across the columns.
    pub col_blocks: u32,
    /// Row chunks (`gridDim.y`).
    pub chunks: u32,
    /// Selected rows per chunk (the last may hold fewer).
    pub rows_per_chunk: u32,
}

impl SpvmPlan {
    /// Kernel launches: 1, or 2 with the reduction.
    pub fn launches(&self) -> u32 {
        if self.chunks > 1 { 2 } else { 1 }
    }

    /// Thread blocks of the product kernel.
    pub fn blocks(&self) -> u64 {
        u64::from(self.col_blocks) * u64::from(self.chunks)
    }
}

/// The plan of `y = Σ x[i] a[ix[i], ..]` over `nsel` selected rows and `p` columns: enough row
/// chunks that the grid fills every SM with the blocks it holds at once (for a kernel of `regs`
/// registers), no chunk below [`SPVM_MIN_ROWS_PER_CHUNK`] rows.
///
/// # Errors
/// [`Error::Shape`] past the grid limit.
pub fn plan_spvm(
    cfg: &SpvmConfig,
    elem_bytes: usize,
    p: usize,
    nsel: usize,
    regs: u32,
    limits: &SmLimits,
) -> Result<SpvmPlan> {
    let per_block = cfg.block_size as usize * cfg.outputs_per_thread as usize;
    let col_blocks = launch::grid_x(p.div_ceil(per_block), &format!("spvm of {p} columns"))?;
    let smem = cfg.shared_bytes_for(elem_bytes) as usize;
    let resident = limits.resident_blocks(regs, cfg.block_size, smem).max(1) as usize;
    let target = limits.sm_count as usize * resident;
    let wanted = target.div_ceil(col_blocks.max(1) as usize);
    let most = nsel.div_ceil(SPVM_MIN_ROWS_PER_CHUNK).clamp(1, MAX_GRID_Y);
    let chunks = wanted.clamp(1, most);
    let rows_per_chunk = nsel.div_ceil(chunks).max(1);
    let chunks = nsel.div_ceil(rows_per_chunk).max(1);
    let rows_per_chunk =
        u32::try_from(rows_per_chunk).map_err(|_| Error::Shape(format!("spvm over {nsel} selected rows")))?;
    Ok(SpvmPlan { col_blocks, chunks: chunks as u32, rows_per_chunk })
}

/// Registers per thread of the sweep kernels (ptxas, sm_90: 36 to 40; the largest).
pub const SWEEP_REGISTERS: u32 = 40;

/// Work groups a sweep launch needs to fill the device: every SM holding as many sweep blocks of
/// `block_size` threads as its registers and warps allow (792 on the H100 at 256 threads).
pub fn sweep_min_groups(limits: &SmLimits, block_size: u32) -> u64 {
    u64::from(limits.sm_count) * u64::from(limits.resident_blocks(SWEEP_REGISTERS, block_size, 0).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: SmLimits = SmLimits::H100;

    #[test]
    fn points_per_thread_maximises_points_in_flight_without_spills() {
        // 40/48/80 registers: 48, 40 and 24 resident warps: 48, 80 and 96 points in flight.
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[40, 48, 80]), 4);
        // pt 4 spills; pt 1 and 2 tie at 64 points in flight: the smaller wins.
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[32, 64, 255]), 1);
        // pt 2 at 148 registers keeps 12 warps (< 16): pt 1.
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[70, 148, 255]), 1);
        // Everything spills: pt 1.
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[255, 255, 255]), 1);
        // Nothing keeps 16 warps (f64, d = 16): the non-spilling one with the most warps.
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[130, 255, 255]), 1);
        assert_eq!(pick_points_per_thread(&H, 128, &EVAL_PTS, &[255, 140, 200]), 2);
    }

    /// No default evaluation configuration spills (issue 17), and every default keeps the warp
    /// floor where any instantiation of its (type, d) does (all but f64 at d = 16: 12 warps).
    #[test]
    fn default_points_per_thread_never_spills() {
        for elem in [4usize, 8] {
            for d in 1..=MAX_TEMPLATED_DIM {
                let pt = default_points_per_thread(elem, d, 128);
                let regs = eval_kernel_registers(elem, d, pt);
                assert!(regs < SPILL_REGISTERS, "elem {elem} d {d} pt {pt}: {regs} registers");
                let table = &eval_registers(elem).templated[d - 1];
                let reachable = table
                    .iter()
                    .any(|&r| r < SPILL_REGISTERS && H.resident_warps(r, 128, 0) >= MIN_RESIDENT_WARPS);
                let warps = H.resident_warps(regs, 128, 0);
                assert!(
                    warps >= MIN_RESIDENT_WARPS || !reachable,
                    "elem {elem} d {d} pt {pt}: {warps} warps"
                );
            }
            assert_eq!(default_points_per_thread(elem, MAX_TEMPLATED_DIM + 1, 128), 1);
        }
    }

    #[test]
    fn staging_only_when_it_costs_no_warps() {
        // 64 registers, 128 threads: 8 blocks (32 warps) by registers; 8 blocks of 20 KB fit the
        // 228 KB, 8 blocks of 40 KB do not.
        assert!(stage_trie(&H, 64, 128, 0, 20 * 1024));
        assert!(!stage_trie(&H, 64, 128, 0, 40 * 1024));
        // Warp-bound at 32 registers (16 blocks): 12 KB each still fits, 14 KB does not.
        assert!(stage_trie(&H, 32, 128, 0, 12 * 1024));
        assert!(!stage_trie(&H, 32, 128, 0, 14 * 1024));
        // Past the per-block maximum: never.
        assert!(!stage_trie(&H, 255, 128, 0, 228 * 1024));
        // The accumulators count too.
        assert!(!stage_trie(&H, 64, 128, 20 * 1024, 8 * 1024));
    }

    #[test]
    fn component_tiles_keep_half_the_blocks() {
        assert_eq!(component_tile(&H, 64, 128, 4, 4, 1), 1);
        assert_eq!(component_tile(&H, 64, 128, 4, 4, 7), 7);
        for (regs, threads, pt, elem) in [(64u32, 128u32, 4u32, 8usize), (32, 256, 1, 4), (111, 256, 4, 8)] {
            let tile = component_tile(&H, regs, threads, pt, elem, 100_000);
            assert!((1..100_000).contains(&tile));
            let acc = (tile as usize - 1) * (pt * threads) as usize * elem;
            let next = acc + (pt * threads) as usize * elem;
            let base = H.resident_blocks(regs, threads, 0);
            assert!(2 * H.resident_blocks(regs, threads, acc) >= base, "{regs} {threads} {pt}");
            assert!(2 * H.resident_blocks(regs, threads, next) < base, "the tile is the largest");
        }
    }

    #[test]
    fn eval_plan_is_one_launch_covering_every_point() {
        let cfg = EvalConfig::default();
        for (d, m, ncomp) in [(4usize, 1usize, 1usize), (4, 1_000_003, 7), (10, 97, 1), (20, 33, 3)] {
            let plan = plan_eval(&cfg, 8, (d, m, ncomp), 4096, None, &H).unwrap();
            assert!(plan.blocks as usize * plan.pt as usize * plan.threads as usize >= m);
            assert_eq!(plan.walks(ncomp), 1, "d {d} ncomp {ncomp}");
            assert!(plan.shared_bytes <= H.shared_per_block);
        }
        let never = EvalConfig { stage_trie: false, ..cfg };
        assert!(!plan_eval(&never, 8, (4, 10, 1), 64, None, &H).unwrap().staged);
        assert!(plan_eval(&cfg, 8, (4, 10, 1), 64, None, &H).unwrap().staged);
    }

    /// The case: p = 10k columns gave 20 blocks; the row chunks fill all 132 SMs.
    #[test]
    fn spvm_plan_fills_the_device() {
        let cfg = SpvmConfig::default();
        let plan = plan_spvm(&cfg, 8, 10_000, 10_000, 32, &H).unwrap();
        assert_eq!(plan.col_blocks, 20);
        let resident = H.resident_blocks(32, cfg.block_size, cfg.shared_bytes_for(8) as usize);
        assert!(plan.blocks() >= u64::from(H.sm_count * resident), "{plan:?}");
        assert!(plan.rows_per_chunk as usize >= SPVM_MIN_ROWS_PER_CHUNK);
        assert!(plan.chunks as usize * plan.rows_per_chunk as usize >= 10_000);
        assert_eq!(plan.launches(), 2);
        // Few rows: one chunk, one launch.
        let small = plan_spvm(&cfg, 8, 10_000, 64, 32, &H).unwrap();
        assert_eq!((small.chunks, small.launches()), (1, 1));
        // Wide enough to fill the device by columns alone: one chunk.
        let wide = plan_spvm(&cfg, 4, 1 << 22, 100_000, 32, &H).unwrap();
        assert_eq!(wide.chunks, 1);
        // No rows: one empty chunk.
        assert_eq!(plan_spvm(&cfg, 4, 7, 0, 32, &H).unwrap().chunks, 1);
    }

    #[test]
    fn sweep_fills_the_h100() {
        // 40 registers at 256 threads: 6 resident blocks per SM.
        assert_eq!(sweep_min_groups(&H, 256), 132 * 6);
    }
}

#[cfg(test)]
mod defaults_table {
    use super::*;

    /// The default pt per (type, d) as the book's table and `scripts/ptxas-report.py`
    /// (`SG_EVAL_DEFAULT_PT`) state them: they must change together with the register table.
    #[test]
    fn defaults_match_the_book() {
        let f32_pts: Vec<u32> = (1..=16).map(|d| default_points_per_thread(4, d, 128)).collect();
        let f64_pts: Vec<u32> = (1..=16).map(|d| default_points_per_thread(8, d, 128)).collect();
        assert_eq!(f32_pts, [4, 4, 4, 4, 4, 2, 4, 2, 2, 1, 1, 1, 2, 2, 1, 1]);
        assert_eq!(f64_pts, [4, 2, 4, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    }
}
