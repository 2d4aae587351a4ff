//! The clustering's `(λ, t)` search (`Clustering::search`, scored by the ARI against the
//! generator's labels) on the peer comparison's blob set (`learn_compare`: ten Gaussian blobs in
//! 5-D, σ = 0.05, centres 7σ apart, 2 % noise, seed 3), per grid level, with the time of one
//! clustering at the best pair.
//!
//! `cargo run --release -p sg-learn --example cluster_search -- [M] [OPTION | GRID ...]`, where a
//! GRID is a regular level (`6`) or a support-refined grid (`s9:100`: thesis Alg. 1 with
//! `|l|_1 − d < 9` and more than 100 data points in every function's support), and the options,
//! which apply to the grids after them, are `qN` (density checked at `N` points per edge),
//! `kN` (neighbours), `lap` / `id` (Laplacian or identity regularisation).

use std::sync::Arc;
use std::time::Instant;

use sg_learn::{
    AdaptiveGrid, Clustering, CpuSubspace, GridSpec, Regularization, adjusted_rand_index, datasets,
};

const LAMBDAS: [f64; 6] = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3];
/// Log-spaced: in 5-D most of a Gaussian blob's mass lies near radius `√5·σ`, where the density
/// is `e^{-2.5}` ≈ 8 % of the peak, and the gap between two blobs 7σ apart is below 1 % of it.
const THRESHOLDS: [f64; 12] = [1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let m: usize = args.first().map_or(Ok(20_000), |s| s.parse())?;
    let grids: Vec<String> = if args.len() > 1 { args[1..].to_vec() } else { vec!["5".into(), "6".into()] };
    let blobs = datasets::GaussianBlobs { clusters: 10, dim: 5, sigma: 0.05, separation: 7.0, noise: 0.02 };
    let (x, truth) = blobs.generate(m, 3)?;
    let (mut checks, mut k, mut reg) = (1, 6, Regularization::Identity);
    for grid in grids {
        if let Some(q) = grid.strip_prefix('q') {
            checks = q.parse()?;
            continue;
        }
        if let Some(v) = grid.strip_prefix('k') {
            k = v.parse()?;
            continue;
        }
        if grid == "lap" || grid == "id" {
            reg = if grid == "lap" { Regularization::Laplacian } else { Regularization::Identity };
            continue;
        }
        let sparse = match grid.strip_prefix('s').and_then(|g| g.split_once(':')) {
            Some((level, support)) => {
                AdaptiveGrid::support_refinement(x.view(), level.parse()?, support.parse()?)?
            }
            None => AdaptiveGrid::from_spec(&GridSpec::regular(5, grid.parse()?)?)?,
        };
        let n = sparse.len();
        println!("# grid={grid} N={n} k={k} edge_checks={checks} regularization={reg:?}");
        // the subspace operators evaluate the estimate at the points and edge points fastest
        let clustering = Clustering::with_grid(sparse)
            .neighbors(k)
            .edge_checks(checks)
            .regularization(reg)
            .backend(Arc::new(CpuSubspace::default()));
        let t = Instant::now();
        let best = clustering.search(x.view(), &truth, &LAMBDAS, &THRESHOLDS)?;
        let search_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let labels = clustering.clone().lambda(best.lambda).threshold(best.threshold).fit(x.view())?;
        let fit_s = t.elapsed().as_secs_f64();
        let clusters = labels.iter().flatten().max().map_or(0, |c| c + 1);
        let noise = labels.iter().filter(|l| l.is_none()).count();
        println!(
            "grid={grid} N={n} k={k} q={checks} reg={reg:?} lambda={:e} threshold={} ari={:.4} clusters={clusters} noise={noise} \
             fit_seconds={fit_s:.3} search_seconds={search_s:.2} (ari of the refit {:.4})",
            best.lambda,
            best.threshold,
            best.ari,
            adjusted_rand_index(&labels, &truth)
        );
    }
    Ok(())
}
