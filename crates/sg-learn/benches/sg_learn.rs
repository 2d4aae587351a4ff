//! Subspace against streaming operators on a regular grid, and one regression CG iteration on
//! Friedman1 (d = 10). The full Table 7.5 case (level 7, m = 10^5) is the `friedman1` example.
//! `learn_trie`: `B α` by `sg-cpu`'s evaluation trie against the three CPU operators (linear
//! basis, regular grids), set-up costs included as their own functions.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sg_core::{AdaptiveGrid, Basis, GridSpec};
use sg_cpu::EvalTuning;
use sg_cpu::learn::{
    AssembledOperator, StreamTuning, StreamingOperator, SubspaceOperator, SubspaceTuning, TrieOperator,
};
use sg_learn::datasets::friedman1;
use sg_learn::{Backend, CpuAssembled};

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

/// Each operator at its default parameters and at the largest block of its tuning space (the
/// trie's tile 256 = `MAX_TILE`, the subspace walk's chunk 512), since both gain from larger
/// blocks. The assembled `B` is skipped where it would exceed `CpuAssembled`'s default 1 GiB,
/// streaming (`O(N·m·d)`) and the set-ups are measured at `m = 20 000` only, plus streaming on
/// the cheapest `m = 10^5` case, so that the group stays short.
fn trie_mult(c: &mut Criterion) {
    let mut group = c.benchmark_group("learn_trie");
    group.sample_size(10);
    let cases = [
        (5, 5, 20_000),
        (5, 5, 100_000),
        (10, 4, 20_000),
        (10, 4, 100_000),
        (10, 5, 20_000),
        (10, 5, 100_000),
    ];
    for (d, n, m) in cases {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        let (x, _) = friedman1(m, 0.0, 1);
        let x = x.slice(ndarray::s![.., 0..d]).to_owned();
        let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
        let mut out = vec![0.0; m];
        let id = |what: &str| BenchmarkId::new(what, format!("d{d}_n{n}_N{}_m{m}", grid.len()));
        let basis = Basis::Linear;
        let t = TrieOperator::new(&grid, basis, x.view()).unwrap();
        let t256 = t.clone().with_tuning(EvalTuning { tile: 256, ..EvalTuning::DEFAULT });
        let b = SubspaceOperator::new(&grid, basis, x.view(), SubspaceTuning::default()).unwrap();
        let b512 = SubspaceTuning { chunk_size: 512, ..SubspaceTuning::default() };
        let b512 = SubspaceOperator::new(&grid, basis, x.view(), b512).unwrap();
        group.bench_function(id("trie_mult"), |bch| bch.iter(|| t.mult(black_box(&alpha), &mut out)));
        group.bench_function(id("trie_mult_tile256"), |bch| {
            bch.iter(|| t256.mult(black_box(&alpha), &mut out))
        });
        group.bench_function(id("subspace_mult"), |bch| bch.iter(|| b.mult(black_box(&alpha), &mut out)));
        group.bench_function(id("subspace_mult_chunk512"), |bch| {
            bch.iter(|| b512.mult(black_box(&alpha), &mut out))
        });
        if AssembledOperator::<f64>::bytes_needed(m, b.subspaces()) <= 1 << 30 {
            let a = AssembledOperator::<f64>::from_walker(&b, 1 << 30).unwrap();
            group
                .bench_function(id("assembled_mult"), |bch| bch.iter(|| a.mult(black_box(&alpha), &mut out)));
        }
        if m == 20_000 || (d, n) == (5, 5) {
            let s = StreamingOperator::new(&grid, basis, x.view(), StreamTuning::default()).unwrap();
            group
                .bench_function(id("streaming_mult"), |bch| bch.iter(|| s.mult(black_box(&alpha), &mut out)));
        }
        if m == 20_000 {
            setups(&mut group, &grid, x.view(), &id);
            // The same grid in another order: the operator permutes `α` into the bijection's.
            let p = TrieOperator::new(&reversed(&grid), basis, x.view()).unwrap();
            group.bench_function(id("trie_mult_permuted"), |bch| {
                bch.iter(|| p.mult(black_box(&alpha), &mut out))
            });
        }
    }
    group.finish();
}

/// What building each operator costs (the trie's includes finding the grid's regular level
/// and its order), for one-off products such as a prediction.
fn setups(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    grid: &AdaptiveGrid,
    x: ndarray::ArrayView2<'_, f64>,
    id: &dyn Fn(&str) -> BenchmarkId,
) {
    let basis = Basis::Linear;
    let walker = SubspaceOperator::new(grid, basis, x, SubspaceTuning::default()).unwrap();
    group.bench_function(id("trie_setup"), |bch| {
        bch.iter(|| TrieOperator::new(black_box(grid), basis, x).unwrap())
    });
    group.bench_function(id("subspace_setup"), |bch| {
        bch.iter(|| SubspaceOperator::new(black_box(grid), basis, x, SubspaceTuning::default()).unwrap())
    });
    group.bench_function(id("assembled_setup"), |bch| {
        bch.iter(|| AssembledOperator::<f64>::from_walker(black_box(&walker), 1 << 30).unwrap())
    });
}

/// `grid` with its points in reverse order.
fn reversed(grid: &AdaptiveGrid) -> AdaptiveGrid {
    let rev = |v: &[u32]| v.chunks(grid.dim()).rev().flatten().copied().collect::<Vec<_>>();
    AdaptiveGrid::from_points(grid.dim(), &rev(grid.levels()), &rev(grid.indices())).unwrap()
}

/// A fitted model's values at `m` points (one `B α`) through the default backend: assembling
/// `B` for it, as `Backend::evaluate` did before, against its one subspace walk now.
fn predict(c: &mut Criterion) {
    let mut group = c.benchmark_group("learn_predict");
    group.sample_size(10);
    for (d, n, m) in [(5, 5, 20_000), (10, 4, 20_000)] {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        let (x, _) = friedman1(m, 0.0, 1);
        let x = x.slice(ndarray::s![.., 0..d]).to_owned();
        let alpha: Vec<f64> = (0..grid.len()).map(|j| (j as f64).sin()).collect();
        let mut out = vec![0.0; m];
        let backend = CpuAssembled::default();
        let label = format!("d{d}_n{n}_N{}_m{m}", grid.len());
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let id = |what: &str| BenchmarkId::new(format!("{what}_{basis:?}"), &label);
            group.bench_function(id("assembled_then_mult"), |bch| {
                bch.iter(|| {
                    backend.data_operator(&grid, basis, x.view()).unwrap().mult(black_box(&alpha), &mut out)
                })
            });
            group.bench_function(id("evaluate"), |bch| {
                bch.iter(|| backend.evaluate(&grid, basis, black_box(&alpha), x.view(), &mut out))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, operators, friedman_iteration, trie_mult, predict);
criterion_main!(benches);
