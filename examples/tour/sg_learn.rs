//! Learning with sparse grids: regression on Friedman1, a density estimate and a clustering of
//! Gaussian blobs, each timed, with the CPU streaming and subspace operators side by side.

use std::sync::Arc;
use std::time::Instant;

use hetkit::sg_learn::{
    Basis, Clustering, CpuStreaming, CpuSubspace, DensityEstimator, GridSpec, Regressor, adjusted_rand_index,
    datasets,
};

pub(crate) fn section() {
    println!("\nlearning with sparse grids (sg-learn)");
    regression();
    density_and_clusters();
    println!("  pictures: cargo run --release -p sg-learn --example learn_plots (writes PNGs)");
}

fn regression() {
    let (x, y) = datasets::friedman1(20_000, 1.0, 1);
    let (xt, yt) = datasets::friedman1(5_000, 1.0, 2);
    let spec = GridSpec::regular(10, 3).expect("valid grid");
    println!(
        "  Friedman1, d = 10, m = 20000, modified linear level 3 ({} points), 30 CG iterations",
        spec.len()
    );
    let backends: [Arc<dyn hetkit::sg_learn::Backend>; 2] =
        [Arc::new(CpuStreaming::default()), Arc::new(CpuSubspace::default())];
    for backend in backends {
        let name = backend.name();
        let t = Instant::now();
        let model = Regressor::new(spec.clone())
            .basis(Basis::ModifiedLinear)
            .lambda(1e-5)
            .max_iterations(30)
            .tolerance(0.0)
            .backend(backend)
            .fit(x.view(), y.view())
            .expect("fit");
        let secs = t.elapsed().as_secs_f64();
        let mse = model.mse(xt.view(), yt.view()).expect("mse");
        println!(
            "    {name:>13}: {:.1} ms per CG iteration, test MSE {mse:.3} (noise variance 1)",
            1e3 * secs / 30.0
        );
    }
}

fn density_and_clusters() {
    let blobs = datasets::GaussianBlobs { clusters: 5, dim: 2, sigma: 0.04, separation: 7.0, noise: 0.02 };
    let (x, truth) = blobs.generate(2_000, 7).expect("blobs");
    let t = Instant::now();
    let density = DensityEstimator::new(GridSpec::regular(2, 6).expect("grid"))
        .lambda(1e-3)
        .fit(x.view())
        .expect("density");
    let f = density.evaluate(x.view()).expect("evaluate");
    println!(
        "  density of 2000 blob points on a level-6 grid ({} points): {:.0} ms, {} CG iterations, max {:.1}",
        density.grid().len(),
        1e3 * t.elapsed().as_secs_f64(),
        density.report().iterations,
        f.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    );
    let t = Instant::now();
    let labels = Clustering::new(GridSpec::regular(2, 6).expect("grid"))
        .lambda(1e-3)
        .neighbors(6)
        .threshold(0.1)
        .fit(x.view())
        .expect("clustering");
    let clusters = labels.iter().flatten().max().map_or(0, |m| m + 1);
    let noise = labels.iter().filter(|l| l.is_none()).count();
    println!(
        "  clustering: {clusters} clusters, {noise} points pruned as noise, ARI {:.3} against the generator, {:.0} ms",
        adjusted_rand_index(&labels, &truth),
        1e3 * t.elapsed().as_secs_f64()
    );
}
