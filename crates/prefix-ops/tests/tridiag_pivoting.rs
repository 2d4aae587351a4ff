//! `Solver::PivotingLu`'s lane paths against dense Gaussian elimination with partial pivoting
//! written in the tests: every batch width around the lane counts (groups of 8, 4, 2 and single
//! leftover systems), both layouts, f32 and f64, on thread pools of several sizes (the
//! interleaved lane width depends on the thread count); and a singular system named by its index
//! in whichever lane it sits.

mod tridiag_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::tridiagonal::{Layout, Real, Solver, TridiagonalBatch};
use tridiag_common::{Kind, dense_gepp, problem, reference, rel_err};

const LAYOUTS: [Layout; 2] = [Layout::Strided, Layout::Interleaved];
const WIDTHS: [usize; 10] = [1, 2, 3, 4, 5, 7, 8, 9, 17, 33];

fn on_threads(threads: usize, f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f);
}

fn lanes_match_gepp<T: Real>(tol: f64) {
    let mut r = rng("pivoting_lanes");
    for threads in [1, 2, 3, 8] {
        on_threads(threads, || {
            for g in WIDTHS {
                for m in [1, 2, 3, 6, 64, 65] {
                    for layout in LAYOUTS {
                        for kind in [Kind::Hard, Kind::ZeroDiagonal, Kind::Dominant] {
                            // Zero diagonal on even rows is singular for odd m.
                            if matches!(kind, Kind::ZeroDiagonal) && m % 2 == 1 {
                                continue;
                            }
                            let p = problem::<T>(&mut r, kind, m, g, layout);
                            let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
                            let mut x = p.d.clone();
                            batch.solve_with(Solver::PivotingLu, &mut x).unwrap();
                            let res = batch.residual(&x, &p.d).unwrap();
                            let err = rel_err(&x, &reference(&p, dense_gepp));
                            let what = format!("{threads} threads, G={g} m={m} {layout:?} {kind:?}");
                            assert!(res < tol, "{what}: residual {res:.2e}");
                            // The forward error grows with the condition number: bound it loosely.
                            assert!(err < tol * 1e5, "{what}: error vs GEPP {err:.2e}");
                        }
                    }
                }
            }
        });
    }
}

#[test]
fn lanes_match_dense_gepp_f64() {
    lanes_match_gepp::<f64>(1e-13);
}

#[test]
fn lanes_match_dense_gepp_f32() {
    lanes_match_gepp::<f32>(1e-5);
}

/// A zero column in system `bad` (c[k-1] = b[k] = a[k+1] = 0): the matrix is singular and the
/// elimination meets an exactly zero pivot at row k, whatever the row exchanges before it.
#[test]
fn singular_system_is_named_in_every_lane() {
    let (m, k) = (9, 4);
    for threads in [1, 2] {
        on_threads(threads, || {
            for g in [1, 5, 9] {
                for bad in 0..g {
                    for layout in LAYOUTS {
                        let mut p = problem::<f64>(&mut rng("singular"), Kind::Dominant, m, g, layout);
                        p.c[layout.index(m, g, bad, k - 1)] = 0.0;
                        p.b[layout.index(m, g, bad, k)] = 0.0;
                        p.a[layout.index(m, g, bad, k + 1)] = 0.0;
                        let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
                        let mut x = p.d.clone();
                        match batch.solve_with(Solver::PivotingLu, &mut x) {
                            Err(Error::ZeroPivot { system, row }) if system == bad && row == k => {}
                            other => panic!("G={g} bad={bad} {layout:?}: got {other:?}"),
                        }
                    }
                }
            }
        });
    }
}

