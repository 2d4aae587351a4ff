//! GPU tridiagonal solvers against f64 Thomas (and dense GEPP for the pivoting kernel). Skips
//! without a device; `HETKIT_REQUIRE_GPU=1` makes a missing device fail. Outputs are poisoned
//! with NaN before every run so an element the kernel never writes fails the comparison.

mod tridiag_common;

use cuda_kernels::Gpu;
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::tridiagonal::gpu::{GpuBatch, choose, choose_on, cost};
use prefix_ops::tridiagonal::{Layout, Real, RrNetwork, Solver, TridiagonalBatch};
use tridiag_common::{Kind, Problem, dense_gepp, problem, reference, rel_err, thomas_f64};

const SIZES: [usize; 9] = [1, 2, 3, 31, 32, 33, 64, 1000, 4096];
const LAYOUTS: [Layout; 2] = [Layout::Strided, Layout::Interleaved];

fn solvers(m: usize) -> Vec<Solver> {
    let mut v = vec![Solver::Auto, Solver::Thomas, Solver::PivotingLu];
    if m <= 2048 {
        v.extend([
            Solver::CyclicReduction,
            Solver::ParallelCyclicReduction,
            Solver::CrPcr { pcr_size: 16 },
            Solver::WangMou,
        ]);
    }
    v.extend([Solver::Tpr { slice: 2 }, Solver::Tpr { slice: 32 }, Solver::Tpr { slice: 1024 }]);
    v
}

fn run<T: Real>(gpu: &Gpu, p: &Problem<T>, solver: Solver) -> Vec<T> {
    let (a, b, c, d) = (
        gpu.upload(&p.a).unwrap(),
        gpu.upload(&p.b).unwrap(),
        gpu.upload(&p.c).unwrap(),
        gpu.upload(&p.d).unwrap(),
    );
    let mut x = gpu.upload(&vec![T::nan(); p.d.len()]).unwrap();
    GpuBatch::new(&a, &b, &c, p.m, p.layout).unwrap().solve_into(gpu, solver, &d, &mut x).unwrap();
    gpu.download(&x).unwrap()
}

fn dominant<T: Real>(name: &str, tol: f64) {
    let Some(gpu) = gpu_or_skip(name) else { return };
    let mut r = rng(name);
    for m in SIZES {
        let gs: &[usize] = if m <= 64 { &[1, 7, 1024] } else { &[1, 7] };
        for &g in gs {
            for layout in LAYOUTS {
                let p = problem::<T>(&mut r, Kind::Dominant, m, g, layout);
                let want = reference(&p, thomas_f64);
                for solver in solvers(m) {
                    let err = rel_err(&run(&gpu, &p, solver), &want);
                    assert!(err < tol, "{solver:?} m={m} G={g} {layout:?}: {err:.2e}");
                }
            }
        }
    }
}

#[test]
fn gpu_dominant_f64() {
    dominant::<f64>("gpu_dominant_f64", 1e-12);
}

#[test]
fn gpu_dominant_f32() {
    dominant::<f32>("gpu_dominant_f32", 1e-4);
}

#[test]
fn gpu_poisson_f64() {
    let Some(gpu) = gpu_or_skip("gpu_poisson_f64") else { return };
    let mut r = rng("gpu_poisson_f64");
    for m in SIZES {
        for layout in LAYOUTS {
            let p = problem::<f64>(&mut r, Kind::Poisson, m, 3, layout);
            let tol = (200.0 * f64::EPSILON * (m * m) as f64).max(1e-14);
            for solver in solvers(m) {
                let err = rel_err(&run(&gpu, &p, solver), &vec![1.0; 3 * m]);
                assert!(err < tol, "{solver:?} m={m} {layout:?}: {err:.2e}");
            }
        }
    }
}

