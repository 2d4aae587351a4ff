//! GPU benchmarks of issue 5's cases: evaluation of m = 2·10^6 points, hierarchization (against a
//! device-to-device copy of the same bytes), and spvm, f32 and f64. Timed with CUDA events inside
//! `iter_custom`; skips without a device. Run: `cargo bench -p sg-cuda`.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use cuda_kernels::{Gpu, GpuTimer};
use sg_core::{GridSpec, Real};
use sg_cuda::{DeviceGrid, DeviceMatrix, DeviceReal, EvalConfig, SpvmConfig, SweepConfig};

const CASES: [(usize, u32); 4] = [(4, 14), (6, 10), (10, 7), (10, 10)];
const M: usize = 2_000_000;

fn values<T: Real>(n: usize) -> Vec<T> {
    (0..n).map(|i| T::from_f64(((i * 2654435761) % 1000) as f64 / 1000.0 - 0.5)).collect()
}

fn points<T: Real>(m: usize, d: usize) -> Vec<T> {
    (0..m * d).map(|i| T::from_f64(((i as f64 + 1.0) * 0.618_033_988_749_895).fract())).collect()
}

fn time_ms(gpu: &Gpu, iters: u64, mut f: impl FnMut()) -> Duration {
    let timer = GpuTimer::new(gpu).expect("events");
    let ms = timer
        .time(gpu, || {
            for _ in 0..iters {
                f();
            }
            Ok(())
        })
        .expect("timing");
    Duration::from_secs_f64(ms * 1e-3)
}

fn bench_type<T: DeviceReal>(c: &mut Criterion, gpu: &Gpu) {
    for (d, n) in CASES {
        let spec = GridSpec::regular(d, n).unwrap();
        let len = spec.len() as usize;
        let mut grid =
            DeviceGrid::from_values(gpu, spec.clone(), 1, &values::<T>(len), SweepConfig::default()).unwrap();
        let blocks = grid.trie().blocks();
        let pts = gpu.upload(&points::<T>(M, d)).unwrap();
        let mut out = gpu.zeros::<T>(M).unwrap();
        let mut g = c.benchmark_group(format!("sg_cuda_{}_d{d}_n{n}", T::SUFFIX));
        g.sample_size(10);
        // Thesis flop count: 6 d flops per point per block.
        g.throughput(Throughput::Elements((6 * d * blocks * M) as u64));
        for pt in [1u32, 2, 4] {
            for bs in [64u32, 128, 256] {
                let cfg = EvalConfig { block_size: bs, points_per_thread: Some(pt), stage_trie: true };
                g.bench_function(format!("evaluate_flops/bs{bs}_pt{pt}"), |b| {
                    b.iter_custom(|iters| {
                        time_ms(gpu, iters, || grid.evaluate_device(gpu, &pts, M, &mut out, &cfg).unwrap())
                    })
                });
            }
        }
        // Hierarchization: d sweeps reading and writing N values, against a copy of N values d times.
        g.throughput(Throughput::Bytes((2 * d * len * size_of::<T>()) as u64));
        g.bench_function("hierarchize_bytes", |b| {
            b.iter_custom(|iters| time_ms(gpu, iters, || grid.hierarchize().unwrap()))
        });
        let src = gpu.zeros::<T>(len).unwrap();
        let mut dst = gpu.zeros::<T>(len).unwrap();
        g.bench_function("copy_bytes", |b| {
            b.iter_custom(|iters| {
                time_ms(gpu, iters, || {
                    for _ in 0..d {
                        gpu.stream().memcpy_dtod(&src, &mut dst).unwrap();
                    }
                })
            })
        });
        g.finish();
    }
    // spvm: 64 selected rows of a 128 x 2^20 matrix.
    let (rows, p, nsel) = (128usize, 1usize << 20, 64usize);
    let a = DeviceMatrix::upload(gpu, &values::<T>(rows * p), p).unwrap();
    let x = gpu.upload(&values::<T>(nsel)).unwrap();
    let ix = gpu.upload(&(0..nsel as u64).map(|i| (i * 37) % rows as u64).collect::<Vec<_>>()).unwrap();
    let mut y = gpu.zeros::<T>(p).unwrap();
    let mut g = c.benchmark_group(format!("sg_cuda_{}_spvm", T::SUFFIX));
    g.sample_size(10);
    g.throughput(Throughput::Bytes(((nsel + 1) * p * size_of::<T>()) as u64));
    for pt in [1u32, 2, 4] {
        let cfg = SpvmConfig { block_size: 256, outputs_per_thread: pt };
        g.bench_function(format!("spvm_bytes/pt{pt}"), |b| {
            b.iter_custom(|iters| time_ms(gpu, iters, || a.spvm_device(&x, &ix, &mut y, &cfg).unwrap()))
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let gpu = match Gpu::new(0) {
        Ok(g) => g,
        Err(e) => {
            println!("SKIPPED sg_cuda benches: no GPU ({e})");
            return;
        }
    };
    println!("device: {}", gpu.props());
    bench_type::<f32>(c, &gpu);
    bench_type::<f64>(c, &gpu);
}

criterion_group!(sg_cuda, benches);
criterion_main!(sg_cuda);
