//! A CPU+GPU pipeline feeding hetkit's own operations: a CPU stage makes frames of right-hand
//! sides, a stage solves each frame's 256 tridiagonal systems (on the GPU when there is one), a
//! stage takes the inclusive scan of each solution (GPU too), and a CPU stage checks every frame
//! against the same work done sequentially. Stages run concurrently, so the solve of frame i + 1
//! overlaps the scan of frame i; the timeline is written to `stream_gpu_timeline.svg`.
//!
//! `cargo run --release --example stream_gpu [FRAMES] [--cpu]`

use hetkit::cuda::Gpu;
use hetkit::stream::Pipeline;
use hetkit::{scan, tridiagonal};

const M: usize = 512; // unknowns per system
const G: usize = 256; // systems per frame
const FRAME: usize = M * G;

/// The constant, diagonally dominant systems every frame solves (strided layout).
fn matrix() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let a = (0..FRAME).map(|i| -1.0 + (i % 3) as f64 * 0.1).collect();
    let b = vec![4.0; FRAME];
    let c = (0..FRAME).map(|i| -1.0 + (i % 5) as f64 * 0.1).collect();
    (a, b, c)
}

fn rhs(frame: usize) -> Vec<f64> {
    (0..FRAME).map(|i| ((i * 7 + frame * 13) % 11) as f64).collect()
}

/// Solve then scan on the CPU: the oracle and the CPU placement.
fn solve_scan_cpu(d: &mut [f64]) -> hetkit::Result<()> {
    let (a, b, c) = matrix();
    tridiagonal::TridiagonalBatch::strided(&a, &b, &c, M)?.solve(d)?;
    scan::inclusive(d, scan::Add);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let frames: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(16);
    let gpu = if args.iter().any(|a| a == "--cpu") { None } else { Gpu::new(0).ok() };
    println!(
        "{frames} frames of {G} tridiagonal systems of {M} unknowns, then a scan; solve and scan on {}",
        if gpu.is_some() { "the GPU" } else { "the CPU" }
    );
    let (checked, worst, report) = run(frames, gpu.as_ref())?;
    println!(
        "{checked} frames checked against the sequential solve and scan, worst relative difference {worst:.1e}"
    );
    println!("{report}");
    std::fs::write("stream_gpu_timeline.svg", report.timeline_svg())?;
    println!("timeline: stream_gpu_timeline.svg");
    if checked != frames || worst > 1e-9 {
        return Err("the pipeline's output differs from the sequential computation".into());
    }
    Ok(())
}

/// Runs the pipeline on `frames` frames (solve and scan on `gpu` when given): the frames checked,
/// the worst relative difference from the sequential computation, and the report.
pub(crate) fn run(frames: usize, gpu: Option<&Gpu>) -> hetkit::Result<(usize, f64, hetkit::stream::Report)> {
    let mut p = Pipeline::new();
    let (src, mut solve_in) = p.channel::<f64>();
    let (solve_out, mut scan_in) = p.channel::<f64>();
    let (scan_out, mut check_in) = p.channel::<f64>();
    p.stage("generate", move || -> hetkit::Result<()> {
        for f in 0..frames {
            src.push(&rhs(f))?;
        }
        Ok(())
    });
    // Each GPU stage has its own stream, so the two stages' kernels and copies can overlap.
    let solve_gpu = gpu.map(Gpu::with_new_stream).transpose()?;
    p.stage("solve", move || -> hetkit::Result<()> {
        let (a, b, c) = matrix();
        let batch = tridiagonal::TridiagonalBatch::strided(&a, &b, &c, M)?;
        let mut x = vec![0.0; FRAME];
        while let Some(frame) = solve_in.pop(FRAME, FRAME)? {
            x.copy_from_slice(&frame);
            drop(frame);
            match &solve_gpu {
                Some(g) => batch.solve_gpu(g, tridiagonal::Solver::Auto, &mut x)?,
                None => batch.solve(&mut x)?,
            }
            solve_out.push(&x)?;
        }
        Ok(())
    });
    let scan_gpu = gpu.map(Gpu::with_new_stream).transpose()?;
    p.stage("scan", move || -> hetkit::Result<()> {
        let mut x = vec![0.0; FRAME];
        while let Some(frame) = scan_in.pop(FRAME, FRAME)? {
            x.copy_from_slice(&frame);
            drop(frame);
            match &scan_gpu {
                Some(g) => scan::gpu::inclusive(g, &mut x, scan::Add)?,
                None => scan::inclusive(&mut x, scan::Add),
            }
            scan_out.push(&x)?;
        }
        Ok(())
    });
    let (done, worst) = std::sync::mpsc::channel();
    p.stage("check", move || -> hetkit::Result<()> {
        let mut worst = 0.0f64;
        let mut f = 0;
        while let Some(frame) = check_in.pop(FRAME, FRAME)? {
            let mut want = rhs(f);
            solve_scan_cpu(&mut want)?;
            for (g, w) in frame.iter().zip(&want) {
                worst = worst.max((g - w).abs() / w.abs().max(1.0));
            }
            f += 1;
        }
        done.send((f, worst)).expect("main waits");
        Ok(())
    });
    let report = p.run()?;
    let (checked, worst) = worst.recv().unwrap_or((0, f64::INFINITY));
    Ok((checked, worst, report))
}
