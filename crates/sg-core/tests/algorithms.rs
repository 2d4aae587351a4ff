//! Reference algorithms (§14.3–§14.7): basis, hierarchization, evaluation, boundary grids,
//! vector grids, spvm, integral, error.

mod common;
use common::*;
use hetkit_testkit::assert_close;
use ndarray::Array2;
use proptest::prelude::*;
use rand::Rng;
use sg_core::basis::{basis_1d, basis_cell, parent_1d, parent_in_level};
use sg_core::reference::{self as r, spvm};
use sg_core::{Grid, GridSpec, Real, SgError, Side, VectorGrid};

fn specs() -> Vec<GridSpec> {
    vec![
        GridSpec::regular(1, 5).unwrap(),
        GridSpec::regular(2, 4).unwrap(),
        GridSpec::regular(3, 3).unwrap(),
        GridSpec::truncated(2, 5, &[5, 3]).unwrap(),
        GridSpec::truncated(3, 4, &[2, 4, 1]).unwrap(),
        GridSpec::regular(5, 2).unwrap(),
        GridSpec::regular(1, 4).unwrap().with_boundary().unwrap(),
        GridSpec::regular(2, 3).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(3, 3, &[3, 1, 2]).unwrap().with_boundary().unwrap(),
    ]
}

fn random_values(rng: &mut impl Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

fn random_point(rng: &mut impl Rng, d: usize) -> Vec<f64> {
    (0..d)
        .map(|_| match rng.random_range(0..8) {
            0 => 0.0,
            1 => 1.0,
            2 => 0.5,
            _ => rng.random_range(0.0..=1.0),
        })
        .collect()
}

#[test]
fn basis_values() {
    assert_eq!(basis_cell(0, 0.5).1, 1.0);
    assert_eq!(basis_cell(0, 0.25).1, 0.5);
    assert_eq!(basis_cell(1, 0.25).1, 1.0);
    assert_eq!(basis_cell(1, 0.5).1, 0.0);
    assert!((basis_cell(2, 0.3).1 - 0.4_f64).abs() < 1e-15);
    for k in 0..12 {
        assert_eq!(basis_cell(k, 1.0_f64).1, 0.0);
        assert_eq!(basis_cell(k, 0.0_f64).1, 0.0);
        assert_eq!(basis_cell(k, 1.0_f32).0, (1 << k) - 1);
    }
    // basis_cell selects the one function of the level whose support holds x.
    let mut rng = hetkit_testkit::rng("basis_values");
    for _ in 0..500 {
        let x: f64 = rng.random_range(0.0..=1.0);
        let k = rng.random_range(0..10);
        let (cell, v) = basis_cell(k, x);
        assert!((0.0..=1.0).contains(&v));
        assert!((v - basis_1d(k + 1, 2 * cell + 1, x)).abs() < 1e-12);
        let others: f64 = (0..1u32 << k).filter(|&c| c != cell).map(|c| basis_1d(k + 1, 2 * c + 1, x)).sum();
        assert!(others < 1e-12);
    }
    // The two parent forms agree.
    for l0 in 0..8u32 {
        for p in 0..1u32 << l0 {
            for side in [Side::Left, Side::Right] {
                let (pl, pi) = parent_1d(l0 + 1, 2 * p + 1, side);
                let want = if pl == 0 { None } else { Some((pl - 1, (pi - 1) / 2)) };
                assert_eq!(parent_in_level(l0, p, side), want);
            }
        }
    }
}

/// Tensor parabola: surplus 4^(d − |l|_1) (1-based levels) at every point, f32 and f64.
#[test]
fn tensor_parabola_surplus() {
    for spec in specs().into_iter().filter(|s| !s.has_boundary()) {
        let d = spec.dim() as i32;
        let mut g = Grid::<f64>::from_fn(spec.clone(), parabola).unwrap();
        g.hierarchize();
        let mut g32 = Grid::<f32>::from_fn(spec.clone(), parabola).unwrap();
        g32.hierarchize_recursive();
        for p in spec.points() {
            let sum: i32 = p.levels.iter().map(|&l| l as i32).sum();
            let want = 4f64.powi(d - sum);
            assert!((g.values()[p.index as usize] - want).abs() < 1e-14, "{p:?}");
            assert!((g32.values()[p.index as usize] as f64 - want).abs() < 1e-6);
        }
    }
}

#[test]
fn single_hat_is_one_surplus() {
    let spec = GridSpec::regular(3, 4).unwrap();
    let hat = |x: &[f64]| x.iter().map(|&v| 1.0 - (2.0 * v - 1.0).abs()).product::<f64>();
    let mut g = Grid::from_fn(spec, hat).unwrap();
    g.hierarchize();
    assert_eq!(g.values()[0], 1.0);
    assert!(g.values()[1..].iter().all(|&v| v == 0.0));
    let mut rng = hetkit_testkit::rng("single_hat");
    for _ in 0..50 {
        let x = random_point(&mut rng, 3);
        assert!((g.evaluate(&x).unwrap() - hat(&x)).abs() < 1e-14);
    }
}

/// Random surpluses: nodal values by brute force, hierarchize recovers the surpluses;
/// recursive and non-recursive forms agree; dehierarchize inverts both.
#[test]
fn random_surplus_round_trip_and_forms_agree() {
    let mut rng = hetkit_testkit::rng("random_surplus_round_trip");
    for spec in specs() {
        let n = spec.len() as usize;
        let alpha = random_values(&mut rng, n);
        // Nodal values u_j = Σ_k α_k φ_k(x_j) by brute force.
        let mut nodal = vec![0.0; n];
        for j in 0..n {
            let x = spec.coordinates(j as u64).unwrap();
            r::evaluate_brute_force_into(&spec, &alpha, 1, &x, &mut nodal[j..j + 1]).unwrap();
        }
        let mut h = nodal.clone();
        r::hierarchize(&spec, &mut h, 1).unwrap();
        assert_close(&h, &alpha, 1e-13);
        let mut hr = nodal.clone();
        r::hierarchize_recursive(&spec, &mut hr, 1).unwrap();
        assert_close(&hr, &alpha, 1e-13);
        let mut back = alpha.clone();
        r::dehierarchize(&spec, &mut back, 1).unwrap();
        assert_close(&back, &nodal, 1e-13);
        let mut backr = alpha.clone();
        r::dehierarchize_recursive(&spec, &mut backr, 1).unwrap();
        assert_close(&backr, &nodal, 1e-13);
        // Evaluation: block form = recursive form = brute force at random points.
        let g = Grid::from_values(spec.clone(), alpha.clone()).unwrap();
        for _ in 0..20 {
            let x = random_point(&mut rng, spec.dim());
            let mut bf = [0.0];
            r::evaluate_brute_force_into(&spec, &alpha, 1, &x, &mut bf).unwrap();
            assert!((g.evaluate(&x).unwrap() - bf[0]).abs() < 1e-12);
            assert!((g.evaluate_recursive(&x).unwrap() - bf[0]).abs() < 1e-12);
        }
    }
}

/// Interpolating at the grid points reproduces the sampled function; batch = per point.
#[test]
fn interpolation_at_grid_points() {
    let f = |x: &[f64]| x.iter().enumerate().map(|(t, &v)| (1.0 + t as f64 * v).sin()).product::<f64>();
    for spec in specs() {
        let d = spec.dim();
        let mut g = Grid::from_fn(spec.clone(), f).unwrap();
        let nodal = g.values().to_vec();
        g.hierarchize();
        let m = spec.len() as usize;
        let mut pts = Array2::zeros((m, d));
        for j in 0..m {
            for (t, v) in spec.coordinates(j as u64).unwrap().into_iter().enumerate() {
                pts[[j, t]] = v;
            }
        }
        let ys = g.evaluate_batch(pts.view()).unwrap();
        assert_close(ys.as_slice().unwrap(), &nodal, 1e-13);
        let zero_boundary_parabola = !spec.has_boundary();
        if zero_boundary_parabola {
            let mut p = Grid::from_fn(spec.clone(), parabola::<f64>).unwrap();
            p.hierarchize();
            for j in 0..m {
                let x = spec.coordinates(j as u64).unwrap();
                assert_eq!(p.evaluate(&x).unwrap(), parabola(&x), "exact at grid point {j}");
            }
        }
    }
}

#[test]
fn worked_values() {
    let eval = |d: usize, n: u32, x: &[f64]| {
        let mut g = Grid::from_fn(GridSpec::regular(d, n).unwrap(), parabola::<f64>).unwrap();
        g.hierarchize();
        g.evaluate(x).unwrap()
    };
    assert!((eval(1, 3, &[0.3]) - 0.825).abs() < 1e-12);
    assert!((eval(2, 2, &[0.3, 0.6]) - 0.70).abs() < 1e-12);
    assert!((eval(2, 3, &[0.3, 0.6]) - 0.77).abs() < 1e-12);
    // f32 too.
    let mut g = Grid::<f32>::from_fn(GridSpec::regular(2, 3).unwrap(), parabola::<f32>).unwrap();
    g.hierarchize();
    assert!((g.evaluate(&[0.3, 0.6]).unwrap() - 0.77).abs() < 1e-5);
}

/// Zero-boundary interpolants vanish on the boundary.
#[test]
fn zero_boundary_interpolant_vanishes_on_boundary() {
    let mut rng = hetkit_testkit::rng("vanishes_on_boundary");
    let spec = GridSpec::truncated(3, 4, &[4, 2, 3]).unwrap();
    let g = Grid::from_values(spec.clone(), random_values(&mut rng, spec.len() as usize)).unwrap();
    for _ in 0..50 {
        let mut x = random_point(&mut rng, 3);
        x[rng.random_range(0..3)] = if rng.random_bool(0.5) { 0.0 } else { 1.0 };
        assert_eq!(g.evaluate(&x).unwrap(), 0.0);
    }
}

#[test]
fn boundary_grids_reproduce_multilinear_functions() {
    let mut rng = hetkit_testkit::rng("multilinear");
    let f = |x: &[f64]| 1.0 + 2.0 * x[0] - x[1] * x[2];
    for spec in [
        GridSpec::regular(3, 3).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(3, 4, &[4, 1, 2]).unwrap().with_boundary().unwrap(),
    ] {
        let mut g = Grid::from_fn(spec.clone(), f).unwrap();
        g.hierarchize();
        for p in spec.points() {
            let corner = p.levels.iter().all(|&l| l == 0);
            if !corner {
                assert!(g.values()[p.index as usize].abs() < 1e-14, "non-corner surplus at {p:?}");
            }
        }
        for _ in 0..100 {
            let x = random_point(&mut rng, 3);
            assert!((g.evaluate(&x).unwrap() - f(&x)).abs() < 1e-13);
            assert!((g.evaluate_recursive(&x).unwrap() - f(&x)).abs() < 1e-13);
        }
        // Corners from the 0-dimensional faces only.
        for corner in 0..8 {
            let x: Vec<f64> = (0..3).map(|t| ((corner >> t) & 1) as f64).collect();
            assert!((g.evaluate(&x).unwrap() - f(&x)).abs() < 1e-14);
        }
    }
}

#[test]
fn fastsg_test_function_on_boundary_grids() {
    let f = |x: &[f64]| x.iter().map(|&v| v * (2.0 - v)).product::<f64>();
    for (d, n, len) in [(1usize, 4u32, 17u64), (2, 3, 49), (3, 3, 225), (2, 5, 257), (4, 3, 945)] {
        let spec = GridSpec::regular(d, n).unwrap().with_boundary().unwrap();
        assert_eq!(spec.len(), len);
        let mut g = Grid::from_fn(spec.clone(), f).unwrap();
        g.hierarchize();
        for j in 0..spec.len() {
            let x = spec.coordinates(j).unwrap();
            assert!((g.evaluate(&x).unwrap() - f(&x)).abs() < 1e-14);
        }
    }
}

#[test]
fn hierarchize_inverts_dehierarchize() {
    // §14.4 item 17, the other direction: hierarchize(dehierarchize(α)) = α, also mixing the
    // recursive (dimensions in reverse) and non-recursive (forward) forms.
    let mut rng = hetkit_testkit::rng("order");
    for spec in specs() {
        let alpha = random_values(&mut rng, spec.len() as usize);
        let mut v = alpha.clone();
        r::dehierarchize(&spec, &mut v, 1).unwrap();
        r::hierarchize(&spec, &mut v, 1).unwrap();
        assert_close(&v, &alpha, 1e-13);
        // recursive dehierarchize sweeps in reverse, non-recursive hierarchize forward
        let mut w = alpha.clone();
        r::dehierarchize_recursive(&spec, &mut w, 1).unwrap();
        r::hierarchize(&spec, &mut w, 1).unwrap();
        assert_close(&w, &alpha, 1e-13);
    }
}

#[test]
fn vector_grid_is_s_scalar_grids_and_spvm() {
    let mut rng = hetkit_testkit::rng("vector_grid");
    for spec in [
        GridSpec::regular(3, 3).unwrap(),
        GridSpec::truncated(2, 4, &[4, 2]).unwrap().with_boundary().unwrap(),
    ] {
        let s = 5;
        let comps: Vec<Grid<f64>> = (0..s)
            .map(|_| Grid::from_values(spec.clone(), random_values(&mut rng, spec.len() as usize)).unwrap())
            .collect();
        let mut vg = VectorGrid::from_components(&comps).unwrap();
        vg.hierarchize();
        let mut hier: Vec<Grid<f64>> = comps.clone();
        hier.iter_mut().for_each(|g| g.hierarchize());
        for c in 0..s {
            assert_close(vg.component(c).unwrap().values(), hier[c].values(), 1e-14);
        }
        let mut contrib = Vec::new();
        for _ in 0..20 {
            let x = random_point(&mut rng, spec.dim());
            let y = vg.evaluate(&x).unwrap();
            let want: Vec<f64> = hier.iter().map(|g| g.evaluate(&x).unwrap()).collect();
            assert_close(&y, &want, 1e-13);
            // Evaluation = spvm over the contributing rows (one per block).
            r::contributions(&spec, &x, &mut contrib).unwrap();
            assert_eq!(contrib.len() as u64, spec.num_blocks());
            let w: Vec<f64> = contrib.iter().map(|c| c.1).collect();
            let ix: Vec<usize> = contrib.iter().map(|c| c.0 as usize).collect();
            assert_close(&spvm(&w, &ix, vg.values(), s).unwrap(), &want, 1e-13);
        }
        let pts = Array2::from_shape_fn((7, spec.dim()), |(i, t)| ((i * 3 + t) % 8) as f64 / 7.0);
        let batch = vg.evaluate_batch(pts.view()).unwrap();
        for (i, row) in pts.rows().into_iter().enumerate() {
            assert_close(
                batch.row(i).as_slice().unwrap(),
                &vg.evaluate(row.as_slice().unwrap()).unwrap(),
                1e-13,
            );
        }
        let ints = vg.integral();
        for c in 0..s {
            assert!((ints[c] - hier[c].integral()).abs() < 1e-14);
        }
        vg.dehierarchize();
        for c in 0..s {
            assert_close(vg.component(c).unwrap().values(), comps[c].values(), 1e-13);
        }
    }
}

#[test]
fn spvm_reference() {
    let mut rng = hetkit_testkit::rng("spvm_reference");
    for (rows, p, m) in [(1usize, 1usize, 1usize), (7, 3, 5), (17, 31, 12), (2, 65, 0)] {
        let a = random_values(&mut rng, rows * p);
        let x = random_values(&mut rng, m);
        let ix: Vec<usize> = (0..m).map(|_| rng.random_range(0..rows)).collect();
        let y = spvm(&x, &ix, &a, p).unwrap();
        for j in 0..p {
            let want: f64 = (0..m).map(|i| x[i] * a[ix[i] * p + j]).sum();
            assert!((y[j] - want).abs() < 1e-13);
        }
    }
    assert!(matches!(spvm(&[1.0], &[], &[1.0], 1), Err(SgError::LengthMismatch { .. })));
    assert!(matches!(spvm(&[1.0], &[3], &[1.0, 2.0], 1), Err(SgError::IndexOutOfRange { .. })));
    assert!(matches!(
        spvm(&[1.0], &[0], &[1.0, 2.0, 3.0], 2),
        Err(SgError::NotMultiple { len: 3, row: 2, .. })
    ));
    assert!(matches!(spvm::<f64>(&[], &[], &[], 0), Err(SgError::Zero { .. })));
}

#[test]
fn integral_and_error() {
    // ∫ parabola over [0,1]^d = (2/3)^d; the interpolant's integral converges.
    let mut prev = f64::INFINITY;
    for n in 2..=7 {
        let spec = GridSpec::regular(2, n).unwrap();
        let mut g = Grid::from_fn(spec, parabola::<f64>).unwrap();
        g.hierarchize();
        let err = (g.integral() - (2.0f64 / 3.0).powi(2)).abs();
        assert!(err < prev);
        prev = err;
    }
    // Multilinear on a boundary grid: exact integral 1 + 1 - 1/4.
    let mut g = Grid::<f64>::from_fn(GridSpec::regular(3, 2).unwrap().with_boundary().unwrap(), |x| {
        1.0 + 2.0 * x[0] - x[1] * x[2]
    })
    .unwrap();
    g.hierarchize();
    assert!((g.integral() - 1.75).abs() < 1e-14);
    // Eq. 3.20: zero for functions in the space, decreasing with n for the parabola.
    let pts = Array2::from_shape_fn((40, 2), |(i, t)| ((i * 7 + t * 13) % 41) as f64 / 40.0);
    let mut prev = f64::INFINITY;
    for n in 2..=6 {
        let mut g =
            Grid::<f64>::from_fn(GridSpec::regular(2, n).unwrap(), |x| x[0].sin() * x[1].exp()).unwrap();
        g.hierarchize();
        let e = g.error(pts.view(), |x| x[0].sin() * x[1].exp()).unwrap();
        assert!(e < prev, "n={n}: {e} >= {prev}");
        prev = e;
    }
    let mut g = Grid::from_fn(GridSpec::regular(2, 3).unwrap(), parabola::<f64>).unwrap();
    g.hierarchize();
    let ex = g.clone();
    let e = g.error(pts.view(), |x| ex.evaluate(x).unwrap()).unwrap();
    assert_eq!(e, 0.0);
}

#[test]
fn evaluation_rejects_bad_points() {
    let g = Grid::<f64>::from_fn(GridSpec::regular(2, 3).unwrap(), parabola::<f64>).unwrap();
    assert!(matches!(g.evaluate(&[0.5]), Err(SgError::LengthMismatch { .. })));
    assert!(matches!(g.evaluate(&[0.5, 1.5]), Err(SgError::OutsideDomain { dim: 1, .. })));
    assert!(matches!(g.evaluate(&[-0.1, 0.5]), Err(SgError::OutsideDomain { dim: 0, .. })));
    assert!(matches!(g.evaluate(&[f64::NAN, 0.5]), Err(SgError::NonFinite { .. })));
    assert!(matches!(g.evaluate_recursive(&[f64::INFINITY, 0.5]), Err(SgError::NonFinite { .. })));
    let pts = Array2::from_shape_vec((2, 3), vec![0.1; 6]).unwrap();
    assert!(matches!(
        g.evaluate_batch(pts.view()),
        Err(SgError::LengthMismatch { what: "point columns", .. })
    ));
    let pts = Array2::from_shape_vec((2, 2), vec![0.1, 0.2, 0.3, f64::NAN]).unwrap();
    assert!(matches!(g.evaluate_batch(pts.view()), Err(SgError::NonFinite { row: 1, dim: 1, .. })));
    let empty = Array2::<f64>::zeros((0, 2));
    assert_eq!(g.evaluate_batch(empty.view()).unwrap().len(), 0);
    // A transposed (non-standard layout) view works too.
    let t = Array2::from_shape_vec((2, 3), vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6]).unwrap();
    let ys = g.evaluate_batch(t.t()).unwrap();
    assert!((ys[1] - g.evaluate(&[0.2, 0.5]).unwrap()).abs() < 1e-15);
    assert!(matches!(
        Grid::from_values(GridSpec::regular(2, 3).unwrap(), vec![0.0; 3]),
        Err(SgError::LengthMismatch { .. })
    ));
    assert!(matches!(
        VectorGrid::<f64>::from_values(GridSpec::regular(2, 3).unwrap(), 0, vec![]),
        Err(SgError::Zero { .. })
    ));
}

