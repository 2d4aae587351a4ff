//! The GPU dispatcher: which kernel scans `G` rows of `N` elements of a type.
//!
//! | case | kernel | why |
//! |---|---|---|
//! | `G = 1` | [`Kernel::Lookback`] | single pass, 2N memory traffic |
//! | `N <= 32` | [`Kernel::LookbackRows`] | many rows per tile; a warp per row would idle |
//! | `N <= 32 P/4` (128 for 4-byte types) | [`Kernel::RowsWarpSmall`] | one warp per row, one chunk |
//! | `N <= 8 · 32 P` (4096 for 4-byte types) | [`Kernel::RowsWarpLarge`] | one warp per row, a few chunks |
//! | `N` larger and `G >= 4 · SMs` | [`Kernel::RowsBlock`] | one block per row fills the GPU |
//! | otherwise | [`Kernel::LookbackRows`] | few long rows: tiles across rows, look-back carries |
//!
//! The thresholds are **provisional** (reasoned from the thesis's small-size regime and the
//! tile sizes, not yet measured on an H100); the book's "GPU measurements pending" table lists
//! what must be measured to settle them.
//!
//! Overrides: [`ScanOptions::kernel`] in code, or the environment variable
//! `HETKIT_SCAN_KERNEL=lookback|lookback_rows|warp_s|warp_l|block` for a whole process
//! (benchmarks, experiments). [`ScanOptions::network`] picks the warp network for the `f32` Add
//! study instantiations.

use super::emulate::Network;

/// A GPU scan kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Single-pass decoupled look-back over the whole array (`scan_lookback_*`).
    Lookback,
    /// Look-back with heads at row starts (`scan_lookback_rows_*`): any `N`, any `G`.
    LookbackRows,
    /// One warp per row, chunks of `32 · P/4` (`scan_rows_warp_s_*`).
    RowsWarpSmall,
    /// One warp per row, chunks of `32 · P` (`scan_rows_warp_l_*`).
    RowsWarpLarge,
    /// One block per row (`scan_rows_block_*`).
    RowsBlock,
}

impl Kernel {
    /// Parses the names used by `HETKIT_SCAN_KERNEL`.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Some(match name {
            "lookback" => Kernel::Lookback,
            "lookback_rows" => Kernel::LookbackRows,
            "warp_s" => Kernel::RowsWarpSmall,
            "warp_l" => Kernel::RowsWarpLarge,
            "block" => Kernel::RowsBlock,
            _ => return None,
        })
    }
}

/// Options of a GPU scan; `Default` lets the dispatcher decide.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// Force a kernel family (must suit the layout: `Lookback` only for one array).
    pub kernel: Option<Kernel>,
    /// Warp network; anything but Kogge-Stone exists only for `f32` Add (study instantiations).
    pub network: Network,
}

/// Items per thread of the large kernels for elements of `bytes` bytes.
pub fn items_per_thread(bytes: usize) -> usize {
    if bytes > 4 { 8 } else { 16 }
}

/// The dispatcher's choice for `rows` rows of `row_len` elements of `bytes` bytes on a GPU
/// with `sm_count` multiprocessors (before overrides).
pub fn choose(rows: usize, row_len: usize, bytes: usize, sm_count: u32) -> Kernel {
    let p = items_per_thread(bytes);
    if rows <= 1 {
        Kernel::Lookback
    } else if row_len <= 32 {
        Kernel::LookbackRows
    } else if row_len <= 32 * p / 4 {
        Kernel::RowsWarpSmall
    } else if row_len <= 8 * 32 * p {
        Kernel::RowsWarpLarge
    } else if rows >= 4 * sm_count as usize {
        Kernel::RowsBlock
    } else {
        Kernel::LookbackRows
    }
}

/// [`choose`], then the `HETKIT_SCAN_KERNEL` environment override, then `opts.kernel`.
pub fn resolve(rows: usize, row_len: usize, bytes: usize, sm_count: u32, opts: &ScanOptions) -> Kernel {
    let env = std::env::var("HETKIT_SCAN_KERNEL").ok().and_then(|s| Kernel::from_name(&s));
    opts.kernel.or(env).unwrap_or_else(|| choose(rows, row_len, bytes, sm_count))
}
