//! A tour of hetkit: what this machine offers, then each crate at work on CPU and, when present, GPU.
//!
//! `cargo run --release --example tour`

use std::time::Instant;

use hetkit::cuda::{self, Gpu, GpuTimer};

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