/// LAPACK `gtsv` written out plainly in f64 (row exchange when `|a_{k+1}| > |pivot|`), for one
/// system of a batch: the oracle for systems too long for the dense elimination.
fn gtsv_f64<T: Real>(p: &tridiag_common::Problem<T>, s: usize) -> Vec<f64> {
    let m = p.m;
    let at = |v: &[T], k: usize| v[p.layout.index(m, p.g, s, k)].wide();
    // Rows as (coefficients of x_k, x_{k+1}, x_{k+2}, rhs) once row k is the pivot row.
    let (mut dl, mut dd, mut du, mut du2, mut x) =
        (vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    for k in 0..m {
        dl[k] = if k > 0 { at(&p.a, k) } else { 0.0 };
        dd[k] = at(&p.b, k);
        du[k] = if k + 1 < m { at(&p.c, k) } else { 0.0 };
        x[k] = at(&p.d, k);
    }
    for k in 0..m.saturating_sub(1) {
        if dd[k].abs() >= dl[k + 1].abs() {
            let f = dl[k + 1] / dd[k];
            dd[k + 1] -= f * du[k];
            x[k + 1] -= f * x[k];
        } else {
            let f = dd[k] / dl[k + 1];
            dd[k] = dl[k + 1];
            let t = dd[k + 1];
            dd[k + 1] = du[k] - f * t;
            du2[k] = if k + 2 < m { du[k + 1] } else { 0.0 };
            if k + 2 < m {
                du[k + 1] = -f * du2[k];
            }
            du[k] = t;
            let t = x[k];
            x[k] = x[k + 1];
            x[k + 1] = t - f * x[k + 1];
        }
    }
    for k in (0..m).rev() {
        let x1 = if k + 1 < m { du[k] * x[k + 1] } else { 0.0 };
        let x2 = if k + 2 < m { du2[k] * x[k + 2] } else { 0.0 };
        x[k] = (x[k] - x1 - x2) / dd[k];
    }
    x
}

/// Few systems of `m >= 2048` are solved from both ends (two tasks per lane group): against
/// `gtsv` written in the test, on every thread count that changes the lane width, both layouts,
/// odd and prime sizes (the halves differ by one row), f32 and f64.
fn twisted_matches_gtsv<T: Real>(tol: f64) {
    let mut r = rng("pivoting_twisted");
    for threads in [1, 2, 3, 8] {
        on_threads(threads, || {
            for (g, m) in [(1, 2048), (4, 2053), (2, 4099), (5, 2048), (9, 2049)] {
                for layout in LAYOUTS {
                    for kind in [Kind::Hard, Kind::Dominant] {
                        let p = problem::<T>(&mut r, kind, m, g, layout);
                        let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
                        let mut x = p.d.clone();
                        batch.solve_with(Solver::PivotingLu, &mut x).unwrap();
                        let res = batch.residual(&x, &p.d).unwrap();
                        let err = rel_err(&x, &reference(&p, gtsv_f64));
                        let what = format!("{threads} threads, G={g} m={m} {layout:?} {kind:?}");
                        assert!(res < tol, "{what}: residual {res:.2e}");
                        assert!(err < tol * 1e5, "{what}: error vs gtsv {err:.2e}");
                        // The oracle itself solves the system.
                        let want = reference(&p, gtsv_f64);
                        let want_t: Vec<T> = want.iter().map(|&v| T::of(v)).collect();
                        assert!(batch.residual(&want_t, &p.d).unwrap() < tol, "{what}: oracle residual");
                    }
                }
            }
        });
    }
}

#[test]
fn twisted_matches_gtsv_f64() {
    twisted_matches_gtsv::<f64>(1e-13);
}

#[test]
fn twisted_matches_gtsv_f32() {
    twisted_matches_gtsv::<f32>(1e-5);
}

/// A zero column anywhere in a long system, including the two middle unknowns that the
/// halves' 2 x 2 system solves, is a zero pivot at that row of that system.
#[test]
fn twisted_singular_system_is_named() {
    let m = 2051;
    let h = m / 2;
    on_threads(2, || {
        for g in [1, 4] {
            for layout in LAYOUTS {
                for k in [1, 700, h - 2, h - 1, h, h + 1, m - 2] {
                    let bad = g - 1;
                    let mut p = problem::<f64>(&mut rng("twisted_singular"), Kind::Hard, m, g, layout);
                    p.c[layout.index(m, g, bad, k - 1)] = 0.0;
                    p.b[layout.index(m, g, bad, k)] = 0.0;
                    p.a[layout.index(m, g, bad, k + 1)] = 0.0;
                    let batch = TridiagonalBatch::new(&p.a, &p.b, &p.c, m, layout).unwrap();
                    let mut x = p.d.clone();
                    match batch.solve_with(Solver::PivotingLu, &mut x) {
                        Err(Error::ZeroPivot { system, row }) if system == bad && row == k => {}
                        other => panic!("G={g} k={k} {layout:?}: got {other:?}"),
                    }
                }
            }
        }
    });
}
