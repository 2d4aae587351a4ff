//! Friedman1 regression as in the thesis's Table 7.5 (modified linear basis, regular grid,
//! `λ = 1e-5`): time per CG iteration of both CPU algorithms and the test MSE.
//!
//! `cargo run --release -p sg-learn --example friedman1 -- [LEVEL] [M] [ITERATIONS] [streaming|subspace|assembled|both]`
//! (defaults 4, 20000, 30, both = streaming and subspace; the thesis's case is `7 100000 100`;
//! `assembled` stores `B` when it fits in 1 GiB, else walks the subspaces).

use std::sync::Arc;
use std::time::Instant;

use sg_learn::{Backend, Basis, CpuAssembled, CpuStreaming, CpuSubspace, GridSpec, Regressor, datasets};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let level: u32 = args.first().map_or(Ok(4), |s| s.parse())?;
    let m: usize = args.get(1).map_or(Ok(20_000), |s| s.parse())?;
    let iterations: usize = args.get(2).map_or(Ok(30), |s| s.parse())?;
    let which = args.get(3).map_or("both", String::as_str);
    let (x, y) = datasets::friedman1(m, 1.0, 1);
    let (xt, yt) = datasets::friedman1(10_000, 1.0, 2);
    let spec = GridSpec::regular(10, level)?;
    println!(
        "Friedman1: d = 10, level {level}, N = {}, m = {m}, {iterations} CG iterations, {} threads",
        spec.len(),
        rayon::current_num_threads()
    );
    let mut backends: Vec<Arc<dyn Backend>> = Vec::new();
    match which {
        "streaming" => backends.push(Arc::new(CpuStreaming::default())),
        "subspace" => backends.push(Arc::new(CpuSubspace::default())),
        "assembled" => backends.push(Arc::new(CpuAssembled::default())),
        _ => {
            backends.push(Arc::new(CpuStreaming::default()));
            backends.push(Arc::new(CpuSubspace::default()));
        }
    }
    for backend in backends {
        let name = backend.name();
        let t = Instant::now();
        let model = Regressor::new(spec.clone())
            .basis(Basis::ModifiedLinear)
            .lambda(1e-5)
            .max_iterations(iterations)
            .tolerance(0.0)
            .backend(backend)
            .fit(x.view(), y.view())?;
        let secs = t.elapsed().as_secs_f64();
        let it = model.report().iterations.max(1);
        println!(
            "{name:>14}: {:.4} s per CG iteration ({it} iterations, {secs:.2} s with setup), test MSE {:.4}, residual {:.2e}",
            secs / it as f64,
            model.mse(xt.view(), yt.view())?,
            model.report().relative_residual
        );
    }
    Ok(())
}
