//! Every CPU tridiagonal solver against f64 Thomas (dominant and Poisson systems) and against
//! dense Gaussian elimination with partial pivoting (hard systems).

mod tridiag_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::tridiagonal::{Layout, Real, RrNetwork, Solver, TridiagonalBatch};
use tridiag_common::{Kind, Problem, dense_gepp, problem, reference, rel_err, thomas_f64};

const SIZES: [usize; 9] = [1, 2, 3, 31, 32, 33, 64, 1000, 4096];
const LAYOUTS: [Layout; 2] = [Layout::Strided, Layout::Interleaved];

/// The solvers that must match Thomas on dominant systems of any size.
fn stable_solvers() -> Vec<Solver> {
    vec![
        Solver::Auto,
        Solver::Thomas,
        Solver::ThomasParallel,
        Solver::ThomasLanes,
        Solver::PivotingLu,
        Solver::CyclicReduction,
        Solver::ParallelCyclicReduction,
        Solver::CrPcr { pcr_size: 4 },
        Solver::CrPcr { pcr_size: 64 },
        Solver::WangMou,
        Solver::Tpr { slice: 2 },
        Solver::Tpr { slice: 8 },
        Solver::Tpr { slice: 128 },
    ]
}

fn solve<T: Real>(p: &Problem<T>, solver: Solver) -> prefix_ops::Result<Vec<T>> {
    let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, p.m, p.layout)?;
    let mut x = p.d.clone();
    batch.solve_with(solver, &mut x)?;
    Ok(x)
}

fn batches(m: usize) -> Vec<usize> {
    // 1031 systems: several column blocks with a partial last one in the interleaved solver.
    if m <= 33 { vec![1, 7, 1024, 1031] } else { vec![1, 7] }
}

fn dominant_case<T: Real>(name: &str, tol: f64) {
    let mut r = rng(name);
    for m in SIZES {
        for g in batches(m) {
            for layout in LAYOUTS {
                let p = problem::<T>(&mut r, Kind::Dominant, m, g, layout);
                let want = reference(&p, thomas_f64);
                for solver in stable_solvers() {
                    let x = solve(&p, solver).unwrap();
                    let err = rel_err(&x, &want);
                    assert!(err < tol, "{solver:?} m={m} G={g} {layout:?}: rel err {err:.2e} >= {tol:.0e}");
                }
            }
        }
    }
}

#[test]
fn dominant_f64_all_solvers_match_thomas() {
    dominant_case::<f64>("dominant_f64_all_solvers_match_thomas", 1e-12);
}

#[test]
fn dominant_f32_all_solvers_match_thomas() {
    dominant_case::<f32>("dominant_f32_all_solvers_match_thomas", 1e-4);
}

/// Poisson [-1, 2, -1] with x = 1: the condition number grows like m², so the tolerance does
/// too (f32 only where it stays meaningful).
fn poisson_case<T: Real>(eps: f64, max_m: usize) {
    let mut r = rng("poisson");
    for m in SIZES.into_iter().filter(|&m| m <= max_m) {
        for layout in LAYOUTS {
            let p = problem::<T>(&mut r, Kind::Poisson, m, 3, layout);
            let tol = (200.0 * eps * (m * m) as f64).max(10.0 * eps);
            for solver in stable_solvers() {
                let x = solve(&p, solver).unwrap();
                let err = rel_err(&x, &vec![1.0; m * 3]);
                assert!(err < tol, "{solver:?} m={m} {layout:?}: err {err:.2e} >= {tol:.1e}");
            }
        }
    }
}

#[test]
fn poisson_f64() {
    poisson_case::<f64>(f64::EPSILON, 4096);
}

#[test]
fn poisson_f32() {
    poisson_case::<f32>(f32::EPSILON as f64, 64);
}

fn hard_case<T: Real>(tol: f64) {
    let mut r = rng("hard");
    for m in [1, 2, 3, 5, 17, 31, 32, 33, 64, 100] {
        for layout in LAYOUTS {
            let p = problem::<T>(&mut r, Kind::Hard, m, 7, layout);
            let want = reference(&p, dense_gepp);
            let x = solve(&p, Solver::PivotingLu).unwrap();
            // Forward error scales with the condition number; judge by the residual too.
            let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
            let res = batch.residual(&x, &p.d).unwrap();
            let err = rel_err(&x, &want);
            let cond_ok = err < tol * 1e4 || res < tol;
            assert!(res < tol && cond_ok, "m={m} {layout:?}: residual {res:.2e}, err vs GEPP {err:.2e}");
        }
    }
}

