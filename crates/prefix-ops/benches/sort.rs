//! Sort benchmarks. CPU: 2^20 f32 keys in rows of 32 .. 4096, ours against the standard
//! library's `sort_unstable_by(total_cmp)` per row (one thread) and the same per row under
//! rayon. GPU (skipped without a device): 2^24 f32 keys in rows of 32 .. 4096, variable-size
//! segments (uniform 1..4096) and one array of 2^26 keys, timed with CUDA events.
//!
//! `cargo bench -p prefix-ops --bench sort`; `HETKIT_SORT_BENCH_LOG2=22` for 2^22 CPU keys.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use prefix_ops::sort::{self, Order, gpu};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

const ROWS: [usize; 5] = [32, 64, 256, 1024, 4096];

fn keys(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = hetkit_testkit::TestRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0e6f32..1.0e6)).collect()
}

fn cpu(c: &mut Criterion) {
    let log2: u32 = std::env::var("HETKIT_SORT_BENCH_LOG2").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let n = 1usize << log2;
    let input = keys(n, 1);
    let mut g = c.benchmark_group(format!("sort_cpu_f32_2^{log2}"));
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(n as u64));
    for row in ROWS {
        let mut buf = input.clone();
        g.bench_with_input(BenchmarkId::new("hetkit_rows", row), &row, |b, &row| {
            b.iter(|| {
                buf.copy_from_slice(&input);
                sort::rows(&mut buf, row, Order::Ascending).unwrap();
            })
        });
        g.bench_with_input(BenchmarkId::new("std_sort_unstable_per_row", row), &row, |b, &row| {
            b.iter(|| {
                buf.copy_from_slice(&input);
                buf.chunks_mut(row).for_each(|r| r.sort_unstable_by(f32::total_cmp));
            })
        });
        g.bench_with_input(BenchmarkId::new("rayon_sort_unstable_per_row", row), &row, |b, &row| {
            b.iter(|| {
                buf.copy_from_slice(&input);
                buf.par_chunks_mut(row).for_each(|r| r.sort_unstable_by(f32::total_cmp));
            })
        });
    }
    g.bench_function("copy_only", |b| b.iter(|| buf_copy(&input)));
    g.finish();
}

fn buf_copy(input: &[f32]) -> Vec<f32> {
    input.to_vec()
}

fn gpu_benches(c: &mut Criterion) {
    let Ok(dev) = cuda_kernels::Gpu::new(0) else {
        println!("SKIPPED GPU sort benches: no GPU");
        return;
    };
    let timer = cuda_kernels::GpuTimer::new(&dev).unwrap();
    let n = 1usize << 24;
    let input = keys(n, 2);
    let src = dev.upload(&input).unwrap();
    let mut buf = dev.upload(&input).unwrap();
    let mut g = c.benchmark_group("sort_gpu_f32_2^24");
    g.sample_size(20).measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(n as u64));
    let mut timed = |b: &mut criterion::Bencher, f: &mut dyn FnMut(&mut cuda_kernels::DeviceBuffer<f32>)| {
        b.iter_custom(|iters| {
            let mut total = 0.0;
            for _ in 0..iters {
                dev.stream().memcpy_dtod(&src, &mut buf).unwrap();
                total += timer
                    .time(&dev, || {
                        f(&mut buf);
                        Ok(())
                    })
                    .unwrap();
            }
            Duration::from_secs_f64(total / 1e3)
        })
    };
    for row in ROWS {
        g.bench_with_input(BenchmarkId::new("hetkit_rows", row), &row, |b, &row| {
            timed(b, &mut |k| gpu::rows(&dev, k, row, Order::Ascending).unwrap())
        });
    }
    let mut rng = hetkit_testkit::TestRng::seed_from_u64(3);
    let mut offsets = vec![0usize];
    while *offsets.last().unwrap() < n {
        let next = (offsets.last().unwrap() + rng.random_range(1..=4096)).min(n);
        offsets.push(next);
    }
    g.bench_function("hetkit_segments_uniform_1_4096", |b| {
        timed(b, &mut |k| gpu::segments(&dev, k, &offsets, Order::Ascending).unwrap())
    });
    g.finish();

    let n = 1usize << 26;
    let input = keys(n, 4);
    let src = dev.upload(&input).unwrap();
    let mut buf = dev.upload(&input).unwrap();
    let mut g = c.benchmark_group("sort_gpu_f32_2^26");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("hetkit_whole", |b| {
        b.iter_custom(|iters| {
            let mut total = 0.0;
            for _ in 0..iters {
                dev.stream().memcpy_dtod(&src, &mut buf).unwrap();
                total += timer
                    .time(&dev, || {
                        gpu::whole(&dev, &mut buf, Order::Ascending).unwrap();
                        Ok(())
                    })
                    .unwrap();
            }
            Duration::from_secs_f64(total / 1e3)
        })
    });
    g.finish();
}

criterion_group!(benches, cpu, gpu_benches);
criterion_main!(benches);
