//! The facade's sparse grid API runs the fast kernels and agrees with the sequential references;
//! its errors fold into one type.

use hetkit::ndarray::Array2;
use hetkit::sg::{Grid, GridSpec, VectorGrid, reference};
use hetkit::{Error, Real};
use hetkit_testkit::{assert_close, gpu_or_skip, rng};
use rand::Rng;

fn specs() -> Vec<GridSpec> {
    vec![
        GridSpec::regular(1, 1).unwrap(),
        GridSpec::regular(2, 5).unwrap(),
        GridSpec::regular(3, 4).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(4, 5, &[2, 5, 1, 3]).unwrap(),
        GridSpec::regular(5, 3).unwrap(),
    ]
}

fn bump<T: Real>(x: &[T]) -> T {
    let s: f64 =
        x.iter().map(|&v| sg_core::Real::to_f64(v)).enumerate().map(|(t, v)| (t as f64 + 1.0) * v).sum();
    T::from_f64((s * 1.3).sin() + 0.25)
}

fn random_points<T: Real>(m: usize, d: usize, seed: &mut impl Rng) -> Array2<T> {
    Array2::from_shape_fn((m, d), |_| T::from_f64(seed.random::<f64>()))
}

fn fast_equals_reference<T: Real + hetkit_testkit::Real>(rel: f64) {
    let mut r = rng("fast_equals_reference");
    for spec in specs() {
        let nodal = Grid::<T>::from_fn(spec.clone(), bump::<T>).unwrap();
        let mut fast = nodal.clone();
        fast.hierarchize().unwrap();
        let mut slow = nodal.as_reference().clone();
        slow.hierarchize();
        assert_close(fast.values(), slow.values(), rel);

        let points = random_points::<T>(37, spec.dim(), &mut r);
        let got = fast.evaluate_batch(points.view()).unwrap();
        let want = slow.evaluate_batch(points.view()).unwrap();
        assert_close(got.as_slice().unwrap(), want.as_slice().unwrap(), rel);
        // A transposed (column-major) view of the same points gives the same values.
        let fortran = points.t().as_standard_layout().t().to_owned();
        let again = fast.evaluate_batch(fortran.view()).unwrap();
        assert_close(again.as_slice().unwrap(), got.as_slice().unwrap(), 0.0);

        let e_fast = fast.error(points.view(), bump::<T>).unwrap();
        let e_slow = slow.error(points.view(), bump::<T>).unwrap();
        assert_close(&[e_fast], &[e_slow], rel * 10.0);

        fast.dehierarchize().unwrap();
        assert_close(fast.values(), nodal.values(), rel * 10.0);
    }
}

#[test]
fn fast_paths_equal_the_references_f64() {
    fast_equals_reference::<f64>(1e-12);
}

#[test]
fn fast_paths_equal_the_references_f32() {
    fast_equals_reference::<f32>(1e-4);
}

#[test]
fn vector_grids_equal_the_references() {
    let mut r = rng("vector_grids_equal_the_references");
    let spec = GridSpec::regular(3, 5).unwrap().with_boundary().unwrap();
    let f = |x: &[f64], out: &mut [f64]| {
        out[0] = bump(x);
        out[1] = x[0] * x[1];
        out[2] = 1.0;
    };
    let mut fast = VectorGrid::from_fn(spec.clone(), 3, f).unwrap();
    let mut slow = reference::VectorGrid::from_fn(spec.clone(), 3, f).unwrap();
    fast.hierarchize().unwrap();
    slow.hierarchize();
    assert_close(fast.values(), slow.values(), 1e-12);
    let points = random_points::<f64>(50, 3, &mut r);
    let got = fast.evaluate_batch(points.view()).unwrap();
    let want = slow.evaluate_batch(points.view()).unwrap();
    assert_close(got.as_slice().unwrap(), want.as_slice().unwrap(), 1e-12);
    let c1 = fast.component(1).unwrap();
    assert_close(&c1.evaluate_batch(points.view()).unwrap().to_vec(), &got.column(1).to_vec(), 1e-12);
}

#[test]
fn clones_hierarchize_independently() {
    let spec = GridSpec::regular(2, 4).unwrap();
    let a = Grid::<f64>::from_fn(spec, bump::<f64>).unwrap();
    let mut b = a.clone();
    b.hierarchize().unwrap();
    assert_ne!(a, b, "hierarchizing a clone must not touch the original");
    let mut c = a.clone();
    c.hierarchize().unwrap();
    assert_eq!(b, c);
}

#[test]
fn bad_input_is_an_error_of_one_type() {
    assert!(matches!(GridSpec::regular(0, 3).map_err(Error::from), Err(Error::Grid(_))));
    let grid = Grid::<f64>::zeros(GridSpec::regular(2, 3).unwrap()).unwrap();
    let wrong_cols = Array2::<f64>::zeros((4, 3));
    assert!(grid.evaluate_batch(wrong_cols.view()).is_err());
    let outside = hetkit::ndarray::array![[0.5, 1.5]];
    assert!(matches!(grid.evaluate_batch(outside.view()), Err(Error::Grid(_))));
    let nan = hetkit::ndarray::array![[0.5, f64::NAN]];
    assert!(grid.evaluate_batch(nan.view()).is_err());
    assert!(Grid::<f64>::from_values(GridSpec::regular(2, 3).unwrap(), vec![0.0; 3]).is_err());
    let err: Box<dyn std::error::Error + Send + Sync> = grid.evaluate(&[0.5]).unwrap_err().into();
    assert!(!err.to_string().is_empty());
}

#[test]
fn to_device_reports_a_missing_gpu_as_an_error() {
    let grid = Grid::<f64>::from_fn(GridSpec::regular(2, 3).unwrap(), bump::<f64>).unwrap();
    match gpu_or_skip("to_device_reports_a_missing_gpu_as_an_error") {
        Some(gpu) => {
            let mut on_gpu = grid.to_device(&gpu).unwrap();
            on_gpu.hierarchize().unwrap();
            let mut host = grid.clone();
            host.hierarchize().unwrap();
            assert_close(&on_gpu.download_values().unwrap(), host.values(), 1e-12);
        }
        None => {
            let err = hetkit::cuda::Gpu::new(0).map_err(Error::from).unwrap_err();
            assert!(err.is_no_gpu(), "{err}");
        }
    }
}
