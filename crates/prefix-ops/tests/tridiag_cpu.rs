//! Every CPU tridiagonal solver against f64 Thomas (dominant and Poisson systems) and against
//! dense Gaussian elimination with partial pivoting (hard systems).

mod tridiag_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::tridiagonal::{self, Dominance, Layout, Real, RrNetwork, Solver, TridiagonalBatch};
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
        for solver in [Solver::Thomas, Solver::ThomasParallel, Solver::ThomasLanes] {
            match solve(&p, solver) {
                Err(Error::ZeroPivot { row: 0, .. }) => {}
                other => panic!("{solver:?} {layout:?}: expected a zero pivot at row 0, got {other:?}"),
            }
        }
        // The safe default pivots on a batch that is not dominant.
        for solver in [Solver::PivotingLu, Solver::Auto] {
            let x = solve(&p, solver).unwrap();
            assert!(rel_err(&x, &reference(&p, dense_gepp)) < 1e-8, "{solver:?} {layout:?}");
        }
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
    assert!(matches!(
        TridiagonalBatch::interleaved(&v, &v, &v, 5),
        Err(Error::InvalidRows { len: 12, row_len: 5 })
    ));
    assert!(matches!(TridiagonalBatch::strided(&v, &v, &v, 0), Err(Error::InvalidRows { .. })));
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
    let mut bad = x.clone();
    bad[17] += 1.0;
    assert!(batch.residual(&bad, &p.d).unwrap() > 1e-3);
    let h = problem::<f64>(&mut r, Kind::ZeroDiagonal, 8, 2, Layout::Strided);
    let hb = TridiagonalBatch::strided(&h.a, &h.b, &h.c, 8).unwrap();
    let mut hx = h.d.clone();
    hb.solve_with(Solver::PivotingLu, &mut hx).unwrap();
    let rep = hb.accuracy(&hx, &h.d).unwrap();
    assert!(rep.max_rel_error < 1e-10 && rep.residual < 1e-13, "{rep:?}");
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

/// The system: a pivot of 1e-17 in row 0. Thomas returns x = [0, 1, 2] with no error;
/// the answer is [-1, 1, 2]. The default must pivot, and `accuracy` must flag the wrong answer.
fn near_zero_pivot<T: Real>() {
    let (a, b, c) = ([0.0, 1.0, 1.0].map(T::of), [1e-17, 1.0, 1.0].map(T::of), [1.0, 1.0, 0.0].map(T::of));
    let d = [1.0, 2.0, 3.0].map(T::of);
    let batch = TridiagonalBatch::strided(&a, &b, &c, 3).unwrap();
    let mut thomas = d;
    batch.solve_with(Solver::Thomas, &mut thomas).unwrap();
    assert_eq!(thomas, [0.0, 1.0, 2.0].map(T::of), "the failure this test is about");
    let rep = batch.accuracy(&thomas, &d).unwrap();
    assert!(rep.max_rel_error >= 0.5, "accuracy passed a wrong answer: {rep:?}");
    let mut x = d;
    batch.solve(&mut x).unwrap();
    assert_eq!(x, [-1.0, 1.0, 2.0].map(T::of));
    // Factors without pivoting would repeat Thomas's mistake: refused.
    assert!(matches!(batch.factor(), Err(Error::Invalid(_))));
    let rep = batch.accuracy(&x, &d).unwrap();
    assert!(rep.max_rel_error < 1e-6 && rep.residual < 1e-6, "{rep:?}");
}

#[test]
fn default_solve_pivots_at_a_near_zero_pivot_f64() {
    near_zero_pivot::<f64>();
}

#[test]
fn default_solve_pivots_at_a_near_zero_pivot_f32() {
    near_zero_pivot::<f32>();
}

/// `Auto` is exactly the fast Thomas on dominant batches (strict, and weak as Poisson) and
/// exactly pivoting LU on the others: compared bit for bit.
fn auto_follows_dominance<T: Real>() {
    let mut r = rng("auto_follows_dominance");
    for layout in LAYOUTS {
        for (kind, want_class) in [
            (Kind::Dominant, Dominance::Strict),
            (Kind::Poisson, Dominance::Weak),
            (Kind::Hard, Dominance::None),
        ] {
            let p = problem::<T>(&mut r, kind, 37, 9, layout);
            let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, p.m, layout).unwrap();
            assert_eq!(batch.dominance(), want_class, "{kind:?} {layout:?}");
            let fast = if layout == Layout::Strided { Solver::ThomasParallel } else { Solver::ThomasLanes };
            let expected = if want_class == Dominance::None { Solver::PivotingLu } else { fast };
            let (got, want) = (solve(&p, Solver::Auto).unwrap(), solve(&p, expected).unwrap());
            assert!(
                got.iter().zip(&want).all(|(g, w)| g.wide().to_bits() == w.wide().to_bits()),
                "{kind:?} {layout:?}"
            );
        }
    }
}

#[test]
fn auto_follows_dominance_f64() {
    auto_follows_dominance::<f64>();
}

#[test]
fn auto_follows_dominance_f32() {
    auto_follows_dominance::<f32>();
}

