//! hetkit's side of the learning peer comparison (`benches/peers/learn/run.sh`): writes the data
//! sets as raw little-endian f64 files into OUT_DIR, fits them, and prints one `key=value` line
//! per result for the peer script to join.
//!
//! `cargo run --release -p sg-learn --example learn_compare -- OUT_DIR [M]`

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use ndarray::Array2;
use sg_learn::{
    Backend, Basis, Clustering, CpuAssembled, CpuStreaming, CpuSubspace, DensityEstimator, GridSpec,
    Regressor, adjusted_rand_index, datasets,
};

/// Regression: Friedman1, modified linear level 4, λ = 1e-5, fixed CG iterations.
pub const REG_LEVEL: u32 = 4;
const REG_ITERATIONS: usize = 50;
const REG_LAMBDA: f64 = 1e-5;
/// Density and clustering: 10 blobs in 5-D, σ = 0.05, 7σ apart, 2 % noise; level 5 grid.
const BLOB_DIM: usize = 5;
const BLOB_LEVEL: u32 = 5;
const BLOB_LAMBDA: f64 = 1e-4;
/// Clustering: the best `(λ, t)` of `cluster_search -- 20000 q3 8` (level 8, the density
/// checked at 3 points per edge).
const CLUSTER_LEVEL: u32 = 8;
const CLUSTER_LAMBDA: f64 = 1e-6;
const CLUSTER_THRESHOLD: f64 = 0.002;
const CLUSTER_EDGE_CHECKS: usize = 3;

fn write(path: &str, values: impl Iterator<Item = f64>) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    for v in values {
        f.write_all(&v.to_le_bytes())?;
    }
    f.flush()
}

/// CPU seconds of this process so far (user + system, all threads), from `/proc/self/stat`
/// (fields 14 and 15, in the kernel ABI's fixed `USER_HZ` = 100 ticks per second); NaN where
/// there is no procfs. On a loaded machine the ratio of CPU times is steadier than that of
/// wall times, so both are printed.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // the command name (field 2) may hold spaces; the fields after it follow its ')'
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: Vec<f64> = rest.split_whitespace().skip(11).take(2).filter_map(|v| v.parse().ok()).collect();
    if ticks.len() == 2 { (ticks[0] + ticks[1]) / 100.0 } else { f64::NAN }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.first().ok_or("usage: learn_compare OUT_DIR [M]")?.clone();
    let m: usize = args.get(1).map_or(Ok(20_000), |s| s.parse())?;
    std::fs::create_dir_all(&out)?;
    let threads = rayon::current_num_threads();
    println!("# m={m} threads={threads}");

    let (x, y) = datasets::friedman1(m, 1.0, 1);
    let (xt, yt) = datasets::friedman1(10_000, 1.0, 2);
    write(&format!("{out}/fried_x.f64"), x.iter().copied())?;
    write(&format!("{out}/fried_y.f64"), y.iter().copied())?;
    write(&format!("{out}/fried_xt.f64"), xt.iter().copied())?;
    write(&format!("{out}/fried_yt.f64"), yt.iter().copied())?;
    let spec = GridSpec::regular(10, REG_LEVEL)?;
    let backends: [Arc<dyn Backend>; 4] = [
        Arc::new(CpuStreaming::default()),
        Arc::new(CpuSubspace::default()),
        Arc::new(CpuAssembled::default()),
        Arc::new(CpuAssembled::f32()),
    ];
    for backend in backends {
        let name = backend.name();
        let (t, c) = (Instant::now(), cpu_seconds());
        let model = Regressor::new(spec.clone())
            .basis(Basis::ModifiedLinear)
            .lambda(REG_LAMBDA)
            .max_iterations(REG_ITERATIONS)
            .tolerance(0.0)
            .backend(backend)
            .fit(x.view(), y.view())?;
        let iterations = model.report().iterations.max(1) as f64;
        let s = t.elapsed().as_secs_f64() / iterations;
        let cpu = (cpu_seconds() - c) / iterations;
        let mse = model.mse(xt.view(), yt.view())?;
        println!(
            "regression who=hetkit-{name} level={REG_LEVEL} N={} s_per_iteration={s:.6e} \
             cpu_s_per_iteration={cpu:.6e} mse={mse:.6}",
            spec.len()
        );
    }

    let blobs =
        datasets::GaussianBlobs { clusters: 10, dim: BLOB_DIM, sigma: 0.05, separation: 7.0, noise: 0.02 };
    let (bx, truth) = blobs.generate(m, 3)?;
    let probe = Array2::from_shape_fn((5_000, BLOB_DIM), {
        let (px, _) = blobs.generate(5_000, 4)?;
        move |(i, k)| px[[i, k]]
    });
    write(&format!("{out}/blobs_x.f64"), bx.iter().copied())?;
    write(&format!("{out}/blobs_labels.f64"), truth.iter().map(|l| l.map_or(-1.0, |c| c as f64)))?;
    write(&format!("{out}/blobs_probe.f64"), probe.iter().copied())?;
    // the mass products are up-down ones whatever the backend; the backend computes b = Bᵀ1/m
    let density_backends: [Arc<dyn Backend>; 2] =
        [Arc::new(CpuStreaming::default()), Arc::new(CpuSubspace::default())];
    for backend in density_backends {
        let name = backend.name();
        let (t, c) = (Instant::now(), cpu_seconds());
        let density = DensityEstimator::new(GridSpec::regular(BLOB_DIM, BLOB_LEVEL)?)
            .lambda(BLOB_LAMBDA)
            .tolerance(1e-3)
            .backend(backend)
            .fit(bx.view())?;
        let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
        let f = density.evaluate(probe.view())?;
        write(&format!("{out}/blobs_density_hetkit.f64"), f.iter().copied())?;
        println!(
            "density who=hetkit-{name} level={BLOB_LEVEL} N={} seconds={secs:.4} cpu_seconds={cpu:.4} iterations={}",
            density.grid().len(),
            density.report().iterations
        );
    }
    // the best pair of `cluster_search` on this set (level 8; λ and t searched)
    let (t, c) = (Instant::now(), cpu_seconds());
    let labels = Clustering::new(GridSpec::regular(BLOB_DIM, CLUSTER_LEVEL)?)
        .lambda(CLUSTER_LAMBDA)
        .neighbors(6)
        .threshold(CLUSTER_THRESHOLD)
        .edge_checks(CLUSTER_EDGE_CHECKS)
        .backend(Arc::new(CpuSubspace::default()))
        .fit(bx.view())?;
    println!(
        "clustering who=hetkit level={CLUSTER_LEVEL} seconds={:.4} cpu_seconds={:.4} ari={:.4}",
        t.elapsed().as_secs_f64(),
        cpu_seconds() - c,
        adjusted_rand_index(&labels, &truth)
    );
    Ok(())
}
