//! Issue 24's contract, through `hetkit::stencil` with the names exactly as written there.

use hetkit::ndarray::Array3;
use hetkit::stencil::{Config, Himeno, HimenoReport, Stencil};

fn dyadic(shape: (usize, usize, usize)) -> Array3<f64> {
    Array3::from_shape_fn(shape, |(i, j, k)| ((i * 5 + j * 11 + k * 3) % 16) as f64)
}

/// Every configuration, the GPU ones only when a GPU is present.
fn configs() -> Vec<Config> {
    let mut v = vec![
        Config::sequential(),
        Config::cpu(),
        Config::slabs(1),
        Config::slabs(2),
        Config::slabs(3),
        Config::auto(),
    ];
    if hetkit::cuda::Gpu::new(0).is_ok() {
        v.push(Config::gpu());
    }
    v
}

#[test]
fn constructors_features_apply_and_iterate() -> hetkit::Result<()> {
    let from_points: Stencil<f64> =
        Stencil::<f64>::from_points(&[([0, 0, 0], 0.5), ([1, 0, 0], 0.25), ([0, -1, 2], 0.25)])?;
    assert_eq!(from_points.halo(), [1, 1, 2]);
    assert_eq!(from_points.num_points(), 3);
    assert!(from_points.has_corners());
    let seven = Stencil::<f64>::seven_point(0.25, 0.125);
    let thirteen = Stencil::<f64>::thirteen_point(0.5, 0.0625, 0.015625);
    let twenty_seven = Stencil::<f64>::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0);
    assert_eq!(
        [seven.flops_per_point(), thirteen.flops_per_point(), twenty_seven.flops_per_point()],
        [8, 15, 30]
    );
    assert_eq!([seven.num_points(), thirteen.num_points(), twenty_seven.num_points()], [7, 13, 27]);
    assert_eq!(
        [seven.has_corners(), thirteen.has_corners(), twenty_seven.has_corners()],
        [false, false, true]
    );
    for s in [&from_points, &seven, &thirteen, &twenty_seven] {
        let input = dyadic((7, 9, 13));
        let want: Array3<f64> = s.apply(input.view(), &Config::sequential())?;
        let mut swept = input.clone();
        s.iterate(&mut swept, 3, &Config::sequential())?;
        for config in configs() {
            assert!(s.apply(input.view(), &config)? == want, "{config:?}");
            let mut field = input.clone();
            s.iterate(&mut field, 3, &config)?;
            assert!(field == swept, "{config:?}");
        }
    }
    Ok(())
}

#[test]
fn parse_with_scalars_and_arrays() -> hetkit::Result<()> {
    let shape = (6, 6, 6);
    let s = Stencil::<f32>::parse(
        "t = c * (u[i+1][j][k] + u[i-1][j][k]); out[i][j][k] = t + w[i][j][k] * u[i][j][k]",
    )?
    .scalar("c", 0.25)?
    .array("w", Array3::from_elem(shape, 0.5f32))?;
    let u = Array3::from_shape_fn(shape, |(i, j, k)| (i + j + k) as f32);
    let out = s.apply(u.view(), &Config::cpu())?;
    assert_eq!(out[[2, 3, 4]], 0.25 * (10.0 + 8.0) + 0.5 * 9.0);
    let err = Stencil::<f32>::parse("out[i][j][k] = u[i+1][j][k] + v[i-1][j][k]").unwrap_err();
    assert!(err.to_string().contains("position"), "{err}");
    let err: hetkit::Error = err.into();
    assert!(matches!(err, hetkit::Error::Stencil(_)));
    Ok(())
}

#[test]
fn errors_not_panics() {
    let s = Stencil::<f64>::seven_point(1.0, 1.0);
    assert!(s.apply(Array3::zeros((2, 5, 5)).view(), &Config::cpu()).is_err());
    assert!(Stencil::<f64>::from_points(&[]).is_err());
    if hetkit::cuda::Gpu::new(0).is_err() {
        let e: hetkit::Error = s.apply(dyadic((4, 4, 4)).view(), &Config::gpu()).unwrap_err().into();
        assert!(e.is_no_gpu(), "{e}");
    }
}

#[test]
fn himeno_report() -> hetkit::Result<()> {
    let report: HimenoReport = Himeno::<f64>::new(33, 33, 65)?.run(3, &Config::cpu())?;
    let HimenoReport { gosa, mflops, seconds } = report;
    assert!((gosa - 6.229342509e-03).abs() / 6.229342509e-03 < 1e-9, "{gosa}");
    let points = 30.0 * 30.0 * 62.0;
    assert!((mflops - 34.0 * points * 3.0 / seconds / 1e6).abs() <= 1e-9 * mflops);
    Ok(())
}
