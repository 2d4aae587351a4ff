//! Every sg-cpu variant against the sg-core reference on random grids and points.

use hetkit_testkit::{TestRng, rng};
use ndarray::Array2;
use rand::Rng;
use sg_core::{Grid, GridSpec, Real, VectorGrid};
use sg_cpu::{EvalTuning, EvalVariant, Evaluator, Hierarchizer};

const VARIANTS: [EvalVariant; 4] =
    [EvalVariant::PointTiles, EvalVariant::BlocksParallel, EvalVariant::SharedPrefix, EvalVariant::Cartesian];

/// Grids of many shapes: regular, truncated and boundary, d = 1..10.
fn specs(r: &mut TestRng) -> Vec<GridSpec> {
    let mut out = Vec::new();
    for d in 1..=10usize {
        let max_n = match d {
            1 => 9,
            2 => 7,
            3 => 6,
            4..=5 => 5,
            _ => 4,
        };
        for n in 1..=max_n {
            out.push(GridSpec::regular(d, n).unwrap());
        }
        let c: Vec<u32> = (0..d).map(|_| r.random_range(1..=max_n)).collect();
        out.push(GridSpec::truncated(d, max_n, &c).unwrap());
        if d <= 4 {
            out.push(GridSpec::regular(d, max_n - 1).unwrap().with_boundary().unwrap());
            out.push(GridSpec::truncated(d, max_n - 1, &c).unwrap().with_boundary().unwrap());
        }
    }
    out
}

/// Largest relative difference (floor 1), through f64.
fn max_rel_err<T: Real>(got: &[T], want: &[T], floor: f64) -> f64 {
    let g: Vec<f64> = got.iter().map(|&v| Real::to_f64(v)).collect();
    let w: Vec<f64> = want.iter().map(|&v| Real::to_f64(v)).collect();
    hetkit_testkit::max_rel_err(&g, &w, floor)
}