#[test]
fn gpu_pivoting_solves_hard_systems() {
    let Some(gpu) = gpu_or_skip("gpu_pivoting_solves_hard_systems") else { return };
    let mut r = rng("gpu_pivoting_solves_hard_systems");
    for m in [1, 2, 3, 17, 33, 64, 100] {
        for layout in LAYOUTS {
            let p = problem::<f64>(&mut r, Kind::Hard, m, 7, layout);
            let want = reference(&p, dense_gepp);
            // The default pivots too: a GpuBatch not declared dominant, and host data that
            // solve_gpu finds not dominant.
            let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
            let mut via_host = p.d.clone();
            batch.solve_gpu(&gpu, Solver::Auto, &mut via_host).unwrap();
            for (what, x) in [
                ("PivotingLu", run(&gpu, &p, Solver::PivotingLu)),
                ("Auto", run(&gpu, &p, Solver::Auto)),
                ("solve_gpu Auto", via_host),
            ] {
                // Same elimination order as the CPU solver: the result is close to dense GEPP
                // up to the system's conditioning; random systems here stay well below 1e-6.
                assert!(rel_err(&x, &want) < 1e-6, "{what} m={m} {layout:?}");
            }
        }
    }
}

#[test]
fn gpu_rr_small_and_poisson() {
    let Some(gpu) = gpu_or_skip("gpu_rr_small_and_poisson") else { return };
    let mut r = rng("gpu_rr_small_and_poisson");
    for net in [RrNetwork::KoggeStone, RrNetwork::LadnerFischer] {
        for m in [1, 2, 3, 4, 5, 6] {
            for layout in LAYOUTS {
                let p = problem::<f64>(&mut r, Kind::Dominant, m, 7, layout);
                let err =
                    rel_err(&run(&gpu, &p, Solver::RedundantReduction(net)), &reference(&p, thomas_f64));
                assert!(err < 1e-8, "{net:?} m={m}: {err:.2e}");
            }
        }
        let p = problem::<f64>(&mut r, Kind::Poisson, 256, 2, Layout::Strided);
        assert!(rel_err(&run(&gpu, &p, Solver::RedundantReduction(net)), &vec![1.0; 512]) < 1e-10);
        // Documented limit: [1, 4, 1] at m = 64 is garbage.
        let m = 64;
        let mut d = vec![6.0f64; m];
        d[0] = 5.0;
        d[m - 1] = 5.0;
        let lim = Problem {
            a: vec![1.0; m],
            b: vec![4.0; m],
            c: vec![1.0; m],
            d,
            m,
            g: 1,
            layout: Layout::Strided,
        };
        let err = rel_err(&run(&gpu, &lim, Solver::RedundantReduction(net)), &vec![1.0; m]);
        assert!(err >= 1.0, "{net:?}: RR unexpectedly accurate at m = 64 ({err:.2e})");
    }
}

/// The CPU solver that runs the same operations as a GPU one (TPR's reduced system aside: the
/// GPU solves it by CR-PCR, the CPU by Thomas).
fn cpu_twin(solver: Solver) -> Solver {
    match solver {
        Solver::CyclicReduction => Solver::CyclicReduction,
        Solver::ParallelCyclicReduction => Solver::ParallelCyclicReduction,
        Solver::CrPcr { pcr_size } => Solver::CrPcr { pcr_size },
        Solver::RedundantReduction(net) => Solver::RedundantReduction(net),
        Solver::WangMou => Solver::WangMou,
        Solver::Tpr { slice } => Solver::Tpr { slice },
        Solver::PivotingLu => Solver::PivotingLu,
        _ => Solver::Thomas,
    }
}

fn cpu_solve<T: Real>(p: &Problem<T>, solver: Solver) -> Vec<f64> {
    let mut x = p.d.clone();
    TridiagonalBatch::new(&p.a, &p.b, &p.c, p.m, p.layout).unwrap().solve_with(solver, &mut x).unwrap();
    x.iter().map(|v| v.wide()).collect()
}

