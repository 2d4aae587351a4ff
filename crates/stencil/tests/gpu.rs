//! The generated GPU kernels against the sequential reference, bitwise (they round every
//! product and sum as the CPU does), for both templates, unrolled and not, read-only loads on
//! and off, partial tiles, order 2, and parameter arrays; Himeno's fused residual. Skipped
//! without a GPU (testkit's policy); on the CUDA emulator they run.

use hetkit_testkit::gpu_or_skip;
use ndarray::Array3;
use stencil::{Config, GpuParams, Himeno, Stencil};

fn field<T: stencil::Element>(shape: (usize, usize, usize)) -> Array3<T> {
    Array3::from_shape_fn(shape, |(i, j, k)| {
        T::from_f64(((i * 73 + j * 151 + k * 37) * 2_654_435_761 % 16) as f64)
    })
}

fn params(sx: u32, sy: u32, dx: u32, dy: u32, read_only: bool) -> GpuParams {
    GpuParams { size_x: sx, size_y: sy, dim_x: dx, dim_y: dy, read_only }
}

fn check<T: stencil::Element>(s: &Stencil<T>, shape: (usize, usize, usize), sweeps: usize, ps: &[GpuParams]) {
    let u = field::<T>(shape);
    let mut want = u.clone();
    s.iterate(&mut want, sweeps, &Config::sequential()).unwrap();
    for p in ps {
        let mut got = u.clone();
        s.iterate(&mut got, sweeps, &Config::gpu().with_gpu_params(*p)).unwrap();
        assert!(got == want, "{} {p:?} {shape:?}: differs from the reference", T::NAME);
    }
}

#[test]
fn corner_free_template_matches_the_reference() {
    if gpu_or_skip("corner_free_template_matches_the_reference").is_none() {
        return;
    }
    // Partial tiles along both axes; unrolled 2 x 2, and not.
    let seven = Stencil::<f32>::seven_point(0.25, 0.125);
    check(&seven, (6, 21, 37), 3, &[params(16, 4, 8, 2, false), params(32, 2, 32, 2, true)]);
    // Order 2: a register queue of five planes.
    let thirteen = Stencil::<f64>::thirteen_point(0.5, 0.0625, 0.015625);
    check(&thirteen, (9, 11, 19), 2, &[params(16, 3, 16, 1, true)]);
}

#[test]
fn corner_template_matches_the_reference() {
    if gpu_or_skip("corner_template_matches_the_reference").is_none() {
        return;
    }
    let s = Stencil::<f64>::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0);
    check(&s, (5, 13, 35), 3, &[params(32, 4, 16, 2, false), params(16, 2, 16, 1, true)]);
    // Non-dyadic values: still bitwise, as nothing is contracted.
    let s = Stencil::<f32>::from_points(&[([0, 0, 0], 0.3), ([1, 1, 0], 0.1), ([-2, 0, 1], 0.7)]).unwrap();
    let u = Array3::from_shape_fn((7, 6, 20), |(i, j, k)| ((i * j + k) as f32 * 0.37).sin());
    let want = s.apply(u.view(), &Config::sequential()).unwrap();
    let got = s.apply(u.view(), &Config::gpu().with_gpu_params(params(16, 2, 16, 2, false))).unwrap();
    assert!(got == want);
}

#[test]
fn parameter_arrays_on_the_gpu() {
    if gpu_or_skip("parameter_arrays_on_the_gpu").is_none() {
        return;
    }
    let shape = (5, 9, 18);
    let w = Array3::from_shape_fn(shape, |(i, j, k)| 0.25 * ((i + 2 * j + k) % 4) as f64);
    let s = Stencil::<f64>::parse(
        "out[i][j][k] = w[i][j][k] * (u[i+1][j][k] + u[i][j][k-1]) + 0.5 * u[i][j][k] + b",
    )
    .unwrap()
    .array("w", w)
    .unwrap()
    .scalar("b", 1.5)
    .unwrap();
    check(&s, shape, 2, &[params(16, 2, 16, 2, true)]);
}

#[test]
fn gpu_configuration_errors() {
    if gpu_or_skip("gpu_configuration_errors").is_none() {
        return;
    }
    let s = Stencil::<f32>::seven_point(0.25, 0.125);
    let u = field::<f32>((4, 4, 4));
    assert!(s.apply(u.view(), &Config::gpu().with_gpu_params(params(16, 3, 16, 2, false))).is_err());
    // Nine planes of 72 x 24 doubles in shared memory: beyond the 48 KiB a kernel may declare.
    let wide = Stencil::<f64>::from_points(&[([0, 0, 0], 0.5), ([4, 4, 4], 0.5)]).unwrap();
    let e = wide
        .apply(field::<f64>((9, 9, 9)).view(), &Config::gpu().with_gpu_params(params(64, 16, 64, 16, false)));
    assert!(e.unwrap_err().to_string().contains("shared memory"));
    // The default parameters, and auto, which picks the GPU here.
    let want = s.apply(u.view(), &Config::sequential()).unwrap();
    assert!(s.apply(u.view(), &Config::gpu()).unwrap() == want);
    assert!(s.apply(u.view(), &Config::auto()).unwrap() == want);
}

#[test]
fn himeno_fused_residual_on_the_gpu() {
    if gpu_or_skip("himeno_fused_residual_on_the_gpu").is_none() {
        return;
    }
    let h = Himeno::<f64>::new(33, 33, 65).unwrap();
    for (n, want) in [6.713436944e-03, 6.438837856e-03].iter().enumerate() {
        let r = h.run(n + 1, &Config::gpu()).unwrap();
        assert!((r.gosa - want).abs() / want < 1e-9, "iteration {}: {} vs {want}", n + 1, r.gosa);
    }
    // The fused per-block sum equals the separate sequential one, and so do the fields.
    let h = Himeno::<f32>::new(9, 12, 40).unwrap();
    let (a, pa) = h.run_with_field(2, &Config::sequential()).unwrap();
    let (b, pb) = h.run_with_field(2, &Config::gpu()).unwrap();
    assert!((a.gosa - b.gosa).abs() / a.gosa < 1e-5, "{} vs {}", a.gosa, b.gosa);
    let worst = pa.iter().zip(&pb).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(worst < 1e-5, "{worst}");
}

#[test]
fn tuning_on_the_gpu_stores_the_best() {
    let Some(gpu) = gpu_or_skip("tuning_on_the_gpu_stores_the_best") else { return };
    let dir = tempfile::tempdir().unwrap();
    let cache = hetero_sched::tune::TuningCache::at(dir.path());
    let s = Stencil::<f32>::seven_point(0.25, 0.125);
    let mut seen = 0;
    let opts = stencil::tuning::TuneOptions { budget: 3, runs: 1, cache: Some(&cache), ..Default::default() };
    let r = stencil::tuning::tune_gpu(&gpu, &s, [6, 20, 40], opts, &mut |n| seen = n).unwrap();
    assert_eq!((r.evaluated, seen), (3, 3));
    assert!(r.best.is_some() && r.best_ms.is_finite(), "{r:?}");
    assert!(r.valid < r.space_size);
    assert!(r.stored.as_ref().is_some_and(|p| p.exists()));
}
