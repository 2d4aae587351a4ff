//! Times sg-cpu's hierarchization and evaluation on the peer-comparison cases, with all threads
//! and with one, next to the sequential sg-core reference; prints one line per case in the
//! format `benches/peers/run_sg.sh` reads.
//!
//! `cargo run --release -p sg-cpu --example sg_compare [-- POINTS_DIR [M]]`
//!
//! With `POINTS_DIR`, the points of dimension d are read from `POINTS_DIR/points_d{d}.f64`
//! (raw little-endian f64, m x d row-major), so the peers and hetkit evaluate the same points.

use std::time::Instant;

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use sg_core::{Grid, GridSpec};

const CASES: [(usize, u32); 3] = [(4, 8), (10, 5), (10, 7)];

fn f(x: &[f64]) -> f64 {
    x.iter().map(|&v| 4.0 * v * (1.0 - v)).product()
}

fn best_of<R>(reps: usize, mut run: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = run();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    (best, last.expect("reps >= 1"))
}

fn points(dir: Option<&str>, m: usize, d: usize) -> Array2<f64> {
    if let Some(dir) = dir {
        let bytes = std::fs::read(format!("{dir}/points_d{d}.f64")).expect("points file");
        let vals: Vec<f64> =
            bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
        let m = vals.len() / d;
        return Array2::from_shape_vec((m, d), vals).expect("m x d");
    }
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(12345);
    Array2::from_shape_fn((m, d), |_| r.random_range(0.0..1.0))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).map(String::as_str).filter(|s| !s.is_empty());
    let m: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let threads = rayon::current_num_threads();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("pool");
    println!("# sg-cpu on {threads} threads; f = prod 4x(1-x); times are best of 3");
    for (d, n) in CASES {
        let spec = GridSpec::regular(d, n).expect("spec");
        let len = spec.len() as f64;
        let pts = points(dir, m, d);
        let m = pts.nrows();
        let nodal = Grid::from_fn(spec.clone(), f).expect("grid");

        // The plan (chains) is built once per grid description, like a peer's grid structure;
        // the hierarchization time is the sweep, the plan time is reported beside it.
        let (t_plan, plan) = best_of(3, || sg_cpu::Hierarchizer::new(&spec).expect("plan"));
        let hier = |g: &mut Grid<f64>| plan.hierarchize(g.values_mut(), 1).expect("hierarchize");
        let mut copies: Vec<Grid<f64>> = (0..3).map(|_| nodal.clone()).collect();
        let mut it = copies.iter_mut();
        let (t_hier, _) = best_of(3, || hier(it.next().expect("copy")));
        let grid = copies.pop().expect("hierarchized");
        let mut copies1: Vec<Grid<f64>> = (0..3).map(|_| nodal.clone()).collect();
        let mut it1 = copies1.iter_mut();
        let (t_hier1, _) = one.install(|| best_of(3, || hier(it1.next().expect("copy"))));
        let mut reference = nodal.clone();
        let (t_hier_ref, _) = best_of(1, || reference.hierarchize());

        let (t_eval, ys) = best_of(3, || sg_cpu::evaluate_batch(&grid, pts.view()).expect("evaluate"));
        let (t_eval1, _) =
            one.install(|| best_of(1, || sg_cpu::evaluate_batch(&grid, pts.view()).expect("evaluate")));
        // The reference is slow at d = 10: time it on a slice and compare rates.
        let m_ref = m.min(2_000);
        let (t_ref, _) =
            best_of(1, || grid.evaluate_batch(pts.slice(ndarray::s![..m_ref, ..])).expect("reference"));

        let max_err = pts
            .outer_iter()
            .zip(ys.iter())
            .map(|(x, &y)| (y - f(x.as_slice().unwrap())).abs())
            .fold(0.0, f64::max);
        let blocks = sg_cpu::Evaluator::new(&spec).expect("plan").blocks() as f64;
        let eval_flops = 6.0 * d as f64 * blocks * m as f64;
        println!(
            "hetkit d={d} n={n} N={} m={m} hierarchize_s={t_hier:.6} plan_s={t_plan:.6} eval_points_per_s={:.4e} max_err={max_err:.15e} \
             hier_speedup_1t={:.2} eval_speedup_1t={:.2} hier_vs_ref={:.1} eval_vs_ref={:.1} eval_gflops={:.2} hier_gflops={:.2}",
            spec.len(),
            m as f64 / t_eval,
            t_hier1 / t_hier,
            t_eval1 / t_eval,
            t_hier_ref / t_hier,
            (m as f64 / t_eval) / (m_ref as f64 / t_ref),
            eval_flops / t_eval / 1e9,
            3.0 * len * d as f64 / t_hier / 1e9,
        );
    }
}