fn random_values<T: Real>(r: &mut TestRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

fn random_points<T: Real>(r: &mut TestRng, m: usize, d: usize) -> Array2<T> {
    Array2::from_shape_fn((m, d), |_| {
        // Hit the edges and grid lines sometimes.
        match r.random_range(0..20) {
            0 => T::zero(),
            1 => T::one(),
            2 => T::from_f64(0.5),
            _ => T::from_f64(r.random_range(0.0..1.0)),
        }
    })
}

fn check_hierarchize<T: Real>(r: &mut TestRng, spec: &GridSpec, s: usize, tol: f64) {
    let n = spec.len() as usize;
    let nodal = random_values::<T>(r, n * s);
    let mut reference = VectorGrid::from_values(spec.clone(), s, nodal.clone()).unwrap();
    reference.hierarchize();
    let plan = Hierarchizer::new(spec).unwrap();
    let mut got = nodal.clone();
    plan.hierarchize(&mut got, s).unwrap();
    let err = max_rel_err(&got, reference.values(), 1.0);
    assert!(err <= tol, "hierarchize {spec:?} s={s}: rel err {err:e}");
    plan.dehierarchize(&mut got, s).unwrap();
    let err = max_rel_err(&got, &nodal, 1.0);
    assert!(err <= tol, "dehierarchize {spec:?} s={s}: rel err {err:e}");
}

#[test]
fn hierarchize_matches_reference_f64_and_f32() {
    let mut r = rng("hierarchize_matches_reference_f64_and_f32");
    for spec in specs(&mut r) {
        check_hierarchize::<f64>(&mut r, &spec, 1, 1e-12);
        check_hierarchize::<f32>(&mut r, &spec, 1, 1e-5);
    }
}

#[test]
fn hierarchize_vector_grids_match_reference() {
    let mut r = rng("hierarchize_vector_grids_match_reference");
    for spec in specs(&mut r).into_iter().step_by(3) {
        check_hierarchize::<f64>(&mut r, &spec, 3, 1e-12);
    }
}

fn check_evaluate<T: Real>(r: &mut TestRng, spec: &GridSpec, s: usize, m: usize, tol: f64) {
    let d = spec.dim();
    let n = spec.len() as usize;
    let surpluses = random_values::<T>(r, n * s);
    let grid = VectorGrid::from_values(spec.clone(), s, surpluses.clone()).unwrap();
    let points = random_points::<T>(r, m, d);
    let want = grid.evaluate_batch(points.view()).unwrap();
    let want = want.as_slice().unwrap();
    let plan = Evaluator::new(spec).unwrap();
    for v in VARIANTS {
        let got = plan.evaluate_with(v, &surpluses, s, points.view()).unwrap();
        let err = max_rel_err(&got, want, 1.0);
        assert!(err <= tol, "{v:?} {spec:?} s={s} m={m}: rel err {err:e}");
    }
    let got = plan.evaluate(&surpluses, s, points.view()).unwrap();
    assert!(max_rel_err(&got, want, 1.0) <= tol, "auto {spec:?} m={m}");
}

#[test]
fn evaluate_matches_reference_at_awkward_m() {
    let mut r = rng("evaluate_matches_reference_at_awkward_m");
    let specs = specs(&mut r);
    for (i, spec) in specs.iter().enumerate() {
        let m = [0, 1, 2, 7, 63, 64, 65, 127, 131, 200][i % 10];
        check_evaluate::<f64>(&mut r, spec, 1, m, 1e-12);
        check_evaluate::<f32>(&mut r, spec, 1, m, 1e-5);
    }
}

#[test]
fn evaluate_vector_grids_match_reference() {
    let mut r = rng("evaluate_vector_grids_match_reference");
    for spec in specs(&mut r).into_iter().step_by(4) {
        check_evaluate::<f64>(&mut r, &spec, 3, 67, 1e-12);
    }
}

/// Points that form a Cartesian product, or share leading columns, are detected, and the
/// specialised variants return bit for bit what the general path returns.
#[test]
fn specialised_variants_equal_general_path_exactly() {
    let mut r = rng("specialised_variants_equal_general_path_exactly");
    for spec in [
        GridSpec::regular(3, 6).unwrap(),
        GridSpec::regular(5, 4).unwrap(),
        GridSpec::regular(2, 5).unwrap().with_boundary().unwrap(),
    ] {
        let d = spec.dim();
        let values = random_values::<f64>(&mut r, spec.len() as usize);
        let plan = Evaluator::new(&spec).unwrap();
        // Cartesian product of factors of awkward sizes, last column fastest.
        let sizes: Vec<usize> = (0..d).map(|t| [3, 5, 1, 4, 2][t % 5]).collect();
        let factors: Vec<Vec<f64>> =
            sizes.iter().map(|&k| (0..k).map(|_| r.random_range(0.0..1.0)).collect()).collect();
        let m: usize = sizes.iter().product();
        let car = Array2::from_shape_fn((m, d), |(j, t)| {
            let stride: usize = sizes[t + 1..].iter().product();
            factors[t][(j / stride) % sizes[t]]
        });
        let (variant, _) = plan.choose_with(car.view(), &EvalTuning::DEFAULT);
        assert_eq!(variant, if m >= sg_cpu::evaluate::TILE { EvalVariant::Cartesian } else { variant });
        let general = plan.evaluate_with(EvalVariant::PointTiles, &values, 1, car.view()).unwrap();
        let special = plan.evaluate_with(EvalVariant::Cartesian, &values, 1, car.view()).unwrap();
        assert_eq!(general, special, "Cartesian differs on {spec:?}");
        // Shared leading columns (a slice through the domain), and all columns shared.
        for prefix in [1, d.saturating_sub(1).max(1), d] {
            let mut sha = random_points::<f64>(&mut r, 130, d);
            for t in 0..prefix {
                let v = sha[[0, t]];
                sha.column_mut(t).fill(v);
            }
            assert_eq!(plan.choose_with(sha.view(), &EvalTuning::DEFAULT).0, EvalVariant::SharedPrefix);
            let general = plan.evaluate_with(EvalVariant::PointTiles, &values, 1, sha.view()).unwrap();
            let special = plan.evaluate_with(EvalVariant::SharedPrefix, &values, 1, sha.view()).unwrap();
            assert_eq!(general, special, "SharedPrefix({prefix}) differs on {spec:?}");
        }
    }
}

/// Hierarchize, then evaluate at the grid points: the nodal values come back.
#[test]
fn interpolant_reproduces_values_at_grid_points() {
    let f = |x: &[f64]| x.iter().enumerate().map(|(t, &v)| (1.0 + t as f64 * v).ln_1p()).sum::<f64>();
    for spec in [
        GridSpec::regular(3, 5).unwrap(),
        GridSpec::truncated(4, 5, &[2, 5, 3, 1]).unwrap(),
        GridSpec::regular(2, 4).unwrap().with_boundary().unwrap(),
    ] {
        let mut g = Grid::from_fn(spec.clone(), f).unwrap();
        let nodal = g.values().to_vec();
        sg_cpu::hierarchize(&mut g).unwrap();
        let pts = Array2::from_shape_fn((spec.len() as usize, spec.dim()), |(j, t)| {
            spec.coordinates(j as u64).unwrap()[t]
        });
        let ys = sg_cpu::evaluate_batch(&g, pts.view()).unwrap();
        let err = max_rel_err(ys.as_slice().unwrap(), &nodal, 1.0);
        assert!(err < 1e-12, "{spec:?}: {err:e}");
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let spec = GridSpec::regular(3, 3).unwrap();
    let g = Grid::<f64>::zeros(spec.clone()).unwrap();
    let wrong_cols = Array2::<f64>::zeros((4, 2));
    assert!(sg_cpu::evaluate_batch(&g, wrong_cols.view()).is_err());
    let mut outside = Array2::<f64>::zeros((4, 3));
    outside[[2, 1]] = 1.5;
    assert!(sg_cpu::evaluate_batch(&g, outside.view()).is_err());
    outside[[2, 1]] = f64::NAN;
    assert!(sg_cpu::evaluate_batch(&g, outside.view()).is_err());
    let plan = Hierarchizer::new(&spec).unwrap();
    assert!(plan.hierarchize(&mut [0.0f64; 5], 1).is_err());
    assert!(plan.hierarchize(&mut vec![0.0f64; spec.len() as usize], 0).is_err());
    let ev = Evaluator::new(&spec).unwrap();
    assert!(ev.evaluate(&[0.0f64; 3], 1, Array2::<f64>::zeros((1, 3)).view()).is_err());
}
