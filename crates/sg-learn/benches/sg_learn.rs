//! Subspace against streaming operators on a regular grid, and one regression CG iteration on
//! Friedman1 (d = 10). The full Table 7.5 case (level 7, m = 10^5) is the `friedman1` example.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sg_core::{AdaptiveGrid, Basis, GridSpec};
use sg_cpu::learn::{StreamTuning, StreamingOperator, SubspaceOperator, SubspaceTuning};
use sg_learn::datasets::friedman1;

fn operators(c: &mut Criterion) {
    let mut group = c.benchmark_group("learn_operators");
    group.sample_size(10);
    for (d, n, m) in [(5, 5, 20_000), (5, 7, 4_000), (10, 5, 4_000)] {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        let (x, _) = friedman1(m, 0.0, 1);
        let x = x.slice(ndarray::s![.., 0..d]).to_owned();
        let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
        let mut out = vec![0.0; m];
        let mut back = vec![0.0; grid.len()];
        let label = format!("d{d}_n{n}_N{}_m{m}", grid.len());
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let s = StreamingOperator::new(&grid, basis, x.view(), StreamTuning::default()).unwrap();
            let b = SubspaceOperator::new(&grid, basis, x.view(), SubspaceTuning::default()).unwrap();
            let p = SubspaceOperator::new(&grid, basis, x.view(), SubspaceTuning::PVN).unwrap();
            let id = |what: &str| BenchmarkId::new(format!("{what}_{basis:?}"), &label);
            group
                .bench_function(id("streaming_mult"), |bch| bch.iter(|| s.mult(black_box(&alpha), &mut out)));
            group.bench_function(id("subspace_mult"), |bch| bch.iter(|| b.mult(black_box(&alpha), &mut out)));
            group.bench_function(id("subspace_pvn_mult"), |bch| {
                bch.iter(|| p.mult(black_box(&alpha), &mut out))
            });
            group.bench_function(id("streaming_transpose"), |bch| {
                bch.iter(|| s.mult_transpose(black_box(&out), &mut back))
            });
            group.bench_function(id("subspace_transpose"), |bch| {
                bch.iter(|| b.mult_transpose(black_box(&out), &mut back))
            });
        }
    }
    group.finish();
}

fn friedman_iteration(c: &mut Criterion) {
    let mut group = c.benchmark_group("learn_friedman1");
    group.sample_size(10);
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(10, 4).unwrap()).unwrap();
    let (x, _) = friedman1(20_000, 1.0, 2);
    let alpha = vec![0.1; grid.len()];
    let (mut v, mut back) = (vec![0.0; x.nrows()], vec![0.0; grid.len()]);
    let s = StreamingOperator::new(&grid, Basis::ModifiedLinear, x.view(), StreamTuning::default()).unwrap();
    let b = SubspaceOperator::new(&grid, Basis::ModifiedLinear, x.view(), SubspaceTuning::default()).unwrap();
    group.bench_function("cg_iteration_streaming_n4_m2e4", |bch| {
        bch.iter(|| {
            s.mult(black_box(&alpha), &mut v).unwrap();
            s.mult_transpose(&v, &mut back).unwrap();
        })
    });
    group.bench_function("cg_iteration_subspace_n4_m2e4", |bch| {
        bch.iter(|| {
            b.mult(black_box(&alpha), &mut v).unwrap();
            b.mult_transpose(&v, &mut back).unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, operators, friedman_iteration);
criterion_main!(benches);
