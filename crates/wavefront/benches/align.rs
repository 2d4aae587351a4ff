//! Sequence comparison and the executors: Smith-Waterman (BLOSUM62, 11/1) and LCS fast paths on
//! one thread and all threads, the generic closure path, and the parallel executor's scaling on
//! the synthetic kernel over tile sizes. Throughput is in cells (GCUPS = Gelem/s here).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use wavefront::Config2;
use wavefront::apps::synthetic::synthetic_2d;
use wavefront::apps::{Scoring, lcs_length, lcs_length_with, smith_waterman};

fn proteins(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| b"ARNDCQEGHILKMFPSTWYV"[rng.random_range(0..20)]).collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool")
}

fn sequences(c: &mut Criterion) {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = 4000;
    let (a, b) = (proteins(n, 1), proteins(n, 2));
    let scoring = Scoring::blosum62(11, 1);
    let mut g = c.benchmark_group("align_4000");
    g.sample_size(10);
    g.throughput(Throughput::Elements((n * n) as u64));
    for threads in [1, all] {
        let p = pool(threads);
        g.bench_function(BenchmarkId::new("smith_waterman", threads), |bch| {
            bch.iter(|| p.install(|| smith_waterman(&a, &b, &scoring).expect("valid")))
        });
        g.bench_function(BenchmarkId::new("lcs_length", threads), |bch| {
            bch.iter(|| p.install(|| lcs_length(&a, &b)))
        });
    }
    g.finish();
    let m = 1500;
    let mut g = c.benchmark_group("lcs_closure_1500");
    g.sample_size(10);
    g.throughput(Throughput::Elements((m * m) as u64));
    for threads in [1, all] {
        let cfg = Config2::cpu(128).with_pool(std::sync::Arc::new(pool(threads)));
        g.bench_function(BenchmarkId::new("run_2d", threads), |bch| {
            bch.iter(|| lcs_length_with(&a[..m], &b[..m], &cfg).expect("valid"))
        });
    }
    g.finish();
}

fn executors(c: &mut Criterion) {
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (dim, tsize) = (500, 10);
    let mut g = c.benchmark_group("synthetic_500_tsize10");
    g.sample_size(10);
    g.throughput(Throughput::Elements((dim * dim) as u64));
    g.bench_function("sequential", |bch| {
        bch.iter(|| synthetic_2d::<1>(dim, dim, tsize, &Config2::sequential()))
    });
    for tile in [1, 2, 4, 8, 10, 32] {
        for threads in [1, all] {
            let cfg = Config2::cpu(tile).with_pool(std::sync::Arc::new(pool(threads)));
            g.bench_function(BenchmarkId::new(format!("cpu_tile{tile}"), threads), |bch| {
                bch.iter(|| synthetic_2d::<1>(dim, dim, tsize, &cfg))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, sequences, executors);
criterion_main!(benches);
