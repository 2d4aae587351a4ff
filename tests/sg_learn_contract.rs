//! The contract of issue 20, through the facade with the names exactly as written there.

use hetkit::ndarray::{Array1, Array2, array};
use hetkit::sg_learn::{
    Basis, Clustering, DensityEstimator, DensityModel, GridSpec, RegressionModel, Regressor,
    adjusted_rand_index,
};

fn grid_points(m: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, d), |(i, k)| (((i + 1) * (2 * k + 5) * 31) % 997) as f64 / 996.0)
}

#[test]
fn regression_contract() -> hetkit::Result<()> {
    let x = grid_points(300, 3);
    let y: Array1<f64> = x.rows().into_iter().map(|r| r[0] * r[1] + r[2]).collect();
    let mut errors = Vec::new();
    for basis in [Basis::Linear, Basis::ModifiedLinear] {
        let spec: GridSpec = GridSpec::regular(3, 4)?;
        let model: RegressionModel = Regressor::new(spec)
            .basis(basis)
            .lambda(1e-6)
            .max_iterations(200)
            .tolerance(1e-10)
            .fit(x.view(), y.view())?;
        let p: Array1<f64> = model.predict(x.view())?;
        let mse: f64 = model.mse(x.view(), y.view())?;
        let direct = p.iter().zip(&y).map(|(a, b)| (a - b).powi(2)).sum::<f64>() / 300.0;
        assert!((mse - direct).abs() < 1e-15);
        errors.push(mse);
    }
    // the target is not zero on the boundary: only the modified basis can follow it there
    assert!(errors[1] < 1e-2 && errors[1] < errors[0] / 10.0, "{errors:?}");
    // the closed form: modified linear level 1 gives mean(y) / (1 + lambda)
    let m = Regressor::new(GridSpec::regular(3, 1)?)
        .basis(Basis::ModifiedLinear)
        .lambda(0.5)
        .fit(x.view(), y.view())?;
    let p = m.predict(array![[0.2, 0.3, 0.4]].view())?;
    assert!((p[0] - y.mean().unwrap() / 1.5).abs() < 1e-12);
    Ok(())
}

#[test]
fn density_contract() -> hetkit::Result<()> {
    // one point at 0.5, level 2 in 1-D, lambda 0: alpha = (48/7, -36/7, -36/7), so the
    // estimate at 0.5 is 48/7 and at 0.25 is 48/7/2 - 36/7 = -12/7.
    let model: DensityModel = DensityEstimator::new(GridSpec::regular(1, 2)?)
        .lambda(0.0)
        .max_iterations(10)
        .tolerance(1e-14)
        .fit(array![[0.5]].view())?;
    let f = model.evaluate(array![[0.5], [0.25]].view())?;
    assert!((f[0] - 48.0 / 7.0).abs() < 1e-10 && (f[1] + 12.0 / 7.0).abs() < 1e-10);
    Ok(())
}

#[test]
fn clustering_contract() -> hetkit::Result<()> {
    let blobs = hetkit::sg_learn::datasets::GaussianBlobs {
        clusters: 3,
        dim: 2,
        sigma: 0.04,
        separation: 7.0,
        noise: 0.0,
    };
    let (x, truth) = blobs.generate(300, 5)?;
    let labels: Vec<Option<usize>> =
        Clustering::new(GridSpec::regular(2, 5)?).lambda(1e-3).neighbors(5).threshold(0.1).fit(x.view())?;
    assert_eq!(labels.len(), 300);
    assert!(adjusted_rand_index(&labels, &truth) > 0.9);
    Ok(())
}

#[test]
fn adjusted_rand_index_contract() {
    let a = [Some(0), Some(0), Some(1), Some(1), Some(2), Some(2)];
    let b = [Some(0), Some(1), Some(0), Some(1), Some(0), Some(1)];
    assert!((adjusted_rand_index(&a, &b) + 4.0 / 11.0).abs() < 1e-12);
    let noise = [Some(0), Some(0), None, None];
    assert_eq!(adjusted_rand_index(&noise, &[Some(3), Some(3), Some(4), Some(4)]), 1.0);
}

#[test]
fn bad_input_is_an_error_through_the_facade() -> hetkit::Result<()> {
    let r = Regressor::new(GridSpec::regular(2, 2)?);
    let outside = array![[0.5, 1.01]];
    let err = r.fit(outside.view(), array![1.0].view()).unwrap_err();
    assert!(matches!(hetkit::Error::from(err), hetkit::Error::Learn(_)));
    assert!(r.fit(array![[f64::NAN, 0.5]].view(), array![1.0].view()).is_err());
    assert!(r.fit(array![[0.5, 0.5]].view(), array![1.0, 2.0].view()).is_err());
    assert!(r.fit(Array2::zeros((0, 2)).view(), Array1::zeros(0).view()).is_err());
    assert!(
        DensityEstimator::new(GridSpec::regular(2, 2)?).fit(array![[f64::INFINITY, 0.5]].view()).is_err()
    );
    assert!(Clustering::new(GridSpec::regular(2, 2)?).fit(Array2::zeros((0, 2)).view()).is_err());
    Ok(())
}
