//! Launches and device-memory bytes of one GPU solve, against the floor: what the launch code in
//! [`gpu`](super::gpu) does, counted without a GPU (issue 17's measure of a design). Each kernel
//! is charged the values it reads and writes in device memory, once each; reuse through L2
//! between kernels is not counted. The floor reads `a`, `b`, `c`, `d` once and writes `x` once
//! (`a_0` and `c_{m-1}` are never read).

use super::gpu::{TprPlan, cr_pcr_shared};
use super::solve::Solver;
use crate::{Error, Result};

/// Launches and bytes of one call ([`cost`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallCost {
    /// Kernel launches.
    pub launches: u64,
    /// Bytes the kernels read and write in device memory.
    pub bytes: u64,
    /// Bytes of the floor: `a`, `b`, `c`, `d` read once and `x` written once.
    pub floor: u64,
}

impl CallCost {
    /// `bytes / floor`: 1 is a solver that streams its data once.
    pub fn ratio(&self) -> f64 {
        self.bytes as f64 / self.floor.max(1) as f64
    }
}

/// Launches and bytes moved by one [`GpuBatch`](super::gpu::GpuBatch) solve with `solver` (as
/// named: [`Solver::Auto`] is resolved first, e.g. with [`choose`](super::gpu::choose)) of
/// `systems` systems of `m` rows of `elem_bytes`-byte values, on a device whose blocks may use
/// `shared_optin` bytes of shared memory (decides TPR's second level). Errors: `Auto`, a TPR
/// slice outside `2..=2048`, or a block solver whose system does not fit `shared_optin`.
pub fn cost(
    solver: Solver,
    m: usize,
    systems: usize,
    elem_bytes: usize,
    shared_optin: usize,
) -> Result<CallCost> {
    let (n, g) = ((m * systems) as u64, systems as u64);
    let floor = values_in(m, systems) + n;
    let v = elem_bytes as u64;
    if n == 0 {
        return Ok(CallCost { launches: 0, bytes: 0, floor: 0 });
    }
    let block = |shared: usize| -> Result<(u64, u64)> {
        if shared > shared_optin {
            return Err(Error::Invalid(format!("tridiagonal gpu cost: {shared} B of shared memory needed")));
        }
        Ok((1, floor))
    };
    let (launches, values) = match solver {
        Solver::Auto => {
            return Err(Error::Invalid("tridiagonal gpu cost: resolve Solver::Auto first".into()));
        }
        // Forward: a, b, c, d in, c' (rows < m-1) and d' out; back: c', d' in, x out.
        Solver::Thomas | Solver::ThomasParallel | Solver::ThomasLanes => {
            (1, values_in(m, systems) + (n - g) + n + 2 * (n - g) + (n - g))
        }
        // Forward: the inputs, and per row < m-1 the pivot's reciprocal, du, du2 and d' out;
        // back: those four in, x out.
        Solver::PivotingLu => (1, values_in(m, systems) + 4 * (n - g) + 4 * (n - g) + n),
        Solver::CyclicReduction | Solver::ParallelCyclicReduction | Solver::CrPcr { .. } => {
            let np = m.next_power_of_two();
            block(cr_pcr_shared_bytes(np, elem_bytes))?
        }
        Solver::WangMou => block(2 * m.next_power_of_two() * 4 * elem_bytes)?,
        Solver::RedundantReduction(net) => {
            let buffers = if net == super::RrNetwork::KoggeStone { 2 } else { 1 };
            block(buffers * m * 2 * 4 * elem_bytes)?
        }
        Solver::Tpr { slice } => {
            if !(2..=2048).contains(&slice) {
                return Err(Error::Invalid(format!(
                    "tridiagonal gpu cost: TPR slice {slice} outside 2..=2048"
                )));
            }
            tpr(m, systems, slice, shared_optin, elem_bytes)
        }
    };
    Ok(CallCost { launches, bytes: values * v, floor: floor * v })
}

/// `a`, `b`, `c`, `d` of every row, less `a_0` and `c_{m-1}` (never read).
fn values_in(m: usize, systems: usize) -> u64 {
    let (n, g) = ((m * systems) as u64, systems as u64);
    4 * n - 2 * g.min(n)
}

fn cr_pcr_shared_bytes(n: usize, elem_bytes: usize) -> usize {
    // cr_pcr_shared::<T> for T of elem_bytes bytes.
    match elem_bytes {
        4 => cr_pcr_shared::<f32>(n),
        _ => cr_pcr_shared::<f64>(n),
    }
}

