//! Launches and bytes moved per call of evaluation, spvm and hierarchization, against the floor
//! (every input read once, every output written once): the model behind the table in the book.
//! Bytes count DRAM-level traffic of the streams each kernel reads and writes; the trie, chain and
//! group tables count once per launch (they are small and stay in L2), the grid values once per
//! call for evaluation (the gathers of all points hit the same values, which L2 holds for the
//! grids of interest).

use crate::plan::{EvalPlan, SpvmPlan};
use crate::tables::SweepTable;

/// What one call launches and moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallCost {
    /// Kernel launches.
    pub launches: u64,
    /// Thread blocks over all launches.
    pub blocks: u64,
    /// Bytes moved by the call's kernels.
    pub bytes: u64,
    /// Bytes the operation cannot avoid: its inputs read once, its outputs written once.
    pub floor_bytes: u64,
}

impl CallCost {
    /// `bytes / floor_bytes` (1.0 for an empty call).
    pub fn ratio(&self) -> f64 {
        if self.floor_bytes == 0 { 1.0 } else { self.bytes as f64 / self.floor_bytes as f64 }
    }
}

/// An evaluation's byte floor: every point and output once, every value and the trie once.
fn eval_floor(elem: usize, (d, m, ncomp): (usize, usize, usize), len: u64, trie_bytes: usize) -> u64 {
    let (m, d, ncomp, e) = (m as u64, d as u64, ncomp as u64, elem as u64);
    m * d * e + m * ncomp * e + len * ncomp * e + trie_bytes as u64
}

/// Evaluation of `m` points of dimension `d` with `ncomp` components of `elem` bytes over a grid
/// of `len` points and a trie of `trie_bytes`, launched as `plan` says: one launch; every point
/// read once and every output written once however many component tiles its walks take.
pub fn eval_cost(
    plan: &EvalPlan,
    elem: usize,
    (d, m, ncomp): (usize, usize, usize),
    len: u64,
    trie_bytes: usize,
) -> CallCost {
    let floor = eval_floor(elem, (d, m, ncomp), len, trie_bytes);
    CallCost { launches: 1, blocks: u64::from(plan.blocks), bytes: floor, floor_bytes: floor }
}

/// The design issue 17 replaced: one launch per component, each reading every point, the trie
/// and one component's values, and writing one component of every output.
pub fn eval_cost_per_component(
    plan: &EvalPlan,
    elem: usize,
    (d, m, ncomp): (usize, usize, usize),
    len: u64,
    trie_bytes: usize,
) -> CallCost {
    let floor = eval_floor(elem, (d, m, ncomp), len, trie_bytes);
    let (m, d, nc, e) = (m as u64, d as u64, ncomp as u64, elem as u64);
    // Each launch gathers one component per value, but moves the whole 32-byte sector holding
    // it (or all of the point's values when they are shorter).
    let gathered = nc * len * (nc * e).min(32);
    let bytes = nc * (m * d * e + trie_bytes as u64) + m * nc * e + gathered;
    CallCost { launches: nc, blocks: nc * u64::from(plan.blocks), bytes, floor_bytes: floor }
}

/// spvm over `nsel` selected rows and `p` columns of `elem` bytes launched as `plan` says: the
/// product reads each selected row's `p` values once, every block of a chunk reads that chunk's
/// coefficients and row indices, the partial sums (several chunks) are written and read back once.
pub fn spvm_cost(plan: &SpvmPlan, elem: usize, p: usize, nsel: usize) -> CallCost {
    let (p, nsel, e) = (p as u64, nsel as u64, elem as u64);
    let floor = nsel * p * e + nsel * (e + 8) + p * e;
    let coeffs = nsel * (e + 8) * u64::from(plan.col_blocks);
    let chunks = u64::from(plan.chunks);
    let out = if chunks > 1 { chunks * p * e * 2 + p * e } else { p * e };
    CallCost {
        launches: u64::from(plan.launches()),
        blocks: plan.blocks() + if chunks > 1 { 1 } else { 0 },
        bytes: nsel * p * e + coeffs + out,
        floor_bytes: floor,
    }
}