/// NaN in, NaN out: `residual` of a NaN or infinite solution is NaN (it was 0 when `f64::max`
/// dropped the NaN), and `accuracy` reports an infinite error for it.
#[test]
fn residual_and_accuracy_propagate_nan() {
    let mut r = rng("residual_nan");
    let p = problem::<f64>(&mut r, Kind::Dominant, 16, 3, Layout::Strided);
    let batch = TridiagonalBatch::strided(&p.a, &p.b, &p.c, 16).unwrap();
    let x = solve(&p, Solver::Auto).unwrap();
    assert!(batch.residual(&x, &p.d).unwrap() < 1e-14);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for at in [0, 17, 47] {
            let mut y = x.clone();
            y[at] = bad;
            assert!(batch.residual(&y, &p.d).unwrap().is_nan(), "x[{at}] = {bad:e}");
            let rep = batch.accuracy(&y, &p.d).unwrap();
            assert!(rep.residual.is_nan() && rep.max_rel_error == f64::INFINITY, "{rep:?}");
        }
    }
    let mut d = p.d.clone();
    d[5] = f64::NAN;
    assert!(batch.residual(&x, &d).unwrap().is_nan());
}

/// What the book promises for non-finite inputs: a NaN or infinite coefficient or right-hand
/// side makes some unknown of its own system non-finite, and leaves the other systems solved
/// (bit for bit as without it, except for `Auto`, which then pivots every system).
#[test]
fn non_finite_inputs_stay_in_their_system() {
    let mut r = rng("non_finite");
    for layout in LAYOUTS {
        for solver in [
            Solver::Auto,
            Solver::Thomas,
            Solver::PivotingLu,
            Solver::CyclicReduction,
            Solver::Tpr { slice: 4 },
        ] {
            for (array, bad) in
                [(0usize, f64::NAN), (1, f64::NAN), (2, f64::INFINITY), (3, f64::NAN), (3, f64::INFINITY)]
            {
                let clean = problem::<f64>(&mut r, Kind::Dominant, 12, 4, layout);
                let mut p = clean.clone();
                let at = layout.index(12, 4, 2, 5);
                let target = match array {
                    0 => &mut p.a,
                    1 => &mut p.b,
                    2 => &mut p.c,
                    _ => &mut p.d,
                };
                target[at] = bad;
                let x = match solve(&p, solver) {
                    Ok(x) => x,
                    Err(Error::ZeroPivot { system: 2, .. }) => continue,
                    Err(e) => panic!("{solver:?}: {e}"),
                };
                let want = solve(&clean, solver).unwrap();
                let in_sys = |g: usize| (0..12).map(move |k| layout.index(12, 4, g, k));
                assert!(
                    in_sys(2).any(|i| !x[i].is_finite()),
                    "{solver:?} {layout:?} array {array}: all finite"
                );
                for g in [0, 1, 3] {
                    let same = |i: usize| match solver {
                        Solver::Auto => (x[i] - want[i]).abs() <= 1e-12 * want[i].abs().max(1.0),
                        _ => x[i].to_bits() == want[i].to_bits(),
                    };
                    assert!(in_sys(g).all(same), "{solver:?} {layout:?}: system {g} changed");
                }
            }
        }
    }
}

/// Systems in the rows of 2-D arrays, in every layout, against the flat strided solve.
#[test]
fn solve_2d_any_layout_matches_the_flat_solve() {
    use prefix_ops::ndarray::{Array2, ShapeBuilder, s};
    let mut r = rng("solve_2d");
    let (g, m) = (5, 9);
    let p = problem::<f64>(&mut r, Kind::Dominant, m, g, Layout::Strided);
    let want = solve(&p, Solver::Auto).unwrap();
    let arr = |v: &[f64]| Array2::from_shape_vec((g, m), v.to_vec()).unwrap();
    let col_major = |v: &[f64]| {
        let mut f = Array2::zeros((g, m).f());
        f.assign(&arr(v));
        f
    };
    let close = |x: &Array2<f64>| x.iter().zip(&want).all(|(x, w)| (x - w).abs() < 1e-13);
    // Row-major (strided), column-major (interleaved), and a strided slice (copied).
    let mut d = arr(&p.d);
    tridiagonal::solve_2d(arr(&p.a).view(), arr(&p.b).view(), arr(&p.c).view(), d.view_mut()).unwrap();
    assert!(close(&d), "row-major");
    let mut d = col_major(&p.d);
    tridiagonal::solve_2d(
        col_major(&p.a).view(),
        col_major(&p.b).view(),
        col_major(&p.c).view(),
        d.view_mut(),
    )
    .unwrap();
    assert!(close(&d), "column-major");
    let wide = |v: &[f64]| {
        let mut w = Array2::from_elem((g, 2 * m), f64::NAN);
        w.slice_mut(s![.., ..;2]).assign(&arr(v));
        w
    };
    let (wa, wb, wc, mut wd) = (wide(&p.a), wide(&p.b), wide(&p.c), wide(&p.d));
    let view = |w: &Array2<f64>| w.slice(s![.., ..;2]).to_owned();
    tridiagonal::solve_2d_with(
        Solver::PivotingLu,
        wa.slice(s![.., ..;2]),
        wb.slice(s![.., ..;2]),
        wc.slice(s![.., ..;2]),
        wd.slice_mut(s![.., ..;2]),
    )
    .unwrap();
    assert!(close(&view(&wd)), "stepped slice");
    assert!(
        wd.slice(s![.., 1..;2]).iter().all(|v| v.is_nan()),
        "elements between the rows' elements untouched"
    );
    let short = Array2::<f64>::zeros((g, m - 1));
    let r = tridiagonal::solve_2d(short.view(), arr(&p.b).view(), arr(&p.c).view(), arr(&p.d).view_mut());
    assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{r:?}");
}