/// Every block solver at the largest blocks the host launches (1024 threads: RR at m = 1000,
/// WM at 1024, CR-PCR and TPR slices of 2048) and at the shared-memory opt-in limit (CR-PCR at
/// m = 2048 in f64, 208 KiB), against the CPU solver with the same operation order. RR runs on
/// Poisson rows, where it stays accurate enough to compare.
#[test]
fn gpu_block_solvers_match_their_cpu_twins_at_full_blocks() {
    let name = "gpu_block_solvers_match_their_cpu_twins_at_full_blocks";
    let Some(gpu) = gpu_or_skip(name) else { return };
    let mut r = rng(name);
    let cases: &[(usize, Kind, Solver)] = &[
        (1000, Kind::Poisson, Solver::RedundantReduction(RrNetwork::KoggeStone)),
        (1000, Kind::Poisson, Solver::RedundantReduction(RrNetwork::LadnerFischer)),
        (1024, Kind::Dominant, Solver::WangMou),
        (2048, Kind::Dominant, Solver::CrPcr { pcr_size: 64 }),
        (2048, Kind::Dominant, Solver::ParallelCyclicReduction),
        (2047, Kind::Dominant, Solver::CyclicReduction),
        (5000, Kind::Dominant, Solver::Tpr { slice: 2048 }),
        (37, Kind::Dominant, Solver::Tpr { slice: 4 }),
        (513, Kind::Dominant, Solver::PivotingLu),
    ];
    for &(m, kind, solver) in cases {
        for layout in LAYOUTS {
            let p = problem::<f64>(&mut r, kind, m, 3, layout);
            let want = cpu_solve(&p, cpu_twin(solver));
            let err = rel_err(&run(&gpu, &p, solver), &want);
            let tol = if matches!(kind, Kind::Poisson) { 1e-8 } else { 1e-12 };
            assert!(err < tol, "{solver:?} m={m} {layout:?}: {err:.2e} from the CPU twin");
        }
    }
    // f32 CR-PCR at m = 4096: 208 KiB of shared memory, the f32 limit.
    let p = problem::<f32>(&mut r, Kind::Dominant, 4096, 2, Layout::Strided);
    let err = rel_err(&run(&gpu, &p, Solver::CrPcr { pcr_size: 64 }), &reference(&p, thomas_f64));
    assert!(err < 1e-4, "f32 CR-PCR m=4096: {err:.2e}");
}

/// TPR with more than 2048 slices solves its reduced system one TPR level down (no system is
/// left to one thread); every other test takes the block path. The launches are those `cost`
/// counts, and a second call reuses the workspace of the first.
#[test]
fn gpu_tpr_reduced_system_one_level_down() {
    let Some(gpu) = gpu_or_skip("gpu_tpr_reduced_system_one_level_down") else { return };
    let mut r = rng("gpu_tpr_reduced_system_one_level_down");
    let optin = gpu.props().shared_per_block_optin;
    for layout in LAYOUTS {
        // m = 8193 pads to 16384: 8192 slices of 2 equations, then 4096 slices of 2, then a block.
        let p = problem::<f64>(&mut r, Kind::Dominant, 8193, 3, layout);
        let err = rel_err(&run(&gpu, &p, Solver::Tpr { slice: 2 }), &reference(&p, thomas_f64));
        assert!(err < 1e-12, "TPR S=2 m=8193 {layout:?}: {err:.2e}");
        let p = problem::<f32>(&mut r, Kind::Dominant, 8193, 2, layout);
        let (a, b, c, d) = (
            gpu.upload(&p.a).unwrap(),
            gpu.upload(&p.b).unwrap(),
            gpu.upload(&p.c).unwrap(),
            gpu.upload(&p.d).unwrap(),
        );
        let batch = GpuBatch::new(&a, &b, &c, p.m, layout).unwrap();
        let solver = Solver::Tpr { slice: 4 };
        let want = cost(solver, p.m, p.g, 4, optin).unwrap();
        assert!(want.launches > 3, "{want:?}");
        for call in 1..=2u64 {
            let mut x = gpu.upload(&vec![f32::NAN; p.d.len()]).unwrap();
            batch.solve_into(&gpu, solver, &d, &mut x).unwrap();
            let err = rel_err(&gpu.download(&x).unwrap(), &reference(&p, thomas_f64));
            assert!(err < 1e-4, "f32 TPR S=4 m=8193 {layout:?} call {call}: {err:.2e}");
            assert_eq!(batch.launches(), call * want.launches, "{layout:?} call {call}");
        }
    }
}