/// One TPR level on `systems` systems of `m` rows: (launches, values moved).
fn tpr(m: usize, systems: usize, slice: usize, shared_optin: usize, elem_bytes: usize) -> (u64, u64) {
    let plan = TprPlan::new(m, systems, slice, shared_optin, 4 * elem_bytes);
    let (g, s, mm) = (systems as u64, plan.slice as u64, plan.slices as u64);
    let rows = g * mm;
    // Stage 1: the inputs in; S/2 bottom-chain equations and one top per slice out.
    let stage1 = values_in(m, systems) + 4 * rows * (s / 2) + 4 * rows;
    // The reduced row of slice j: its bottom equation and slice j+1's top.
    let reduced_rows_in = 4 * rows + 4 * (rows - g);
    let (launches2, stage2) = if plan.stage2_in_block {
        (1, reduced_rows_in + rows)
    } else {
        let (l, v) = tpr(plan.slices, systems, slice, shared_optin, elem_bytes);
        (1 + l, reduced_rows_in + 4 * rows + v)
    };
    // Stage 3: x of the slice bottoms (own and previous), the other bottom-chain equations, the
    // original equations of the even rows, x out.
    let (even, mu) = (m.div_ceil(2) as u64, m as u64);
    let even_in = g * (4 * even - 1 - u64::from(mu % 2 == 1));
    let stage3 = (2 * rows - g) + 4 * rows * (s / 2 - 1) + even_in + g * mu;
    (2 + launches2, stage1 + stage2 + stage3)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100_SHARED: usize = 227 * 1024;

    #[test]
    fn block_solvers_stream_once_and_thread_solvers_are_counted() {
        let c = cost(Solver::CrPcr { pcr_size: 64 }, 1024, 4096, 4, H100_SHARED).unwrap();
        assert_eq!((c.launches, c.bytes), (1, c.floor));
        // 9 values per unknown for Thomas, 13 for pivoting, against 5.
        let t = cost(Solver::Thomas, 1 << 20, 1, 8, H100_SHARED).unwrap();
        assert!((t.ratio() - 9.0 / 5.0).abs() < 1e-3, "{t:?}");
        let p = cost(Solver::PivotingLu, 1 << 20, 1, 8, H100_SHARED).unwrap();
        assert!((p.ratio() - 13.0 / 5.0).abs() < 1e-3, "{p:?}");
        assert!(cost(Solver::CyclicReduction, 1 << 14, 1, 8, H100_SHARED).is_err());
        assert!(cost(Solver::Auto, 8, 1, 8, H100_SHARED).is_err());
        assert_eq!(cost(Solver::Thomas, 0, 0, 8, H100_SHARED).unwrap().launches, 0);
    }

    /// One huge system: TPR's reduced system goes one level down instead of to one thread, a
    /// few launches in all, and about twice the floor (stage 3 reads half the rows again).
    #[test]
    fn huge_single_systems_take_a_second_tpr_level() {
        for (m, elem, slice) in [(1usize << 24, 4, 1024), (1 << 22, 8, 512), (1 << 24, 8, 512)] {
            let plan = TprPlan::new(m, 1, slice, H100_SHARED, 4 * elem);
            assert!(!plan.stage2_in_block || plan.slices <= 2048);
            let c = cost(Solver::Tpr { slice }, m, 1, elem, H100_SHARED).unwrap();
            assert!(c.launches <= 7, "{m} {elem}: {c:?}");
            assert!(c.ratio() < 2.3, "{m} {elem}: {:.2}", c.ratio());
        }
        // Small M stays in one block per system: three launches.
        assert_eq!(cost(Solver::Tpr { slice: 1024 }, 1 << 20, 1, 4, H100_SHARED).unwrap().launches, 3);
    }

    /// The book's table (`cargo test -p prefix-ops --lib cost_table -- --nocapture`): every
    /// default choice stays within 2.7x of its floor in at most 6 launches.
    #[test]
    fn cost_table_for_the_book() {
        use super::super::Layout;
        use super::super::gpu::choose;
        let cases = [
            ("f32, G = 2^14 strided, m = 1024", 1024, 1 << 14, Layout::Strided, 4),
            ("f32, G = 2^18 interleaved, m = 64", 64, 1 << 18, Layout::Interleaved, 4),
            ("f32, G = 4096 interleaved, m = 4096", 4096, 4096, Layout::Interleaved, 4),
            ("f32, one system, m = 2^24", 1 << 24, 1, Layout::Strided, 4),
            ("f64, one system, m = 2^22", 1 << 22, 1, Layout::Strided, 8),
            ("f64, G = 16, m = 2^20", 1 << 20, 16, Layout::Strided, 8),
        ];
        for (what, m, g, layout, elem) in cases {
            let solver = choose(m, g, layout, elem);
            let c = cost(solver, m, g, elem, H100_SHARED).unwrap();
            println!("| {what}: `{solver:?}` | {} | {:.2} |", c.launches, c.ratio());
            assert!(c.launches <= 6 && c.ratio() < 2.7, "{what}: {c:?}");
        }
        for (what, solver, m, g) in [
            ("f64 pivoting, G = 2^14, m = 1024", Solver::PivotingLu, 1024, 1 << 14),
            ("f64 Thomas, G = 2^18, m = 64", Solver::Thomas, 64, 1 << 18),
        ] {
            let c = cost(solver, m, g, 8, H100_SHARED).unwrap();
            println!("| {what} | {} | {:.2} |", c.launches, c.ratio());
        }
    }
}
