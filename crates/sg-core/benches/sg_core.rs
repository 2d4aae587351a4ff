//! Baselines of the sequential reference: gp2idx / idx2gp per call, hierarchization and
//! evaluation throughput. Run with `cargo bench -p sg-core`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use sg_core::{Grid, GridSpec};
use std::hint::black_box;

fn specs() -> Vec<(&'static str, GridSpec)> {
    vec![
        ("regular d4 n8", GridSpec::regular(4, 8).unwrap()),
        ("truncated d4 n8", GridSpec::truncated(4, 8, &[8, 3, 6, 5]).unwrap()),
        ("regular d10 n8", GridSpec::regular(10, 8).unwrap()),
        ("truncated d10 n8", GridSpec::truncated(10, 8, &[8, 2, 7, 3, 6, 4, 8, 5, 3, 8]).unwrap()),
    ]
}

fn bijection(c: &mut Criterion) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut group = c.benchmark_group("bijection");
    const CALLS: usize = 1024;
    group.throughput(Throughput::Elements(CALLS as u64));
    for (name, spec) in specs() {
        let idx: Vec<u64> = (0..CALLS).map(|_| rng.random_range(0..spec.len())).collect();
        let pts: Vec<(Vec<u32>, Vec<u32>)> = idx.iter().map(|&j| spec.idx2gp(j).unwrap()).collect();
        group.bench_function(BenchmarkId::new("gp2idx", name), |b| {
            b.iter(|| pts.iter().map(|(l, i)| spec.gp2idx_unchecked(black_box(l), black_box(i))).sum::<u64>())
        });
        let d = spec.dim();
        let (mut l, mut i) = (vec![0; d], vec![0; d]);
        group.bench_function(BenchmarkId::new("idx2gp", name), |b| {
            b.iter(|| {
                for &j in &idx {
                    spec.idx2gp_unchecked(black_box(j), &mut l, &mut i);
                    black_box(&l);
                }
            })
        });
    }
    group.finish();
}

fn algorithms(c: &mut Criterion) {
    let mut group = c.benchmark_group("reference");
    group.sample_size(10);
    let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
    for (name, spec) in [
        ("d4 n8", GridSpec::regular(4, 8).unwrap()),
        ("d10 n5", GridSpec::regular(10, 5).unwrap()),
        ("d3 n6 boundary", GridSpec::regular(3, 6).unwrap().with_boundary().unwrap()),
    ] {
        let n = spec.len();
        let grid = Grid::<f64>::from_fn(spec.clone(), f).unwrap();
        group.throughput(Throughput::Elements(n));
        group.bench_function(BenchmarkId::new("hierarchize (points/s)", format!("{name} N={n}")), |b| {
            b.iter_batched_ref(|| grid.clone(), |g| g.hierarchize(), criterion::BatchSize::LargeInput)
        });
        let mut h = grid.clone();
        h.hierarchize();
        let m = 256;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let pts = Array2::from_shape_fn((m, spec.dim()), |_| rng.random_range(0.0..1.0));
        group.throughput(Throughput::Elements(m as u64));
        group.bench_function(BenchmarkId::new("evaluate (points/s)", format!("{name} N={n}")), |b| {
            b.iter(|| h.evaluate_batch(black_box(pts.view())).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bijection, algorithms);
criterion_main!(benches);