/// Every solver launches what `cost` counts; the workspace is kept across calls and sized by
/// the largest one (a second identical call allocates nothing new).
#[test]
fn gpu_launches_match_the_cost_model_and_workspace_is_kept() {
    let Some(gpu) = gpu_or_skip("gpu_launches_match_the_cost_model_and_workspace_is_kept") else { return };
    let mut r = rng("gpu_launches_match_the_cost_model");
    let optin = gpu.props().shared_per_block_optin;
    let (m, g) = (300, 5);
    let p = problem::<f64>(&mut r, Kind::Dominant, m, g, Layout::Interleaved);
    let (a, b, c, d) = (
        gpu.upload(&p.a).unwrap(),
        gpu.upload(&p.b).unwrap(),
        gpu.upload(&p.c).unwrap(),
        gpu.upload(&p.d).unwrap(),
    );
    let batch = GpuBatch::new(&a, &b, &c, m, Layout::Interleaved).unwrap();
    let want = reference(&p, thomas_f64);
    for solver in solvers(m).into_iter().filter(|s| *s != Solver::Auto) {
        let before = batch.launches();
        let mut x = gpu.upload(&vec![f64::NAN; m * g]).unwrap();
        batch.solve_into(&gpu, solver, &d, &mut x).unwrap();
        assert!(rel_err(&gpu.download(&x).unwrap(), &want) < 1e-12, "{solver:?}");
        let kept = batch.workspace_bytes();
        batch.solve_into(&gpu, solver, &d, &mut x).unwrap();
        assert_eq!(batch.workspace_bytes(), kept, "{solver:?}: the second call grew the workspace");
        let model = cost(solver, m, g, 8, optin).unwrap();
        assert_eq!(batch.launches() - before, 2 * model.launches, "{solver:?}");
    }
}

/// Too much shared memory for a block solver is an error, not a failed launch; an empty batch
/// is a no-op (nothing is uploaded).
#[test]
fn gpu_too_large_for_a_block_and_empty_batches() {
    let Some(gpu) = gpu_or_skip("gpu_too_large_for_a_block_and_empty_batches") else { return };
    let mut r = rng("gpu_too_large_for_a_block_and_empty_batches");
    let p = problem::<f64>(&mut r, Kind::Dominant, 4096, 1, Layout::Strided);
    let (a, b, c, d) = (
        gpu.upload(&p.a).unwrap(),
        gpu.upload(&p.b).unwrap(),
        gpu.upload(&p.c).unwrap(),
        gpu.upload(&p.d).unwrap(),
    );
    let mut x = gpu.zeros::<f64>(4096).unwrap();
    let batch = GpuBatch::new(&a, &b, &c, 4096, Layout::Strided).unwrap();
    for solver in [Solver::CyclicReduction, Solver::WangMou] {
        assert!(matches!(batch.solve_into(&gpu, solver, &d, &mut x), Err(prefix_ops::Error::Invalid(_))));
    }
    let empty: [f64; 0] = [];
    let batch = TridiagonalBatch::new(&empty, &empty, &empty, 5, Layout::Interleaved).unwrap();
    let mut d: [f64; 0] = [];
    batch.solve_gpu(&gpu, Solver::Auto, &mut d).unwrap();
}

#[test]
fn gpu_dispatcher_picks_block_solvers_for_small_systems() {
    // Pure host logic, runs everywhere.
    assert_eq!(choose(64, 1 << 18, Layout::Interleaved, 4), Solver::Thomas);
    assert_eq!(choose(64, 1 << 18, Layout::Strided, 4), Solver::CrPcr { pcr_size: 64 });
    assert_eq!(choose(4096, 4096, Layout::Strided, 8), Solver::Tpr { slice: 512 });
    // One thread per system only once the systems fill the SMs: 4096 fill 32 of an H100's 132.
    assert_eq!(choose(64, 4096, Layout::Interleaved, 4), Solver::CrPcr { pcr_size: 64 });
    assert_eq!(choose(64, (1 << 17) + 1, Layout::Interleaved, 4), Solver::Thomas);
    assert_eq!(choose_on(4, 64, 4096, Layout::Interleaved, 4), Solver::Thomas);
    assert_eq!(choose_on(4, 64, 2048, Layout::Interleaved, 4), Solver::CrPcr { pcr_size: 64 });
}

/// 2^20 unknowns in one system; `cargo test --release -p prefix-ops -- --ignored`.
#[test]
#[ignore]
fn gpu_huge_single_system() {
    let Some(gpu) = gpu_or_skip("gpu_huge_single_system") else { return };
    let mut r = rng("gpu_huge_single_system");
    let p = problem::<f64>(&mut r, Kind::Dominant, 1 << 20, 1, Layout::Strided);
    let want = reference(&p, thomas_f64);
    for solver in [Solver::Auto, Solver::Thomas, Solver::Tpr { slice: 256 }, Solver::Tpr { slice: 2048 }] {
        assert!(rel_err(&run(&gpu, &p, solver), &want) < 1e-12, "{solver:?}");
    }
}
