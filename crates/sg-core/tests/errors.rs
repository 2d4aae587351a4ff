//! The panics, aborts and misleading messages of issue 15, each as a test: sizes that cannot be
//! allocated are errors, and every message names the quantity that is wrong.

use ndarray::Array2;
use sg_core::reference::{self as r, spvm};
use sg_core::{BlockTable, Grid, GridSpec, SgError, SubspaceTables, VectorGrid};

fn message<T: std::fmt::Debug>(r: Result<T, SgError>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn huge_grids_are_allocation_errors_not_panics_or_aborts() {
    // Was: "capacity overflow" panic (d = 20, n = 24) and a 4.9 PB allocation abort (d = 6, n = 31).
    // Every size here is beyond the 128 TiB address space, so the allocator refuses it whatever
    // the kernel's overcommit policy (a merely large size could be granted and then fill memory).
    for (d, n) in [(20, 24), (6, 31), (10, 31)] {
        let spec = GridSpec::regular(d, n).unwrap();
        let err = Grid::<f64>::zeros(spec.clone()).unwrap_err();
        assert!(matches!(err, SgError::Allocation { .. } | SgError::TooManyPoints { .. }), "{d} {n}: {err}");
        assert!(Grid::<f32>::from_fn(spec.clone(), |_| 0.0).is_err());
        assert!(VectorGrid::<f64>::from_fn(spec.clone(), 3, |_, _| {}).is_err());
        assert!(spec.point_matrix::<f64>().is_err());
    }
    // Small grid, huge number of components.
    let spec = GridSpec::regular(2, 3).unwrap();
    assert!(matches!(
        VectorGrid::<f64>::from_fn(spec, usize::MAX / 2, |_, _| {}),
        Err(SgError::Allocation { .. })
    ));
}

#[test]
fn huge_block_tables_are_allocation_errors() {
    // Evaluator::new / Hierarchizer::new on regular(10, 31) used about 15 GB and aborted: their
    // block table alone is 847 660 528 blocks × 48 bytes. Counted in closed form, not enumerated.
    assert_eq!(GridSpec::regular(10, 31).unwrap().num_blocks(), 847_660_528);
    // A boundary grid of 2.3e15 blocks (of one or two points each): 2.7e17 bytes of levels,
    // beyond the address space, so refused whatever the overcommit policy.
    let spec = GridSpec::regular(30, 2).unwrap().with_boundary().unwrap();
    let blocks = 3u64.pow(30) + 30 * 3u64.pow(29);
    assert_eq!(spec.num_blocks(), blocks);
    match BlockTable::new(&spec) {
        Err(SgError::Allocation { bytes, .. }) => assert!(bytes >= u128::from(blocks) * 4 * 30),
        other => panic!("expected an allocation error, got {other:?}"),
    }
}

#[test]
fn boundary_grid_too_large_is_an_error() {
    // Was: a panic at d = 40, n = 4.
    assert!(matches!(GridSpec::regular(40, 4).unwrap().with_boundary(), Err(SgError::TooManyPoints { .. })));
    assert!(GridSpec::regular(64, 31).is_err());
}

#[test]
fn tables_reject_sizes_the_grids_reject() {
    assert!(matches!(SubspaceTables::new(32, &[3]), Err(SgError::LevelTooLarge { .. })));
    assert!(matches!(SubspaceTables::new(u32::MAX, &[3]), Err(SgError::LevelTooLarge { .. })));
    assert!(matches!(SubspaceTables::new(3, &vec![3; 65]), Err(SgError::DimensionTooLarge { .. })));
    // Counts above u128 in the recurrence are reported, not wrapped.
    assert!(matches!(SubspaceTables::new(31, &[31; 64]), Err(SgError::TooManyPoints { .. })));
}

#[test]
fn num_blocks_matches_enumeration() {
    let specs = [
        GridSpec::regular(3, 4).unwrap(),
        GridSpec::regular(3, 4).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(4, 5, &[1, 5, 2, 3]).unwrap().with_boundary().unwrap(),
        GridSpec::regular(1, 6).unwrap().with_boundary().unwrap(),
        GridSpec::regular(6, 1).unwrap().with_boundary().unwrap(),
    ];
    for spec in specs {
        assert_eq!(spec.num_blocks(), spec.blocks().count() as u64, "{spec:?}");
    }
}

#[test]
fn spvm_messages_name_the_real_quantity() {
    // Was "expected length 2, got 2" for p = 0.
    let m = message(spvm(&[1.0], &[0], &[1.0, 2.0], 0));
    assert!(m.contains("columns (p) must be at least 1"), "{m}");
    // Was "for a grid of 3 points".
    let m = message(spvm(&[1.0], &[7], &[1.0, 2.0, 3.0], 1));
    assert!(m.contains("spvm matrix row 7") && m.contains("there are 3") && !m.contains("grid"), "{m}");
    let m = message(spvm(&[1.0], &[0], &[1.0, 2.0, 3.0], 2));
    assert!(m.contains("length 3 is not a multiple of the row length 2"), "{m}");
    // An empty matrix with a huge p no longer allocates p values.
    assert!(matches!(spvm::<f64>(&[], &[], &[], usize::MAX / 4), Err(SgError::Allocation { .. })));
}

#[test]
fn component_message_names_components() {
    // Was "linear index 5 out of range for a grid of 2 points".
    let g = VectorGrid::<f64>::from_fn(GridSpec::regular(2, 2).unwrap(), 2, |_, _| {}).unwrap();
    let m = message(g.component(5));
    assert!(m.contains("component 5") && m.contains("there are 2") && !m.contains("point"), "{m}");
    let m = message(GridSpec::regular(2, 2).unwrap().idx2gp(9));
    assert!(m.contains("grid point (linear index) 9") && m.contains("there are 5"), "{m}");
    let m = message(GridSpec::regular(2, 2).unwrap().parent(0, 4, sg_core::Side::Left));
    assert!(m.contains("dimension 4") && m.contains("there are 2"), "{m}");
}

#[test]
fn float_values_in_messages_are_short() {
    // Was -1e-300 printed as a 300-digit decimal.
    let g = Grid::<f64>::zeros(GridSpec::regular(2, 2).unwrap()).unwrap();
    let m = message(g.evaluate(&[0.5, -1e-300]));
    assert!(m.contains("-1e-300") && m.len() < 80, "{m}");
    let m = message(g.evaluate(&[1e300, 0.5]));
    assert!(m.contains("1e300") && m.len() < 80, "{m}");
    let m = message(g.evaluate(&[0.5, f64::NEG_INFINITY]));
    assert!(m.contains("-inf"), "{m}");
}

#[test]
fn stacking_different_grids_says_so() {
    let a = Grid::<f64>::zeros(GridSpec::regular(2, 3).unwrap()).unwrap();
    let b = Grid::<f64>::zeros(GridSpec::truncated(2, 3, &[3, 3]).unwrap()).unwrap();
    let c = Grid::<f64>::zeros(GridSpec::truncated(2, 3, &[3, 2]).unwrap()).unwrap();
    assert_eq!(VectorGrid::from_components(&[a.clone(), b, c]), Err(SgError::DifferentGrids { index: 2 }));
    assert_eq!(
        VectorGrid::<f64>::from_components(&[]),
        Err(SgError::Zero { what: "number of component grids" })
    );
}

#[test]
fn relative_error_checks_lengths_and_keeps_nan() {
    assert!(matches!(r::relative_l2_error(&[1.0, 2.0], &[1.0]), Err(SgError::LengthMismatch { .. })));
    assert!(r::relative_l2_error(&[f64::NAN], &[1.0]).unwrap().is_nan());
    assert!(r::relative_l2_error(&[1.0], &[f64::NAN]).unwrap().is_nan());
    assert_eq!(r::relative_l2_error(&[3.0], &[0.0]).unwrap(), 3.0);
    assert_eq!(r::relative_l2_error::<f64>(&[], &[]).unwrap(), 0.0);
}

#[test]
fn flat_points_not_a_multiple_of_d() {
    let spec = GridSpec::regular(2, 2).unwrap();
    let values = vec![0.0; spec.len() as usize];
    let mut out = vec![0.0; 1];
    let err = r::evaluate_batch_into(&spec, &values, 1, &[0.5, 0.5, 0.5], &mut out).unwrap_err();
    assert_eq!(err, SgError::NotMultiple { what: "flat points (m × d)", len: 3, row: 2 });
    let pts = Array2::<f64>::zeros((0, 2));
    assert_eq!(Grid::from_values(spec, values).unwrap().evaluate_batch(pts.view()).unwrap().len(), 0);
}

#[test]
fn points_helper_agrees_with_the_bijection() {
    let specs = [
        GridSpec::regular(3, 4).unwrap(),
        GridSpec::truncated(3, 4, &[4, 1, 2]).unwrap().with_boundary().unwrap(),
        GridSpec::regular(1, 5).unwrap().with_boundary().unwrap(),
    ];
    for spec in specs {
        let x = spec.point_matrix::<f64>().unwrap();
        assert_eq!(x.dim(), (spec.len() as usize, spec.dim()));
        for (j, row) in x.rows().into_iter().enumerate() {
            let (levels, indices) = spec.idx2gp(j as u64).unwrap();
            let want: Vec<f64> =
                levels.iter().zip(&indices).map(|(&l, &i)| i as f64 / (1u64 << l) as f64).collect();
            assert_eq!(row.to_vec(), want);
            assert_eq!(spec.coordinates(j as u64).unwrap(), want);
            assert_eq!(spec.gp2idx(&levels, &indices).unwrap(), j as u64);
        }
        let x32 = spec.point_matrix::<f32>().unwrap();
        assert!(x32.iter().zip(&x).all(|(&a, &b)| a as f64 == b)); // dyadic: exact in f32
    }
}
