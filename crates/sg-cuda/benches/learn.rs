//! GPU benchmarks of the learning operators (issue 20): `B α` and `Bᵀ v` on Friedman1-shaped data
//! (d = 10, uniform points; the thesis's Table 7.5 uses m = 10^6 and a level-7 grid, N = 397,825)
//! and the mass-matrix product, f32 and f64, the default (dimension compiled in) against the
//! embedded generic kernel. Throughput is in the thesis's flops (§7.1.4, Table 8.1): 6 per 1-D
//! factor for the streaming operators, 14 per dimension and pair for the mass matrix, so
//! criterion's "elem/s" is flop/s and divides by the device's FP32/FP64 peak for % of peak.
//! Timed with CUDA events; skips without a device. The peer in the same run is sg-cpu's
//! unified streaming operator (`f64`, all cores, wall clock) on the same data and grid, so the
//! GPU/CPU ratio needs no second run.
//!
//! Run: `cargo bench -p sg-cuda --bench learn`; sizes: `HETKIT_LEARN_M` (default 2^18),
//! `HETKIT_LEARN_LEVEL` (default 5), e.g. `HETKIT_LEARN_M=1000000 HETKIT_LEARN_LEVEL=7` for the
//! thesis's case (about a second per product on a current GPU).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use cuda_kernels::{Gpu, GpuTimer};
use ndarray::Array2;
use sg_core::{GridSpec, Real};
use sg_cuda::DeviceReal;
use sg_cuda::learn::{
    Basis, DeviceData, GridPoints, LearnConfig, LearnKernel, MassOperator, StreamConfig, StreamingOperator,
};

const D: usize = 10;

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Low-discrepancy points in `[0, 1)^d` (Friedman1's inputs are uniform).
fn points<T: Real>(m: usize, d: usize) -> Array2<T> {
    Array2::from_shape_fn((m, d), |(i, t)| {
        T::from_f64(((i as f64 + 1.0) * (0.618_033_988_749_895 + 0.1 * t as f64)).fract())
    })
}

fn time(gpu: &Gpu, iters: u64, mut f: impl FnMut()) -> Duration {
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

fn bench_streaming<T: DeviceReal>(c: &mut Criterion, gpu: &Gpu, m: usize, level: u32) {
    let grid = GridPoints::regular(&GridSpec::regular(D, level).unwrap()).unwrap();
    let n = grid.len();
    let data = Arc::new(DeviceData::upload(gpu, points::<T>(m, D).view()).unwrap());
    let alpha = gpu.upload(&vec![T::from_f64(0.5); n]).unwrap();
    let vin = gpu.upload(&vec![T::from_f64(0.5); m]).unwrap();
    let mut v = gpu.zeros::<T>(m).unwrap();
    let mut out = gpu.zeros::<T>(n).unwrap();
    let mut g = c.benchmark_group(format!("learn_{}_d{D}_l{level}_m{m}", T::SUFFIX));
    g.sample_size(10);
    let configs = [("default", LearnConfig::default()), ("generic", LearnConfig::GENERIC)];
    for basis in [Basis::Linear, Basis::ModifiedLinear] {
        for (name, cfg) in configs {
            let op = StreamingOperator::on_data(data.clone(), &grid, basis, cfg).unwrap();
            g.throughput(Throughput::Elements(op.mult_flops() as u64));
            g.bench_function(format!("mult_flops/{basis:?}/{name}"), |b| {
                b.iter_custom(|iters| time(gpu, iters, || op.mult_device(&alpha, &mut v).unwrap()))
            });
            g.throughput(Throughput::Elements(op.mult_transpose_flops() as u64));
            g.bench_function(format!("mult_t_flops/{basis:?}/{name}"), |b| {
                b.iter_custom(|iters| time(gpu, iters, || op.mult_transpose_device(&vin, &mut out).unwrap()))
            });
        }
    }
    // The CPU peer, f64 only (sg-cpu's operators are f64), on the same grid and data.
    if T::SUFFIX == "f64" {
        let adaptive = sg_core::AdaptiveGrid::from_spec(&GridSpec::regular(D, level).unwrap()).unwrap();
        let x64 = points::<f64>(m, D);
        let a64 = vec![0.5; n];
        let mut out64 = vec![0.0; m];
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let cpu = sg_cpu::learn::StreamingOperator::new(&adaptive, basis, x64.view(), Default::default())
                .unwrap();
            let op = StreamingOperator::<f64>::on_data(
                Arc::new(DeviceData::upload(gpu, x64.view()).unwrap()),
                &grid,
                basis,
                LearnConfig::default(),
            )
            .unwrap();
            g.throughput(Throughput::Elements(op.mult_flops() as u64));
            g.bench_function(format!("mult_flops/{basis:?}/cpu_streaming"), |b| {
                b.iter(|| cpu.mult(&a64, &mut out64).unwrap())
            });
        }
    }
    g.finish();
}

fn bench_mass<T: DeviceReal>(c: &mut Criterion, gpu: &Gpu, level: u32) {
    // The O(N²) product: a 5-D grid of a few thousand points.
    let grid = GridPoints::regular(&GridSpec::regular(5, level + 1).unwrap()).unwrap();
    let n = grid.len();
    let vin = gpu.upload(&vec![T::from_f64(0.5); n]).unwrap();
    let mut out = gpu.zeros::<T>(n).unwrap();
    let mut g = c.benchmark_group(format!("learn_mass_{}_d5_l{}_n{n}", T::SUFFIX, level + 1));
    g.sample_size(10);
    for (name, cfg) in
        [("default", StreamConfig::MASS), ("generic", StreamConfig::generic(LearnKernel::Mass))]
    {
        let op = MassOperator::<T>::with_config(gpu, &grid, cfg).unwrap();
        g.throughput(Throughput::Elements(op.flops() as u64));
        g.bench_function(format!("mass_flops/{name}"), |b| {
            b.iter_custom(|iters| {
                time(gpu, iters, || op.apply_device(&vin, T::from_f64(1e-3), &mut out).unwrap())
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let gpu = match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            println!("SKIPPED learn benches: no GPU ({e})");
            return;
        }
    };
    let m = env_or("HETKIT_LEARN_M", 1 << 18);
    let level = env_or("HETKIT_LEARN_LEVEL", 5) as u32;
    bench_streaming::<f32>(c, &gpu, m, level);
    bench_streaming::<f64>(c, &gpu, m, level);
    bench_mass::<f32>(c, &gpu, level);
    bench_mass::<f64>(c, &gpu, level);
}

criterion_group!(learn, benches);
criterion_main!(learn);
