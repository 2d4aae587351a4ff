//! The learners on the GPU backend equal the CPU backend (to the CG tolerance; `f32` products
//! to single-precision accuracy), and a missing device is a clear error. GPU tests skip without
//! a device (fail under `HETKIT_REQUIRE_GPU=1`); without one they run on the emulator:
//! `scripts/cuda-emu.sh -p sg-learn --test gpu`.

use std::sync::Arc;

use hetkit_testkit::gpu_or_skip;
use sg_learn::datasets::{GaussianBlobs, friedman1};
use sg_learn::{
    AdaptiveGrid, Basis, Clustering, CpuStreaming, DensityEstimator, GpuStreaming, GridSpec, LearnError,
    Regressor, adjusted_rand_index,
};

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs())).max(1e-300);
    a.iter().zip(b).fold(0.0, |e, (x, y)| e.max((x - y).abs() / scale))
}

#[test]
fn gpu_regression_equals_cpu_regression() {
    let Some(gpu) = gpu_or_skip("gpu_regression_equals_cpu_regression") else { return };
    let (x, y) = friedman1(257, 1.0, 11);
    let (xt, yt) = friedman1(101, 0.0, 12);
    for (basis, spec) in
        [(Basis::ModifiedLinear, GridSpec::regular(10, 2)), (Basis::Linear, GridSpec::regular(4, 3))]
    {
        let d = spec.as_ref().unwrap().dim();
        let (xs, xts) = (x.slice(ndarray::s![.., ..d]), xt.slice(ndarray::s![.., ..d]));
        let fit = |r: Regressor| {
            r.basis(basis).lambda(1e-3).tolerance(1e-12).max_iterations(500).fit(xs, y.view()).unwrap()
        };
        let cpu = fit(Regressor::new(spec.clone().unwrap()));
        let dev = fit(Regressor::new(spec.clone().unwrap()).gpu(&gpu));
        assert!(dev.report().converged, "{:?}", dev.report());
        assert!(max_rel(dev.alpha(), cpu.alpha()) < 1e-8, "{basis:?}: alpha differs");
        let (pc, pg) = (cpu.predict(xts).unwrap(), dev.predict(xts).unwrap());
        assert!(max_rel(pg.as_slice().unwrap(), pc.as_slice().unwrap()) < 1e-8);
        let (mc, mg) = (cpu.mse(xts, yt.view()).unwrap(), dev.mse(xts, yt.view()).unwrap());
        assert!((mc - mg).abs() <= 1e-8 * mc, "mse {mc} vs {mg}");
        // Single precision: the same model to f32 accuracy (the CG cannot get below ~1e-6).
        let single = Regressor::new(spec.unwrap())
            .backend(Arc::new(GpuStreaming::new(&gpu).single_precision()))
            .basis(basis)
            .lambda(1e-3)
            .tolerance(1e-5)
            .fit(xs, y.view())
            .unwrap();
        let ps = single.predict(xts).unwrap();
        assert!(max_rel(ps.as_slice().unwrap(), pc.as_slice().unwrap()) < 1e-3, "{basis:?} f32");
    }
}

#[test]
fn gpu_regression_on_an_adaptive_grid_with_refinement_equals_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_regression_on_an_adaptive_grid_with_refinement_equals_cpu") else {
        return;
    };
    let (x, y) = friedman1(199, 0.5, 5);
    let xs = x.slice(ndarray::s![.., ..3]);
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(3, 2).unwrap()).unwrap();
    let fit = |r: Regressor| r.lambda(1e-3).tolerance(1e-12).refinement(2, 3).fit(xs, y.view()).unwrap();
    let cpu = fit(Regressor::with_grid(grid.clone()).backend(Arc::new(CpuStreaming::default())));
    let dev = fit(Regressor::with_grid(grid).gpu(&gpu));
    assert_eq!(cpu.grid(), dev.grid(), "refinement took the same steps");
    assert!(max_rel(dev.alpha(), cpu.alpha()) < 1e-8);
}

#[test]
fn gpu_density_and_clustering_equal_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_density_and_clustering_equal_cpu") else { return };
    let blobs = GaussianBlobs { clusters: 3, dim: 2, sigma: 0.04, separation: 7.0, noise: 0.0 };
    let (x, truth) = blobs.generate(211, 3).unwrap();
    let spec = GridSpec::regular(2, 4).unwrap();
    let fit = |e: DensityEstimator| e.lambda(1e-3).tolerance(1e-12).fit(x.view()).unwrap();
    let cpu = fit(DensityEstimator::new(spec.clone()));
    let dev = fit(DensityEstimator::new(spec.clone()).gpu(&gpu));
    assert!(max_rel(dev.alpha(), cpu.alpha()) < 1e-8);
    let (ec, eg) = (cpu.evaluate(x.view()).unwrap(), dev.evaluate(x.view()).unwrap());
    assert!(max_rel(eg.as_slice().unwrap(), ec.as_slice().unwrap()) < 1e-8);
    let cluster = |c: Clustering| c.lambda(1e-3).neighbors(6).threshold(0.1).fit(x.view()).unwrap();
    let lc = cluster(Clustering::new(spec.clone()));
    let lg = cluster(Clustering::new(spec).gpu(&gpu));
    assert_eq!(lc, lg, "the same labels");
    assert!(adjusted_rand_index(&lg, &truth) > 0.9);
}

#[test]
fn gpu_backend_without_a_device_is_a_no_gpu_error() {
    let ordinal = if cuda_kernels::Gpu::new(0).is_ok() { 4096 } else { 0 };
    let err = GpuStreaming::open(ordinal).unwrap_err();
    let LearnError::Backend { backend, source } = &err else { panic!("{err}") };
    assert_eq!(*backend, "gpu-streaming");
    let inner = source.downcast_ref::<sg_cuda::Error>().expect("sg-cuda's error");
    assert!(inner.is_no_gpu(), "{inner}");
    assert!(err.to_string().contains("no CUDA"), "{err}");
}