#[test]
fn hard_systems_pivoting_matches_dense_gepp_f64() {
    hard_case::<f64>(1e-13);
}

#[test]
fn hard_systems_pivoting_matches_dense_gepp_f32() {
    hard_case::<f32>(1e-5);
}

#[test]
fn zero_pivot_is_an_error_for_thomas_and_solved_by_pivoting() {
    let mut r = rng("zero_pivot");
    for layout in LAYOUTS {
        let p = problem::<f64>(&mut r, Kind::ZeroDiagonal, 10, 10, layout);
        for solver in [Solver::Thomas, Solver::ThomasParallel, Solver::ThomasLanes, Solver::Auto] {
            match solve(&p, solver) {
                Err(Error::ZeroPivot { row: 0, .. }) => {}
                other => panic!("{solver:?} {layout:?}: expected a zero pivot at row 0, got {other:?}"),
            }
        }
        let x = solve(&p, Solver::PivotingLu).unwrap();
        assert!(rel_err(&x, &reference(&p, dense_gepp)) < 1e-8);
    }
}

/// One zero pivot in the middle of one system: every Thomas variant names that system and row,
/// whichever lane of a lane group the system falls in.
#[test]
fn zero_pivot_names_its_system_in_every_lane() {
    let (m, g) = (9, 7);
    for bad in 0..g {
        for layout in LAYOUTS {
            let (a, c) = (vec![1.0f64; m * g], vec![1.0f64; m * g]);
            let mut b = vec![4.0f64; m * g];
            // Row 4's pivot is b[4] - a[4] c'[3]; make it exactly zero.
            let mut cp = 1.0 / 4.0;
            for _ in 1..4 {
                cp = 1.0 / (4.0 - cp);
            }
            b[layout.index(m, g, bad, 4)] = cp;
            let batch = TridiagonalBatch::new(&a, &b, &c, m, layout).unwrap();
            for solver in [Solver::Thomas, Solver::ThomasParallel, Solver::ThomasLanes] {
                let mut d = vec![1.0f64; m * g];
                match batch.solve_with(solver, &mut d) {
                    Err(Error::ZeroPivot { system, row: 4 }) if system == bad => {}
                    other => panic!("{solver:?} {layout:?} system {bad}: got {other:?}"),
                }
            }
        }
    }
}

#[test]
fn singular_system_is_an_error_for_pivoting() {
    // Two equal rows: [1 1; 1 1].
    let (a, b, c) = ([0.0, 1.0], [1.0, 1.0], [1.0, 0.0]);
    let batch = TridiagonalBatch::strided(&a, &b, &c, 2).unwrap();
    let mut d = [1.0, 2.0];
    assert!(matches!(batch.solve_with(Solver::PivotingLu, &mut d), Err(Error::ZeroPivot { .. })));
}

#[test]
fn non_finite_input_gives_nan_in_that_system_only() {
    let (a, mut b, c) = (vec![0.0; 8], vec![2.0f64; 8], vec![0.5; 8]);
    b[5] = f64::NAN;
    let batch = TridiagonalBatch::strided(&a, &b, &c, 4).unwrap();
    for solver in stable_solvers().into_iter().filter(|s| !matches!(s, Solver::PivotingLu)) {
        let mut d = vec![1.0; 8];
        // NaN compares unequal to zero, so no pivot error: NaN is the documented result.
        batch.solve_with(solver, &mut d).unwrap();
        assert!(d[..4].iter().all(|v| v.is_finite()), "{solver:?}: first system must be unaffected");
        assert!(d[4..].iter().any(|v| v.is_nan()), "{solver:?}: second system must show NaN");
    }
}

