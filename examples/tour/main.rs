//! A tour of hetkit: what this machine offers, then each crate at work on CPU and, when present, GPU.
//!
//! `cargo run --release --example tour`
//!
//! Each area of the library has one section: a function here, or a module file in this folder
//! (`mod name;` below and one call in `main`), so that areas grow without touching each other.

mod sg_learn;

use std::time::Instant;

use hetkit::cuda::{self, Gpu, GpuTimer};
use hetkit::sg::{Grid, GridSpec, reference};
use hetkit::{scan, sort, tridiagonal};

fn main() {
    println!("hetkit tour\n===========\n");
    println!("CPU: {} threads in rayon's pool", std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!(
        "kernels: {} files embedded, {}",
        cuda::embedded_modules().len(),
        if cuda::nvcc_ptx_embedded() { "PTX compiled by nvcc at build time" } else { "sources for NVRTC" }
    );
    let gpu = match Gpu::new(0) {
        Ok(gpu) => {
            println!("GPU: {}", gpu.props());
            Some(gpu)
        }
        Err(e) => {
            println!("GPU: none ({e}); the tour runs on the CPU only");
            None
        }
    };
    axpy_section(gpu.as_ref());
    sparse_grid_section();
    scan_section(gpu.as_ref());
    tridiagonal_section(gpu.as_ref());
    sort_section(gpu.as_ref());
    sg_learn::section();
}

/// Seconds one call of `f` takes (best of three).
fn seconds<R>(mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        out = Some(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out.expect("ran"))
}

/// Best of three runs of `f` on a fresh copy of `data`; the copy is made outside the timing
/// (a fresh 64 MB allocation costs about as much in page faults as the scan itself).
fn seconds_on<T: Copy>(data: &[T], mut f: impl FnMut(&mut [T])) -> (f64, Vec<T>) {
    let mut best = f64::INFINITY;
    let mut out = data.to_vec();
    for _ in 0..3 {
        out.copy_from_slice(data);
        let t = Instant::now();
        f(&mut out);
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out)
}

/// A 10-dimensional sparse grid of level 7 (397 825 points, no keys): sample, hierarchize,
/// evaluate 10^5 points, against the sequential reference; then why boundary points matter.
fn sparse_grid_section() {
    println!("\nsparse grid, d = 10, level 7, f = prod 4x(1-x)");
    let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
    let spec = GridSpec::regular(10, 7).expect("valid grid");
    let nodal = Grid::from_fn(spec.clone(), f).expect("fits in memory");
    println!("  {} points in one array of {:.1} MB", spec.len(), spec.len() as f64 * 8.0 / 1e6);
    let (t_ref, slow) = seconds(|| {
        let mut g: reference::Grid<f64> = nodal.as_reference().clone();
        g.hierarchize();
        g
    });
    let (t_cpu, grid) = seconds(|| {
        let mut g = nodal.clone();
        g.hierarchize().expect("hierarchize");
        g
    });
    let same =
        grid.values().iter().zip(slow.values()).all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0));
    println!(
        "  hierarchize: sg::reference {:.1} ms, sg::Grid {:.1} ms ({:.0}x), equal: {same}",
        t_ref * 1e3,
        t_cpu * 1e3,
        t_ref / t_cpu
    );
    let m = 100_000;
    let points = hetkit::ndarray::Array2::from_shape_fn((m, 10), |(i, t)| {
        ((i * 7919 + t * 104_729) % 10_007) as f64 / 10_006.0
    });
    let (t_eval, ys) = seconds(|| grid.evaluate_batch(points.view()).expect("points in the domain"));
    let worst = points
        .outer_iter()
        .zip(&ys)
        .map(|(x, &y)| (y - f(x.as_slice().expect("row"))).abs())
        .fold(0.0, f64::max);
    println!(
        "  evaluate {m} points: {:.0} ms, {:.2e} points/s, max |u - f| = {worst:.2e}",
        t_eval * 1e3,
        m as f64 / t_eval
    );
    boundary_section();
}

/// `regular` grids are zero on the boundary: a function that is not needs the boundary grid.
fn boundary_section() {
    println!("\nsparse grid, d = 3, level 6, f = exp(-|x - 0.5|^2): regular grids are zero on the boundary");
    let f = |x: &[f64]| (-x.iter().map(|v| (v - 0.5) * (v - 0.5)).sum::<f64>()).exp();
    let test = hetkit::ndarray::Array2::from_shape_fn((4096, 3), |(i, t)| {
        ((i * 37 + t * 101) % 1024) as f64 / 1023.0
    });
    let regular = GridSpec::regular(3, 6).expect("valid grid");
    for (name, spec) in [
        ("regular(3, 6)", regular.clone()),
        ("regular(3, 6).with_boundary()", regular.with_boundary().expect("valid grid")),
    ] {
        let points = spec.len();
        let mut grid = Grid::from_fn(spec, f).expect("fits in memory");
        grid.hierarchize().expect("hierarchize");
        let err = grid.error(test.view(), f).expect("points in the domain");
        println!("  {name:30} {points:6} points, relative L2 error {err:.1e}");
    }
}

