//! axpy on the CPU (one thread, the memory floor of the host) against the GPU, in GB/s moved
//! (read x and y, write y). The GPU group is skipped without a device.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use cuda_kernels::{Gpu, GpuTimer, axpy, axpy_cpu};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 2] = [1 << 20, 1 << 24];

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("axpy_f32");
    for n in SIZES {
        group.throughput(Throughput::Bytes((3 * n * 4) as u64));
        let x = vec![1.0f32; n];
        let mut y = vec![2.0f32; n];
        group.bench_function(format!("cpu/{n}"), |b| {
            b.iter(|| axpy_cpu(black_box(0.5f32), &x, &mut y).unwrap())
        });
    }
    if let Ok(gpu) = Gpu::new(0) {
        println!("GPU: {}", gpu.props());
        let timer = GpuTimer::new(&gpu).unwrap();
        for n in SIZES {
            group.throughput(Throughput::Bytes((3 * n * 4) as u64));
            let x = gpu.upload(&vec![1.0f32; n]).unwrap();
            let mut y = gpu.upload(&vec![2.0f32; n]).unwrap();
            // Device time by CUDA events, not host wall time.
            group.bench_function(format!("gpu/{n}"), |b| {
                b.iter_custom(|iters| {
                    let ms = timer
                        .time(&gpu, || {
                            for _ in 0..iters {
                                axpy(&gpu, 0.5f32, &x, &mut y)?;
                            }
                            Ok(())
                        })
                        .unwrap();
                    Duration::from_secs_f64(ms / 1e3)
                })
            });
        }
    } else {
        println!("GPU group skipped: no device");
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