#[test]
fn f32_agrees_with_f64() {
    let mut rng = hetkit_testkit::rng("f32_agrees_with_f64");
    for spec in specs() {
        let v64 = random_values(&mut rng, spec.len() as usize);
        let v32: Vec<f32> = v64.iter().map(|&v| v as f32).collect();
        let mut g64 = Grid::from_values(spec.clone(), v64).unwrap();
        let mut g32 = Grid::from_values(spec.clone(), v32).unwrap();
        g64.hierarchize();
        g32.hierarchize();
        let h32: Vec<f64> = g32.values().iter().map(|&v| v.to_f64()).collect();
        assert_close(&h32, g64.values(), 1e-5);
        for _ in 0..10 {
            let x = random_point(&mut rng, spec.dim());
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let a = g32.evaluate(&x32).unwrap() as f64;
            assert!((a - g64.evaluate(&x).unwrap()).abs() < 1e-4);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn prop_hierarchize_is_linear_and_invertible(
        which in 0usize..9,
        seed in any::<u64>(),
        a in -3.0f64..3.0,
        b in -3.0f64..3.0,
    ) {
        let spec = &specs()[which];
        let n = spec.len() as usize;
        let mut r = seed;
        let mut draw = || { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((r >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0 };
        let u: Vec<f64> = (0..n).map(|_| draw()).collect();
        let v: Vec<f64> = (0..n).map(|_| draw()).collect();
        let mut hu = u.clone();
        let mut hv = v.clone();
        let mut hw: Vec<f64> = u.iter().zip(&v).map(|(x, y)| a * x + b * y).collect();
        r::hierarchize(spec, &mut hu, 1).unwrap();
        r::hierarchize(spec, &mut hv, 1).unwrap();
        r::hierarchize(spec, &mut hw, 1).unwrap();
        for j in 0..n {
            prop_assert!((hw[j] - (a * hu[j] + b * hv[j])).abs() < 1e-12);
        }
        r::dehierarchize(spec, &mut hu, 1).unwrap();
        for j in 0..n {
            prop_assert!((hu[j] - u[j]).abs() < 1e-13);
        }
    }
}