#[test]
fn rr_is_accurate_on_small_or_poisson_systems() {
    let mut r = rng("rr_small");
    for net in [RrNetwork::KoggeStone, RrNetwork::LadnerFischer] {
        // Shooting error grows like |λ|^m (about 7^m here): m <= 6 keeps 1e-8 with a wide margin.
        for m in [1, 2, 3, 4, 5, 6] {
            for layout in LAYOUTS {
                let p = problem::<f64>(&mut r, Kind::Dominant, m, 7, layout);
                // Off-diagonals are almost surely non-zero here, which RR needs.
                let x = solve(&p, Solver::RedundantReduction(net)).unwrap();
                let err = rel_err(&x, &reference(&p, thomas_f64));
                assert!(err < 1e-8, "RR {net:?} m={m}: {err:.2e}");
            }
        }
        for m in [31, 64, 256] {
            let p = problem::<f64>(&mut r, Kind::Poisson, m, 2, Layout::Strided);
            let x = solve(&p, Solver::RedundantReduction(net)).unwrap();
            let err = rel_err(&x, &vec![1.0; 2 * m]);
            assert!(err < 1e-10, "RR {net:?} Poisson m={m}: {err:.2e}");
        }
    }
}

/// The documented stability limit: on [1, 4, 1] (|λ| = 2 + √3) RR in f64 has lost every digit
/// by m = 64 (the digest measured 3e18), while Thomas stays at rounding level.
#[test]
fn rr_documented_limit_fails_on_dominant_toeplitz() {
    for net in [RrNetwork::KoggeStone, RrNetwork::LadnerFischer] {
        for (m, lost) in [(32usize, 1e-3), (64, 1.0)] {
            let (a, b, c) = (vec![1.0f64; m], vec![4.0; m], vec![1.0; m]);
            let mut d = vec![6.0; m];
            d[0] = 5.0;
            d[m - 1] = 5.0;
            let batch = TridiagonalBatch::strided(&a, &b, &c, m).unwrap();
            let mut x = d.clone();
            batch.solve_with(Solver::RedundantReduction(net), &mut x).unwrap();
            let err = rel_err(&x, &vec![1.0; m]);
            assert!(err >= lost, "RR {net:?} m={m} unexpectedly accurate ({err:.2e}): update the docs");
            let mut t = d.clone();
            batch.solve_with(Solver::Thomas, &mut t).unwrap();
            assert!(rel_err(&t, &vec![1.0; m]) < 1e-14);
        }
    }
}

#[test]
fn tpr_result_does_not_depend_on_slice_size() {
    let mut r = rng("tpr_slices");
    let m = 256;
    let p = problem::<f64>(&mut r, Kind::Dominant, m, 3, Layout::Strided);
    let want = reference(&p, thomas_f64);
    for s in [2usize, 4, 8, 16, 32, 64, 128, 256, 1024] {
        let x = solve(&p, Solver::Tpr { slice: s }).unwrap();
        assert!(rel_err(&x, &want) < 1e-13, "S = {s}");
    }
    assert!(matches!(solve(&p, Solver::Tpr { slice: 0 }), Err(Error::Invalid(_))));
}

#[test]
fn block_diagonal_systems_with_zero_couplings_inside() {
    let mut r = rng("block_diag");
    for layout in LAYOUTS {
        let mut p = problem::<f64>(&mut r, Kind::Dominant, 64, 3, layout);
        for s in 0..3 {
            for k in [7usize, 15, 31, 32, 40] {
                let i = layout.index(64, 3, s, k);
                p.c[i] = 0.0;
                p.a[layout.index(64, 3, s, k + 1)] = 0.0;
            }
        }
        let want = reference(&p, thomas_f64);
        for solver in stable_solvers() {
            let x = solve(&p, solver).unwrap();
            assert!(rel_err(&x, &want) < 1e-12, "{solver:?} {layout:?}");
        }
    }
}

#[test]
fn diagonal_systems_give_d_over_b() {
    let (a, b, c) = (vec![0.0f64; 12], (1..=12).map(|v| v as f64).collect::<Vec<_>>(), vec![0.0; 12]);
    let d: Vec<f64> = (0..12).map(|v| (v * 3) as f64).collect();
    let want: Vec<f64> = d.iter().zip(&b).map(|(d, b)| d / b).collect();
    let batch = TridiagonalBatch::strided(&a, &b, &c, 4).unwrap();
    for solver in stable_solvers() {
        let mut x = d.clone();
        batch.solve_with(solver, &mut x).unwrap();
        // Exact up to the lane solver's multiplication by 1/b.
        assert!(
            x.iter().zip(&want).all(|(x, w)| (x - w).abs() <= 2.0 * f64::EPSILON * w.abs()),
            "{solver:?}"
        );
    }
}