/// Inclusive sum of 2^24 f32 on the CPU (and the GPU when present), against a plain loop.
fn scan_section(gpu: Option<&Gpu>) {
    println!("\ninclusive scan, 2^24 f32");
    let n = 1usize << 24;
    // Halves: every partial sum stays exact in f32, so any combination order gives the same result.
    let xs: Vec<f32> = (0..n).map(|i| (i & 1) as f32 * 0.5).collect();
    let (t_loop, want) = seconds_on(&xs, |v| {
        let mut acc = 0.0f32;
        for x in v.iter_mut() {
            acc += *x;
            *x = acc;
        }
    });
    let (t_scan, got) = seconds_on(&xs, |v| scan::inclusive(v, scan::Add));
    println!(
        "  plain loop {:.1} ms, scan::inclusive {:.1} ms, equal: {}",
        t_loop * 1e3,
        t_scan * 1e3,
        got == want
    );
    if let Some(gpu) = gpu {
        let mut v = xs.clone();
        match scan::gpu::inclusive(gpu, &mut v, scan::Add) {
            Ok(()) => println!("  GPU scan equal to the loop: {}", v == want),
            Err(e) => println!("  GPU scan failed: {e}"),
        }
    }
}

/// 1024 diagonally dominant systems of 512 unknowns, f64.
fn tridiagonal_section(gpu: Option<&Gpu>) {
    println!("\ntridiagonal, 1024 systems of 512 unknowns, f64");
    let (m, g) = (512, 1024);
    let a: Vec<f64> = (0..m * g).map(|i| -1.0 + (i % 3) as f64 * 0.1).collect();
    let c: Vec<f64> = (0..m * g).map(|i| -1.0 + (i % 5) as f64 * 0.1).collect();
    let b = vec![4.0; m * g];
    let d: Vec<f64> = (0..m * g).map(|i| (i % 11) as f64).collect();
    let batch = tridiagonal::TridiagonalBatch::strided(&a, &b, &c, m).expect("lengths match");
    let (t, x) = seconds_on(&d, |x| batch.solve(x).expect("dominant systems"));
    println!(
        "  CPU solve {:.1} ms, normwise residual {:.1e}",
        t * 1e3,
        batch.residual(&x, &d).expect("lengths")
    );
    if let Some(gpu) = gpu {
        let mut xg = d.clone();
        match batch.solve_gpu(gpu, tridiagonal::Solver::Auto, &mut xg) {
            Ok(()) => println!("  GPU solve residual {:.1e}", batch.residual(&xg, &d).expect("lengths")),
            Err(e) => println!("  GPU solve failed: {e}"),
        }
    }
}

/// 2^20 f32 keys in rows of 32, against sorting each row with the standard library.
fn sort_section(gpu: Option<&Gpu>) {
    println!("\nsort, 2^20 f32 keys in rows of 32");
    let keys: Vec<f32> = (0..1 << 20).map(|i: u32| ((i.wrapping_mul(2_654_435_761)) >> 8) as f32).collect();
    let (t_std, want) =
        seconds_on(&keys, |k| k.chunks_mut(32).for_each(|r| r.sort_unstable_by(f32::total_cmp)));
    let (t_rows, got) = seconds_on(&keys, |k| sort::rows(k, 32, sort::Order::Ascending).expect("whole rows"));
    println!(
        "  slice::sort per row {:.1} ms, sort::rows {:.1} ms, equal: {}",
        t_std * 1e3,
        t_rows * 1e3,
        got == want
    );
    if let Some(gpu) = gpu {
        let run = || -> hetkit::Result<Vec<f32>> {
            let mut dk = gpu.upload(&keys)?;
            sort::gpu::rows(gpu, &mut dk, 32, sort::Order::Ascending)?;
            Ok(gpu.download(&dk)?)
        };
        match run() {
            Ok(k) => println!("  GPU sort equal: {}", k == want),
            Err(e) => println!("  GPU sort failed: {e}"),
        }
    }
}

/// y <- a x + y on 2^24 f32: bandwidth of one core against the GPU's.
fn axpy_section(gpu: Option<&Gpu>) {
    println!("\naxpy, 2^24 f32 (12 bytes moved per element)");
    let n = 1usize << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
    let mut y = vec![1.0f32; n];
    let t = Instant::now();
    let reps = 10;
    for _ in 0..reps {
        cuda::axpy_cpu(0.5, &x, &mut y).expect("equal lengths");
    }
    let cpu_s = t.elapsed().as_secs_f64() / reps as f64;
    println!("  CPU, one thread: {:8.3} ms  {:7.1} GB/s", cpu_s * 1e3, 12.0 * n as f64 / cpu_s / 1e9);
    let Some(gpu) = gpu else { return };
    let run = || -> cuda::Result<()> {
        let dx = gpu.upload(&x)?;
        let mut dy = gpu.upload(&vec![1.0f32; n])?;
        let timer = GpuTimer::new(gpu)?;
        let s = timer.stats(gpu, 3, 20, || cuda::axpy(gpu, 0.5, &dx, &mut dy))?;
        println!(
            "  GPU ({:?}):      {:8.3} ms  {:7.1} GB/s (median of {})",
            gpu.compile_path("blas/axpy")?,
            s.median_ms,
            12.0 * n as f64 / (s.median_ms * 1e-3) / 1e9,
            s.runs
        );
        // Check one run against the CPU oracle.
        let mut want = vec![1.0f32; n];
        cuda::axpy_cpu(0.5, &x, &mut want)?;
        let mut dy = gpu.upload(&vec![1.0f32; n])?;
        cuda::axpy(gpu, 0.5, &dx, &mut dy)?;
        let got = gpu.download(&dy)?;
        let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0f32, f32::max);
        println!("  GPU result vs CPU: max |diff| = {worst:e}");
        Ok(())
    };
    if let Err(e) = run() {
        println!("  GPU axpy failed: {e}");
    }
}
