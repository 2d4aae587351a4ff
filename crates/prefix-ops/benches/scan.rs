//! Scan benchmarks. CPU: a plain sequential loop vs the vectorised single-thread scan vs the
//! multi-threaded chained scan on 2^24 f32, and batched rows. GPU (skipped without a device): the
//! look-back scan of 2^24 and 2^28 f32, batched rows of 256 / 1024 / 4096 (2^24 in all) and
//! segmented with uniform 1..2048 lengths, timed with CUDA events, in GB/s (read + write).
//!
//! Short run: `cargo bench -p prefix-ops --bench scan -- --measurement-time 2 --warm-up-time 1`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use cuda_kernels::{Gpu, GpuTimer};
use prefix_ops::scan::dispatch::ScanOptions;
use prefix_ops::scan::gpu::{self, Layout};
use prefix_ops::scan::{self, Add, reference, single};
use rand::{Rng, SeedableRng};

const N: usize = 1 << 24;

fn input(n: usize) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

fn cpu(c: &mut Criterion) {
    let xs = input(N);
    let mut g = c.benchmark_group("scan_cpu_f32_2^24");
    g.throughput(Throughput::Bytes((2 * N * 4) as u64));
    g.sample_size(10);
    let mut buf = xs.clone();
    g.bench_function("sequential_loop", |b| b.iter(|| reference::inclusive(black_box(&mut buf), Add)));
    g.bench_function("single_thread_simd", |b| b.iter(|| single::inclusive(black_box(&mut buf), Add)));
    g.bench_function(format!("chained_{}_threads", rayon::current_num_threads()), |b| {
        b.iter(|| scan::inclusive(black_box(&mut buf), Add))
    });
    for row in [256usize, 1024, 4096] {
        g.bench_function(format!("rows_of_{row}"), |b| {
            b.iter(|| scan::inclusive_rows(black_box(&mut buf), row, Add).unwrap())
        });
    }
    g.finish();
}

fn gpu_group(c: &mut Criterion) {
    let Ok(dev) = Gpu::new(0) else {
        println!("GPU group skipped: no device");
        return;
    };
    println!("GPU: {}", dev.props());
    let timer = GpuTimer::new(&dev).unwrap();
    let mut g = c.benchmark_group("scan_gpu_f32");
    let time = |name: String,
                n: usize,
                g: &mut criterion::BenchmarkGroup<'_, _>,
                f: &mut dyn FnMut() -> prefix_ops::Result<()>| {
        g.throughput(Throughput::Bytes((2 * n * 4) as u64));
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let ms = timer
                    .time(&dev, || {
                        for _ in 0..iters {
                            f().map_err(|e| cuda_kernels::Error::Invalid(e.to_string()))?;
                        }
                        Ok(())
                    })
                    .unwrap();
                Duration::from_secs_f64(ms / 1e3)
            })
        });
    };
    for n in [1usize << 24, 1 << 28] {
        let src = dev.upload(&input(n)).unwrap();
        let mut dst = dev.zeros::<f32>(n).unwrap();
        time(format!("copy/{n}"), n, &mut g, &mut || {
            Ok(dev.stream().memcpy_dtod(&src, &mut dst).map_err(cuda_kernels::Error::from)?)
        });
        time(format!("lookback/{n}"), n, &mut g, &mut || {
            gpu::scan_into_device(&dev, &src, &mut dst, Layout::Array, Add, false, &ScanOptions::default())
        });
    }
    let src = dev.upload(&input(N)).unwrap();
    let mut dst = dev.zeros::<f32>(N).unwrap();
    for row_len in [32usize, 256, 1024, 4096] {
        time(format!("rows_of_{row_len}/{N}"), N, &mut g, &mut || {
            gpu::scan_into_device(
                &dev,
                &src,
                &mut dst,
                Layout::Rows { row_len },
                Add,
                false,
                &ScanOptions::default(),
            )
        });
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let mut offsets = vec![0usize];
    while *offsets.last().unwrap() < N {
        let next = (*offsets.last().unwrap() + rng.random_range(1..=2048)).min(N);
        offsets.push(next);
    }
    // Host offsets: the timing includes their validation and upload (about N / 1024 values).
    time(format!("segments_1..2048/{N}"), N, &mut g, &mut || {
        gpu::scan_into_device(
            &dev,
            &src,
            &mut dst,
            Layout::Segments(&offsets),
            Add,
            false,
            &ScanOptions::default(),
        )
    });
    g.finish();
}

criterion_group!(benches, cpu, gpu_group);
criterion_main!(benches);