#[test]
fn bad_lengths_are_errors() {
    let v = vec![1.0f32; 12];
    assert!(matches!(TridiagonalBatch::strided(&v[..11], &v, &v, 4), Err(Error::LengthMismatch { .. })));
    assert!(matches!(TridiagonalBatch::interleaved(&v, &v, &v, 5), Err(Error::Invalid(_))));
    assert!(matches!(TridiagonalBatch::strided(&v, &v, &v, 0), Err(Error::Invalid(_))));
    let batch = TridiagonalBatch::strided(&v, &v, &v, 4).unwrap();
    assert_eq!((batch.systems(), batch.system_size()), (3, 4));
    let mut short = vec![0.0f32; 11];
    assert!(matches!(batch.solve(&mut short), Err(Error::LengthMismatch { .. })));
    let mut x = vec![0.0f32; 12];
    assert!(matches!(batch.solve_into(&short, &mut x), Err(Error::LengthMismatch { .. })));
    assert!(matches!(batch.residual(&short, &x), Err(Error::LengthMismatch { .. })));
    assert!(matches!(batch.factor(), Err(Error::Invalid(_))));
    let empty: [f32; 0] = [];
    let e = TridiagonalBatch::strided(&empty, &empty, &empty, 0).unwrap();
    e.solve(&mut []).unwrap();
}

#[test]
fn several_right_hand_sides_share_one_factorisation() {
    let mut r = rng("multi_rhs");
    for m in [1usize, 2, 33, 1000] {
        let p = problem::<f64>(&mut r, Kind::Dominant, m, 5, Layout::Strided);
        // One matrix (system 0) and five right-hand sides.
        let (a, b, c) = (&p.a[..m], &p.b[..m], &p.c[..m]);
        let f = TridiagonalBatch::strided(a, b, c, m).unwrap().factor().unwrap();
        let mut x = p.d.clone();
        f.solve_many(&mut x).unwrap();
        for j in 0..5 {
            let mut one = p.d[j * m..(j + 1) * m].to_vec();
            TridiagonalBatch::strided(a, b, c, m).unwrap().solve_with(Solver::Thomas, &mut one).unwrap();
            assert!(
                rel_err(&x[j * m..(j + 1) * m], &one.iter().map(|v| v.wide()).collect::<Vec<_>>()) < 1e-14
            );
        }
        assert!(f.solve_many(&mut vec![0.0; m * 5 + 1]).is_err() || m == 1);
    }
}

#[test]
fn accuracy_report_and_residual() {
    let mut r = rng("accuracy");
    let p = problem::<f32>(&mut r, Kind::Dominant, 100, 4, Layout::Interleaved);
    let batch = TridiagonalBatch::interleaved(&p.a, &p.b, &p.c, 100).unwrap();
    let mut x = vec![0.0f32; 400];
    batch.solve_into(&p.d, &mut x).unwrap();
    let rep = batch.accuracy(&x, &p.d).unwrap();
    assert!(rep.max_rel_error < 1e-5 && rep.residual < 1e-6 && rep.reference_residual < 1e-15, "{rep:?}");
    assert!(!rep.reference_pivoted);
    let mut bad = x.clone();
    bad[17] += 1.0;
    assert!(batch.residual(&bad, &p.d).unwrap() > 1e-3);
    let h = problem::<f64>(&mut r, Kind::ZeroDiagonal, 8, 2, Layout::Strided);
    let hb = TridiagonalBatch::strided(&h.a, &h.b, &h.c, 8).unwrap();
    let mut hx = h.d.clone();
    hb.solve_with(Solver::PivotingLu, &mut hx).unwrap();
    assert!(hb.accuracy(&hx, &h.d).unwrap().reference_pivoted);
}

/// The 2^20 size of the grid; run with `cargo test --release -p prefix-ops -- --ignored`.
#[test]
#[ignore]
fn huge_single_system_all_solvers() {
    let mut r = rng("huge");
    let p = problem::<f64>(&mut r, Kind::Dominant, 1 << 20, 1, Layout::Strided);
    let want = reference(&p, thomas_f64);
    for solver in stable_solvers() {
        let x = solve(&p, solver).unwrap();
        assert!(rel_err(&x, &want) < 1e-12, "{solver:?}");
    }
}