/// Hierarchization (or dehierarchization) of `len` points with `ncomp` components of `elem`
/// bytes over `tables`: one launch per dimension with one block per work group; each sweep reads
/// every value and writes the interior ones (counted as all), and reads its group and chain rows.
/// The floor is one read and one write of every value: a sweep per dimension is `d` times it,
/// which only fusing dimensions would avoid.
pub fn sweep_cost(tables: &[SweepTable], elem: usize, len: u64, ncomp: usize) -> CallCost {
    let values = len * ncomp as u64 * elem as u64;
    let mut cost = CallCost { launches: 0, blocks: 0, bytes: 0, floor_bytes: 2 * values };
    for t in tables.iter().filter(|t| t.num_groups() > 0) {
        cost.launches += 1;
        cost.blocks += t.num_groups() as u64;
        cost.bytes += 2 * values + 4 * t.groups.len() as u64 + 8 * t.chains.len() as u64;
    }
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EvalConfig, SpvmConfig};
    use crate::occupancy::SmLimits;
    use crate::plan::{plan_eval, plan_spvm};

    const H: SmLimits = SmLimits::H100;

    #[test]
    fn evaluation_is_one_launch_at_the_floor() {
        let shape = (4usize, 2_000_000usize, 8usize);
        let plan = plan_eval(&EvalConfig::default(), 8, shape, 19_040, None, &H).unwrap();
        let now = eval_cost(&plan, 8, shape, 7_667_713, 19_040);
        assert_eq!((now.launches, now.ratio()), (1, 1.0));
        let before = eval_cost_per_component(&plan, 8, shape, 7_667_713, 19_040);
        assert_eq!(before.launches, 8);
        assert!(before.ratio() > 2.0, "{before:?}");
        // A scalar grid lost nothing by the change.
        let scalar = (4usize, 2_000_000usize, 1usize);
        let p1 = plan_eval(&EvalConfig::default(), 8, scalar, 19_040, None, &H).unwrap();
        assert_eq!(
            eval_cost_per_component(&p1, 8, scalar, 7_667_713, 19_040),
            eval_cost(&p1, 8, scalar, 7_667_713, 19_040)
        );
    }

    #[test]
    fn spvm_moves_its_floor_within_five_percent() {
        for (p, nsel) in [(10_000usize, 10_000usize), (1 << 20, 64), (37, 1031)] {
            let plan = plan_spvm(&SpvmConfig::default(), 8, p, nsel, 32, &H).unwrap();
            let c = spvm_cost(&plan, 8, p, nsel);
            assert_eq!(c.launches, u64::from(plan.launches()));
            assert!(c.ratio() < 1.05 || nsel * p < 1 << 16, "p {p} nsel {nsel}: {c:?}");
        }
    }
}

/// The rows of the book's table (`cargo test -p sg-cuda --lib cost::book -- --nocapture` prints
/// them), with the claims the book makes about them checked.
#[cfg(test)]
mod book {
    use super::*;
    use crate::config::{EvalConfig, SpvmConfig, SweepConfig};
    use crate::occupancy::SmLimits;
    use crate::plan::{plan_eval, plan_spvm, sweep_min_groups};
    use crate::tables::{SweepTable, TrieTable};
    use sg_core::GridSpec;

    const H: SmLimits = SmLimits::H100;

    fn row(what: &str, c: &CallCost) {
        println!(
            "| {what} | {} | {} | {:.1} MB | {:.1} MB | {:.2} |",
            c.launches,
            c.blocks,
            c.bytes as f64 / 1e6,
            c.floor_bytes as f64 / 1e6,
            c.ratio()
        );
    }

    #[test]
    fn book_rows() {
        let m = 2_000_000usize;
        for (d, n) in [(4usize, 14u32), (6, 10), (10, 7)] {
            let spec = GridSpec::regular(d, n).unwrap();
            let trie = TrieTable::new(&spec).unwrap().bytes();
            for ncomp in [1usize, 8] {
                let shape = (d, m, ncomp);
                let plan = plan_eval(&EvalConfig::default(), 8, shape, trie, None, &H).unwrap();
                let now = eval_cost(&plan, 8, shape, spec.len(), trie);
                let before = eval_cost_per_component(&plan, 8, shape, spec.len(), trie);
                row(&format!("evaluate f64 ({d}, {n}), s = {ncomp}, before"), &before);
                row(
                    &format!(
                        "evaluate f64 ({d}, {n}), s = {ncomp}, now (pt {}, staged {})",
                        plan.pt, plan.staged
                    ),
                    &now,
                );
                assert!(now.ratio() <= before.ratio());
            }
            let sweep = SweepConfig::default();
            let before = SweepTable::for_grid(&spec, sweep.group_points).unwrap();
            let after = SweepTable::for_grid_filling(
                &spec,
                sweep.group_points,
                sweep_min_groups(&H, sweep.block_size),
            )
            .unwrap();
            row(&format!("hierarchize f64 ({d}, {n}), before"), &sweep_cost(&before, 8, spec.len(), 1));
            let now = sweep_cost(&after, 8, spec.len(), 1);
            row(&format!("hierarchize f64 ({d}, {n}), now"), &now);
            assert_eq!(now.launches, d as u64);
        }
        for (p, nsel) in [(10_000usize, 10_000usize), (1 << 20, 64)] {
            let cfg = SpvmConfig::default();
            let plan = plan_spvm(&cfg, 8, p, nsel, 32, &H).unwrap();
            let cols_only = crate::plan::SpvmPlan { chunks: 1, rows_per_chunk: nsel as u32, ..plan };
            row(&format!("spvm f64 p = {p}, {nsel} rows, before"), &spvm_cost(&cols_only, 8, p, nsel));
            row(
                &format!("spvm f64 p = {p}, {nsel} rows, now ({} chunks)", plan.chunks),
                &spvm_cost(&plan, 8, p, nsel),
            );
        }
    }
}
