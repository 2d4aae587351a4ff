//! The aborts and panics of issue 15 in sg-cpu, and the variant rule the book states.

use ndarray::Array2;
use sg_core::{GridSpec, SgError};
use sg_cpu::{Error, EvalTuning, EvalVariant, Evaluator, Hierarchizer, PaddedMatrix, PointPattern};

fn is_allocation(e: &Error) -> bool {
    matches!(e, Error::Sg(SgError::Allocation { .. }))
}

#[test]
fn plans_for_grids_beyond_memory_are_errors() {
    // regular(10, 31) used about 15 GB and aborted. This boundary grid has 2.3e15 blocks: its
    // plan needs more than the address space, so it is refused before any work whatever the
    // kernel's overcommit policy.
    let spec = GridSpec::regular(30, 2).unwrap().with_boundary().unwrap();
    let e = Evaluator::new(&spec).unwrap_err();
    assert!(is_allocation(&e), "{e}");
    let e = Hierarchizer::new(&spec).unwrap_err();
    assert!(is_allocation(&e), "{e}");
}

/// The exact case: 847 million blocks, a 48 GB block table. An error on machines with
/// less memory than that; on bigger ones it builds the plan (minutes, tens of GB): run by hand.
#[test]
#[ignore]
fn plans_for_regular_10_31() {
    let spec = GridSpec::regular(10, 31).unwrap();
    match Evaluator::new(&spec) {
        Ok(plan) => assert_eq!(plan.blocks(), 847_660_528),
        Err(e) => assert!(is_allocation(&e), "{e}"),
    }
}

#[test]
fn padded_matrix_row_out_of_range_is_an_error() {
    let a = PaddedMatrix::from_row_major(&[1.0, 2.0, 3.0, 4.0], 2).unwrap();
    assert_eq!(a.row(1).unwrap(), &[3.0, 4.0]);
    let m = a.row(99).unwrap_err().to_string();
    assert!(m.contains("matrix row 99") && m.contains("there are 2"), "{m}");
    let m = PaddedMatrix::<f64>::from_row_major(&[1.0], 0).unwrap_err().to_string();
    assert!(m.contains("columns (p) must be at least 1"), "{m}");
    let m = PaddedMatrix::from_row_major(&[1.0, 2.0, 3.0], 2).unwrap_err().to_string();
    assert!(m.contains("not a multiple of the row length 2"), "{m}");
    // An empty matrix with a huge row length: nothing to copy, but y would be huge.
    let empty = PaddedMatrix::<f64>::from_row_major(&[], usize::MAX / 64).unwrap();
    assert!(is_allocation(&sg_cpu::spvm::spvm(&[], &[], &empty).unwrap_err()));
    let m = sg_cpu::spvm::spvm(&[1.0], &[5], &a).unwrap_err().to_string();
    assert!(m.contains("spvm matrix row 5") && m.contains("there are 2"), "{m}");
}

#[test]
fn zero_components_is_named() {
    let spec = GridSpec::regular(2, 2).unwrap();
    let m = Hierarchizer::new(&spec).unwrap().hierarchize::<f64>(&mut [], 0).unwrap_err().to_string();
    assert!(m.contains("values per point (s) must be at least 1"), "{m}");
    let pts = Array2::<f64>::zeros((1, 2));
    let m = Evaluator::new(&spec).unwrap().evaluate::<f64>(&[], 0, pts.view()).unwrap_err().to_string();
    assert!(m.contains("values per point (s) must be at least 1"), "{m}");
}

/// The rule of the book's variant table, in its order: Cartesian, then SharedPrefix (both need
/// at least one tile of points), then BlocksParallel (fewer than 2 × threads tiles and at least
/// 64 blocks), else PointTiles.
#[test]
fn variant_choice_follows_the_documented_rule() {
    let threads = rayon::current_num_threads();
    let big = Evaluator::new(&GridSpec::regular(4, 6).unwrap()).unwrap(); // 84 blocks
    let small = Evaluator::new(&GridSpec::regular(2, 3).unwrap()).unwrap(); // 3 blocks
    assert!(big.blocks() >= 64 && small.blocks() < 64);
    let general = |m: usize| Array2::from_shape_fn((m, 4), |(i, t)| ((i * 7 + t * 3) % 11) as f64 / 10.0);
    // The largest m with fewer than 2 × threads tiles of 64 points.
    let most = (2 * threads - 1) * 64;
    let cases = [
        (&big, general(1), EvalVariant::BlocksParallel),
        (&big, general(0), EvalVariant::BlocksParallel),
        (&big, general(most), EvalVariant::BlocksParallel),
        (&big, general(most + 1), EvalVariant::PointTiles),
    ];
    for (plan, pts, want) in cases {
        let (got, pattern) = plan.choose_with(pts.view(), &EvalTuning::DEFAULT);
        assert_eq!(got, want, "m = {} ({pattern:?})", pts.nrows());
    }
    let pts2 = Array2::from_shape_fn((5, 2), |(i, t)| ((i + t) % 5) as f64 / 4.0);
    assert_eq!(small.choose_with(pts2.view(), &EvalTuning::DEFAULT).0, EvalVariant::PointTiles);
    // A Cartesian product of 8 x 8 x 1 x 1 = 64 points: Cartesian even with few tiles.
    let cart = Array2::from_shape_fn((64, 4), |(i, t)| match t {
        0 => (i / 8) as f64 / 8.0,
        1 => (i % 8) as f64 / 8.0,
        _ => 0.5,
    });
    let (v, p) = big.choose_with(cart.view(), &EvalTuning::DEFAULT);
    assert!(matches!(p, PointPattern::Cartesian { .. }));
    assert_eq!(v, EvalVariant::Cartesian);
    // Constant leading column, 64 points: SharedPrefix before BlocksParallel.
    let shared =
        Array2::from_shape_fn((64, 4), |(i, t)| if t == 0 { 0.25 } else { ((i * 5 + t) % 13) as f64 / 12.0 });
    assert_eq!(big.choose_with(shared.view(), &EvalTuning::DEFAULT).0, EvalVariant::SharedPrefix);
    // The same patterns below one tile: BlocksParallel.
    assert_eq!(
        big.choose_with(shared.slice(ndarray::s![..63, ..]), &EvalTuning::DEFAULT).0,
        EvalVariant::BlocksParallel
    );
}
