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
