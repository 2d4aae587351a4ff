use hetkit_testkit::{max_rel_err, rng};
use rand::Rng;
use sg_cpu::spvm::{spvm, spvm_with};
use sg_cpu::{PaddedMatrix, SpvmVariant};

#[test]
fn spvm_variants_match_reference() {
    let mut r = rng("spvm_variants_match_reference");
    for (rows, p, m) in [(1, 1, 1), (7, 3, 5), (100, 129, 40), (50, 5000, 17), (300, 17, 0), (64, 9000, 64)] {
        let a: Vec<f64> = (0..rows * p).map(|_| r.random_range(-1.0..1.0)).collect();
        let x: Vec<f64> = (0..m).map(|_| r.random_range(-1.0..1.0)).collect();
        let ix: Vec<usize> = (0..m).map(|_| r.random_range(0..rows)).collect();
        let want = sg_core::reference::spvm(&x, &ix, &a, p).unwrap();
        let pm = PaddedMatrix::from_row_major(&a, p).unwrap();
        for v in [SpvmVariant::Rows, SpvmVariant::Columns { tile: 64 }, SpvmVariant::Columns { tile: 1000 }] {
            let got = spvm_with(v, &x, &ix, &pm).unwrap();
            assert!(max_rel_err(&got, &want, 1.0) < 1e-12, "{v:?} rows={rows} p={p} m={m}");
        }
        assert!(max_rel_err(&spvm(&x, &ix, &pm).unwrap(), &want, 1.0) < 1e-12);
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let want32 = sg_core::reference::spvm(&x32, &ix, &a32, p).unwrap();
        let got32 = spvm(&x32, &ix, &PaddedMatrix::from_row_major(&a32, p).unwrap()).unwrap();
        assert!(max_rel_err(&got32, &want32, 1.0) < 1e-5);
    }
}

#[test]
fn padded_rows_are_aligned_and_errors_reported() {
    let a: Vec<f32> = (0..35).map(|v| v as f32).collect();
    let pm = PaddedMatrix::from_row_major(&a, 7).unwrap();
    for r in 0..5 {
        assert_eq!(pm.row(r).unwrap().as_ptr() as usize % 64, 0);
        assert_eq!(pm.row(r).unwrap(), &a[r * 7..r * 7 + 7]);
    }
    assert!(PaddedMatrix::from_row_major(&a, 6).is_err());
    assert!(spvm(&[1.0f32], &[5], &pm).is_err());
    assert!(spvm(&[1.0f32, 2.0], &[0], &pm).is_err());
}
