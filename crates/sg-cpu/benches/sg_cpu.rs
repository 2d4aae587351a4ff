//! sg-cpu against the sequential sg-core reference: hierarchization (grid points/s) and
//! evaluation (points/s) on the peer-comparison grids. The peer ratios come from
//! `benches/peers/run_sg.sh`, which runs the `sg_compare` example beside Tasmanian and SG++.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ndarray::Array2;
use rand::{Rng, SeedableRng};
use sg_core::{Grid, GridSpec};
use sg_cpu::{EvalVariant, Evaluator, Hierarchizer};

fn f(x: &[f64]) -> f64 {
    x.iter().map(|&v| 4.0 * v * (1.0 - v)).product()
}

fn bench(c: &mut Criterion) {
    let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for (d, n) in [(4usize, 8u32), (10, 5)] {
        let spec = GridSpec::regular(d, n).unwrap();
        let nodal = Grid::from_fn(spec.clone(), f).unwrap();
        let plan = Hierarchizer::new(&spec).unwrap();
        let mut g = c.benchmark_group(format!("hierarchize/d{d}n{n}"));
        g.throughput(Throughput::Elements(spec.len()));
        g.bench_function("sg-cpu", |b| {
            b.iter_batched_ref(
                || nodal.clone(),
                |v| plan.hierarchize(v.values_mut(), 1).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
        g.bench_function("sg-core reference", |b| {
            b.iter_batched_ref(|| nodal.clone(), |v| v.hierarchize(), criterion::BatchSize::LargeInput)
        });
        g.finish();

        let mut grid = nodal.clone();
        grid.hierarchize();
        let m = 20_000;
        let pts = Array2::from_shape_fn((m, d), |_| r.random_range(0.0..1.0));
        let ev = Evaluator::new(&spec).unwrap();
        let mut g = c.benchmark_group(format!("evaluate/d{d}n{n}"));
        g.throughput(Throughput::Elements(m as u64));
        for v in [EvalVariant::PointTiles, EvalVariant::BlocksParallel] {
            g.bench_with_input(BenchmarkId::new("sg-cpu", format!("{v:?}")), &v, |b, &v| {
                b.iter(|| ev.evaluate_with(v, grid.values(), 1, pts.view()).unwrap())
            });
        }
        let small = pts.slice(ndarray::s![..1000, ..]);
        g.throughput(Throughput::Elements(1000));
        g.bench_function("sg-core reference (1000 points)", |b| {
            b.iter(|| grid.evaluate_batch(small).unwrap())
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
