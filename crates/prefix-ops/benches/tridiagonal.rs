//! Tridiagonal solver benchmarks. CPU: Thomas sequential vs rayon vs lanes (interleaved SIMD),
//! m = 512, G = 1024, f64 (the CPU target; compare with `benches/peers/dgtsv_loop.py`).
//! GPU: 2^24 unknowns for m in {64, 256, 1024, 4096} (f32 both layouts, f64 strided) and one
//! system of 2^24 unknowns, CUDA-event timed; skipped without a device.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use prefix_ops::tridiagonal::gpu::GpuBatch;
use prefix_ops::tridiagonal::{Layout, Solver, TridiagonalBatch};

/// Dominant systems, deterministic (no RNG needed for timing).
fn system(m: usize, g: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = m * g;
    let f = |i: usize, s: f64| ((i as f64 * s).sin() * 0.5) + 0.1;
    let a: Vec<f64> = (0..n).map(|i| f(i, 0.37)).collect();
    let c: Vec<f64> = (0..n).map(|i| f(i, 0.71)).collect();
    let b: Vec<f64> = (0..n).map(|i| a[i].abs() + c[i].abs() + 1.0).collect();
    let d: Vec<f64> = (0..n).map(|i| f(i, 0.13)).collect();
    (a, b, c, d)
}

fn cpu(c: &mut Criterion) {
    let (m, g) = (512, 1024);
    let (a, b, cc, d) = system(m, g);
    let mut group = c.benchmark_group("tridiagonal_cpu_m512_g1024_f64");
    group.throughput(Throughput::Elements((m * g) as u64));
    group.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    for (name, solver, layout) in [
        ("thomas_seq_strided", Solver::Thomas, Layout::Strided),
        ("thomas_rayon_strided", Solver::ThomasParallel, Layout::Strided),
        ("thomas_lanes_interleaved", Solver::ThomasLanes, Layout::Interleaved),
        // The safe default: the dominance check, then the layout's fast Thomas.
        ("auto_strided", Solver::Auto, Layout::Strided),
        ("auto_interleaved", Solver::Auto, Layout::Interleaved),
        ("pivoting_lu_strided", Solver::PivotingLu, Layout::Strided),
        ("tpr_s64_strided", Solver::Tpr { slice: 64 }, Layout::Strided),
    ] {
        let batch = TridiagonalBatch::new(&a, &b, &cc, m, layout).unwrap();
        let mut x = d.clone();
        group.bench_function(name, |bench| {
            bench.iter(|| {
                x.copy_from_slice(&d);
                batch.solve_with(solver, &mut x).unwrap();
            })
        });
    }
    group.finish();
}

fn gpu(c: &mut Criterion) {
    let Ok(gpu) = cuda_kernels::Gpu::new(0) else {
        println!("SKIPPED tridiagonal gpu benches: no GPU");
        return;
    };
    let total = 1usize << 24;
    let to32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
    let mut group = c.benchmark_group("tridiagonal_gpu_2p24");
    group.sample_size(10);
    for m in [64usize, 256, 1024, 4096] {
        let (a, b, cc, d) = system(m, total / m);
        for layout in [Layout::Strided, Layout::Interleaved] {
            let f32s = (to32(a.clone()), to32(b.clone()), to32(cc.clone()), to32(d.clone()));
            gpu_case(&mut group, &gpu, &format!("f32_m{m}_{layout:?}"), f32s, m, layout);
        }
        gpu_case(&mut group, &gpu, &format!("f64_m{m}_Strided"), (a, b, cc, d), m, Layout::Strided);
    }
    // One system of 2^24 unknowns (the peer is cuSPARSE gtsv2_nopivot).
    let (a, b, cc, d) = system(total, 1);
    let f32s = (to32(a.clone()), to32(b.clone()), to32(cc.clone()), to32(d.clone()));
    gpu_case(&mut group, &gpu, "f32_one_system_2p24", f32s, total, Layout::Strided);
    gpu_case(&mut group, &gpu, "f64_one_system_2p24", (a, b, cc, d), total, Layout::Strided);
    group.finish();
}

/// Times `Solver::Auto` on one batch already on the device, with CUDA events.
fn gpu_case<T: prefix_ops::tridiagonal::Real>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    gpu: &cuda_kernels::Gpu,
    name: &str,
    (a, b, c, d): (Vec<T>, Vec<T>, Vec<T>, Vec<T>),
    m: usize,
    layout: Layout,
) {
    let up = |v: &[T]| gpu.upload(v).unwrap();
    let (da, db, dc, dd) = (up(&a), up(&b), up(&c), up(&d));
    let mut dx = gpu.zeros::<T>(d.len()).unwrap();
    // The bench systems are dominant: Auto takes the dispatcher's fast solvers.
    let batch = GpuBatch::new(&da, &db, &dc, m, layout).unwrap().assume_diagonally_dominant();
    let timer = cuda_kernels::GpuTimer::new(gpu).unwrap();
    println!(
        "{name}: solver {:?}",
        prefix_ops::tridiagonal::gpu::choose(m, d.len() / m, layout, size_of::<T>())
    );
    group.throughput(Throughput::Elements(d.len() as u64));
    group.bench_function(name, |bench| {
        bench.iter_custom(|iters| {
            let ms = timer
                .time(gpu, || {
                    for _ in 0..iters {
                        batch.solve_into(gpu, Solver::Auto, &dd, &mut dx).map_err(|e| match e {
                            prefix_ops::Error::Gpu(g) => g,
                            other => cuda_kernels::Error::Invalid(other.to_string()),
                        })?;
                    }
                    Ok(())
                })
                .unwrap();
            Duration::from_secs_f64(ms / 1e3)
        })
    });
}

criterion_group!(benches, cpu, gpu);
criterion_main!(benches);
