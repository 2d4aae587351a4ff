//! Property tests over every public entry point of sg-cpu with arbitrary grids, component counts,
//! value lengths, points (NaN, ±inf, outside [0, 1], empty batches, batches crossing the tile and
//! variant thresholds) and values (NaN, ±inf): no panic, and either the error sg-core reports
//! for the same input or a result equal to the sg-core reference.
//!
//! Small by default; `PROPTEST_CASES=20000 cargo test --release -p sg-cpu --test props` is the
//! long run.

use ndarray::Array2;
use proptest::prelude::*;
use sg_core::reference as r;
use sg_core::{Grid, GridSpec, SgError, VectorGrid};
use sg_cpu::spvm::{spvm, spvm_with};
use sg_cpu::{Error, EvalVariant, Evaluator, Hierarchizer, PaddedMatrix, SpvmVariant};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

const VARIANTS: [EvalVariant; 4] =
    [EvalVariant::PointTiles, EvalVariant::BlocksParallel, EvalVariant::SharedPrefix, EvalVariant::Cartesian];

fn small_spec() -> impl Strategy<Value = GridSpec> {
    (1usize..=5, 1u32..=4, any::<bool>(), any::<bool>(), prop::collection::vec(1u32..=5, 5)).prop_map(
        |(d, n, trunc, bnd, c)| {
            let n = if bnd { n.min(3) } else { n };
            let spec = if trunc { GridSpec::truncated(d, n, &c[..d]) } else { GridSpec::regular(d, n) };
            let spec = spec.unwrap();
            if bnd && d <= 4 { spec.with_boundary().unwrap() } else { spec }
        },
    )
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        12 => -1e3..1e3f64,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// Mostly valid coordinates (so that batches get evaluated), sometimes invalid ones.
fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![
        40 => 0.0..=1.0f64,
        3 => Just(0.5),
        2 => Just(0.0),
        2 => Just(1.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => -3.0..-1e-300f64,
        1 => 1.0000001..3.0f64,
    ]
}

/// NaN-aware closeness: same class and finite values within `1e-9 · (1 + scale)`.
fn close(a: f64, b: f64, scale: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= 1e-9 * (1.0 + scale)
}

/// The reference error for the same input, if any (values and points checked as sg-core does).
fn reference_eval(spec: &GridSpec, values: &[f64], s: usize, flat: &[f64]) -> Result<Vec<f64>, SgError> {
    let m = flat.len() / spec.dim();
    let mut out = vec![0.0; m * s];
    r::evaluate_batch_into(spec, values, s, flat, &mut out).map(|()| out)
}

/// Points with an optional structure: general rows, a constant leading column, a Cartesian
/// product or one repeated row, `m` from 0 to 200 (across the 64-point tile and the BlocksParallel threshold).
fn points_for(d: usize) -> impl Strategy<Value = Array2<f64>> {
    let general = (0usize..200).prop_flat_map(move |m| {
        prop::collection::vec(coordinate(), m * d)
            .prop_map(move |v| Array2::from_shape_vec((m, d), v).unwrap())
    });
    let shared = (64usize..140, 0.0..=1.0f64).prop_flat_map(move |(m, c0)| {
        prop::collection::vec(0.0..=1.0f64, m * d).prop_map(move |mut v| {
            v.chunks_mut(d).for_each(|row| row[0] = c0);
            Array2::from_shape_vec((m, d), v).unwrap()
        })
    });
    let cartesian =
        prop::collection::vec(prop::collection::btree_set(0u32..=64, 1..5), d).prop_map(move |sets| {
            let factors: Vec<Vec<f64>> =
                sets.iter().map(|s| s.iter().map(|&k| k as f64 / 64.0).collect()).collect();
            let m: usize = factors.iter().map(Vec::len).product();
            Array2::from_shape_fn((m, d), |(i, t)| {
                let stride: usize = factors[t + 1..].iter().map(Vec::len).product();
                factors[t][(i / stride) % factors[t].len()]
            })
        });
    // Every row the same point: every column is a shared prefix.
    let constant = (0usize..140, prop::collection::vec(0.0..=1.0f64, d))
        .prop_map(move |(m, row)| Array2::from_shape_fn((m, d), |(_, t)| row[t]));
    prop_oneof![3 => general, 1 => shared, 1 => cartesian, 1 => constant]
}

fn case() -> impl Strategy<Value = (GridSpec, usize, Vec<f64>, Array2<f64>)> {
    (small_spec(), 1usize..=3).prop_flat_map(|(spec, s)| {
        let n = spec.len() as usize * s;
        let d = spec.dim();
        (Just(spec), Just(s), prop::collection::vec(value(), n), points_for(d))
    })
}

proptest! {
    #![proptest_config(config())]

    /// Every evaluation variant, and the automatic choice, equal the reference (NaN where it has
    /// NaN) or return the error the reference returns.
    #[test]
    fn evaluate_matches_reference((spec, s, values, pts) in case()) {
        let plan = Evaluator::new(&spec).unwrap();
        let flat: Vec<f64> = pts.iter().copied().collect();
        let want = reference_eval(&spec, &values, s, &flat);
        let scale = values.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs())) * spec.num_blocks() as f64;
        let mut runs = vec![plan.evaluate(&values, s, pts.view())];
        runs.extend(VARIANTS.iter().map(|&v| plan.evaluate_with(v, &values, s, pts.view())));
        for got in runs {
            match (&want, got) {
                (Ok(w), Ok(g)) => {
                    prop_assert_eq!(g.len(), w.len());
                    for (a, b) in g.iter().zip(w) {
                        prop_assert!(close(*a, *b, scale), "{} vs {}", a, b);
                    }
                }
                (Err(w), Err(Error::Sg(g))) => prop_assert_eq!(format!("{g:?}"), format!("{w:?}")),
                (w, g) => prop_assert!(false, "reference {:?}, sg-cpu {:?}", w, g),
            }
        }
    }

    /// The grid-level entry points agree with sg-core's Grid and VectorGrid methods.
    #[test]
    fn grid_entry_points((spec, s, values, pts) in case()) {
        let vg = VectorGrid::from_values(spec.clone(), s, values.clone()).unwrap();
        let want = vg.evaluate_batch(pts.view());
        let got = sg_cpu::evaluate_batch_vector(&vg, pts.view());
        match (want, got) {
            (Ok(w), Ok(g)) => {
                prop_assert_eq!(w.dim(), g.dim());
                for (a, b) in g.iter().zip(&w) {
                    prop_assert!(close(*a, *b, 1e3 * spec.num_blocks() as f64));
                }
            }
            (Err(w), Err(Error::Sg(g))) => prop_assert_eq!(format!("{g:?}"), format!("{w:?}")),
            (w, g) => prop_assert!(false, "reference {:?}, sg-cpu {:?}", w, g),
        }
        let g0 = vg.component(0).unwrap();
        let (w, g) = (g0.evaluate_batch(pts.view()), sg_cpu::evaluate_batch(&g0, pts.view()));
        prop_assert_eq!(w.is_ok(), g.is_ok());
        // Hierarchization and its inverse through the grid-level functions.
        let mut a = vg.clone();
        let mut b = vg.clone();
        a.hierarchize();
        sg_cpu::hierarchize_vector(&mut b).unwrap();
        prop_assert!(a.values().iter().zip(b.values()).all(|(x, y)| close(*x, *y, 1e4)));
        a.dehierarchize();
        sg_cpu::dehierarchize_vector(&mut b).unwrap();
        prop_assert!(a.values().iter().zip(b.values()).all(|(x, y)| close(*x, *y, 1e4)));
        let mut ga = g0.clone();
        let mut gb = g0;
        ga.hierarchize();
        sg_cpu::hierarchize(&mut gb).unwrap();
        prop_assert!(ga.values().iter().zip(gb.values()).all(|(x, y)| close(*x, *y, 1e4)));
        sg_cpu::dehierarchize(&mut gb).unwrap();
        ga.dehierarchize();
        prop_assert!(ga.values().iter().zip(gb.values()).all(|(x, y)| close(*x, *y, 1e4)));
    }

    /// Plans on any small grid; hierarchization with arbitrary lengths and component counts:
    /// the reference's verdict, and the reference's values (NaN and ±inf included).
    #[test]
    fn hierarchize_matches_reference(spec in small_spec(), s in 0usize..3, extra in -2i64..2, seed in any::<u64>()) {
        let plan = Hierarchizer::new(&spec).unwrap();
        let len = (spec.len() as i64 * s as i64 + extra).max(0) as usize;
        let values: Vec<f64> = (0..len)
            .map(|j| match (j as u64 ^ seed) % 23 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                k => k as f64 - 11.5,
            })
            .collect();
        let mut want = values.clone();
        let mut got = values.clone();
        let w = r::hierarchize(&spec, &mut want, s);
        let g = plan.hierarchize(&mut got, s);
        prop_assert_eq!(w.is_ok(), g.is_ok());
        if w.is_ok() {
            for (a, b) in got.iter().zip(&want) {
                prop_assert!(close(*a, *b, 1e3), "{} vs {}", a, b);
            }
            r::dehierarchize(&spec, &mut want, s).unwrap();
            plan.dehierarchize(&mut got, s).unwrap();
            for (a, b) in got.iter().zip(&want) {
                prop_assert!(close(*a, *b, 1e3), "{} vs {}", a, b);
            }
        } else if s == 0 {
            prop_assert!(matches!(g, Err(Error::Sg(SgError::Zero { .. }))), "{:?}", g);
        } else {
            prop_assert!(matches!(g, Err(Error::Shape(_))), "{:?}", g);
        }
    }

    /// spvm with arbitrary shapes: PaddedMatrix and both variants give the reference's verdict
    /// and (up to summation order) its values; rows past the matrix are errors, also from `row`.
    #[test]
    fn spvm_matches_reference(
        x in prop::collection::vec(value(), 0..40),
        ix in prop::collection::vec(0usize..12, 0..40),
        a in prop::collection::vec(value(), 0..60),
        p in 0usize..6,
        tile in 0usize..4,
        r_probe in 0usize..20,
    ) {
        let want = r::spvm(&x, &ix, &a, p);
        let m = match PaddedMatrix::from_row_major(&a, p) {
            Err(Error::Sg(e)) => {
                prop_assert!(matches!(e, SgError::Zero { .. } | SgError::NotMultiple { .. }), "{:?}", e);
                // The matrix is built before spvm sees x and ix: the same kind of error as the
                // reference's whenever the reference gets as far as the matrix.
                if x.len() == ix.len() {
                    prop_assert_eq!(std::mem::discriminant(&want.unwrap_err()), std::mem::discriminant(&e));
                }
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
            Ok(m) => m,
        };
        prop_assert_eq!(m.row(r_probe).is_ok(), r_probe < m.rows());
        if let Ok(row) = m.row(r_probe) {
            let want_row = &a[r_probe * p..(r_probe + 1) * p];
            prop_assert!(row.iter().zip(want_row).all(|(u, v)| close(*u, *v, 0.0)), "{:?} vs {:?}", row, want_row);
        }
        let runs = [spvm(&x, &ix, &m), spvm_with(SpvmVariant::Rows, &x, &ix, &m), spvm_with(SpvmVariant::Columns { tile }, &x, &ix, &m)];
        for got in runs {
            match (&want, got) {
                (Ok(w), Ok(g)) => {
                    let scale = x.iter().chain(&a).filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
                    for (u, v) in g.iter().zip(w) {
                        prop_assert!(close(*u, *v, scale * scale * x.len() as f64), "{} vs {}", u, v);
                    }
                }
                (Err(w), Err(Error::Sg(g))) => prop_assert_eq!(format!("{g:?}"), format!("{w:?}")),
                (w, g) => prop_assert!(false, "reference {:?}, sg-cpu {:?}", w, g),
            }
        }
    }
}

/// A scalar grid evaluated through the free function equals sg-core's Grid method on a batch of
/// every point of the grid itself (the interpolation property: surpluses reproduce nodal values).
#[test]
fn interpolates_at_its_own_points() {
    for spec in [
        GridSpec::regular(3, 4).unwrap(),
        GridSpec::truncated(3, 4, &[4, 2, 3]).unwrap().with_boundary().unwrap(),
    ] {
        let f = |x: &[f64]| x.iter().map(|v| (3.0 * v).sin()).sum::<f64>();
        let mut g = Grid::from_fn(spec, f).unwrap();
        let nodal = g.values().to_vec();
        sg_cpu::hierarchize(&mut g).unwrap();
        let x = g.points().unwrap();
        let y = sg_cpu::evaluate_batch(&g, x.view()).unwrap();
        for (a, b) in y.iter().zip(&nodal) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }
}
