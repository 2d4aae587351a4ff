//! Segmented primitives on the CPU against their floors and peers, in the same run:
//!
//! - `reduce`: 2^24 f32 `Add`, segment lengths 1, 8, 64, 1024, 2^17 and random (1..=2048),
//!   offsets and regular forms, against the read-bandwidth floor (one unsegmented parallel sum
//!   of the same data) and a naive rayon loop over segments;
//! - `scan`: in-place inclusive scans (offsets and regular forms) and exclusive scans (offsets
//!   and regular) of the same shapes against the copy floor (a parallel copy of the same bytes)
//!   and prefix-ops' unsegmented scan of the same data (the ceiling for long segments);
//! - `sort`: 2^22 u32 keys, segmented sort against `sort_unstable` per segment under rayon;
//! - `crossover`: `reduce` with every segment on one thread against every segment split over
//!   all threads, lengths 2^0 .. 2^17 (2^22 f32): the table the selector's `reduce_split` is
//!   read from;
//! - `crossover_partition`: the same for `partition` and `reorder_split` (every copy of the
//!   input into the buffer included on both sides);
//! - `spmv`: CSR `y = A x` (f64) on banded, random and power-law matrices against the `sprs`
//!   crate (one thread: its CSR product is sequential), ours on all threads and on one.
//!
//! `cargo bench -p prefix-ops --bench segmented`; `HETKIT_SEG_BENCH_LOG2=22` for 2^22 elements.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use prefix_ops::scan::single;
use prefix_ops::segmented::apps::Csr;
use prefix_ops::segmented::{self, Add, Order, SegmentedTuning, Segments};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

fn rng(seed: u64) -> hetkit_testkit::TestRng {
    hetkit_testkit::TestRng::seed_from_u64(seed)
}

fn log2() -> u32 {
    std::env::var("HETKIT_SEG_BENCH_LOG2").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
}

/// The shapes over `n` elements: (name, offsets form, regular form when there is one).
fn shapes(n: usize) -> Vec<(String, Segments, Option<Segments>)> {
    let mut out: Vec<(String, Segments, Option<Segments>)> = [1usize, 8, 64, 1024, 1 << 17]
        .into_iter()
        .map(|l| {
            let lens = vec![l; n / l];
            (l.to_string(), Segments::from_lengths(&lens).unwrap(), Some(Segments::regular(l, n / l)))
        })
        .collect();
    let mut r = rng(7);
    let mut lens = Vec::new();
    let mut left = n;
    while left > 0 {
        let l = r.random_range(1..=2048).min(left);
        lens.push(l);
        left -= l;
    }
    out.push(("random".into(), Segments::from_lengths(&lens).unwrap(), None));
    out
}

fn quick(g: &mut BenchmarkGroup<'_, WallTime>) {
    g.sample_size(10).warm_up_time(Duration::from_millis(200)).measurement_time(Duration::from_millis(800));
}

fn reduce(c: &mut Criterion) {
    let n = 1usize << log2();
    let mut r = rng(1);
    let xs: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let mut g = c.benchmark_group(format!("segmented_reduce_f32_2^{}", log2()));
    quick(&mut g);
    g.throughput(Throughput::Bytes((n * 4) as u64));
    // The floor: the same bytes read by the vectorised unsegmented reduction on all threads.
    g.bench_function("floor_unsegmented_sum", |b| {
        b.iter(|| xs.par_chunks(1 << 16).map(|c| single::reduce(c, Add)).reduce(|| -0.0, |a, b| a + b))
    });
    for (name, segs, regular) in shapes(n) {
        g.bench_with_input(BenchmarkId::new("hetkit_offsets", &name), &segs, |b, s| {
            b.iter(|| segmented::reduce(&xs, s, Add).unwrap())
        });
        if let Some(reg) = &regular {
            g.bench_with_input(BenchmarkId::new("hetkit_regular", &name), reg, |b, s| {
                b.iter(|| segmented::reduce(&xs, s, Add).unwrap())
            });
        }
        let offsets = segs.offsets();
        g.bench_with_input(BenchmarkId::new("naive_rayon_per_segment", &name), &offsets, |b, o| {
            b.iter(|| o.par_windows(2).map(|w| xs[w[0]..w[1]].iter().sum::<f32>()).collect::<Vec<f32>>())
        });
    }
    g.finish();
}

fn scan(c: &mut Criterion) {
    let n = 1usize << log2();
    let mut r = rng(2);
    let src: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    // Scanned in place again and again: the timing does not depend on the values.
    let mut buf = src.clone();
    let mut g = c.benchmark_group(format!("segmented_scan_f32_2^{}", log2()));
    quick(&mut g);
    g.throughput(Throughput::Bytes((n * 4) as u64));
    g.bench_function("floor_copy", |b| {
        b.iter(|| {
            buf.par_chunks_mut(1 << 16).zip(src.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s))
        })
    });
    // The ceiling for long segments: prefix-ops' unsegmented parallel scan of the same data.
    g.bench_function("plain_scan_inclusive", |b| b.iter(|| prefix_ops::scan::inclusive(&mut buf, Add)));
    g.bench_function("plain_scan_exclusive", |b| b.iter(|| prefix_ops::scan::exclusive(&mut buf, Add)));
    // Offsets with equal lengths are scanned as `regular` (the descriptor found the equal length
    // when it was built). These near-misses, one segment of twice the length at the end, are
    // equal only tile by tile: they time the kernels that read the offsets.
    for l in [1usize, 8] {
        let mut lens = vec![l; n / l - 2];
        lens.push(2 * l);
        let segs = Segments::from_lengths(&lens).unwrap();
        for (id, ex) in [("inclusive_offsets", false), ("exclusive_offsets", true)] {
            g.bench_with_input(BenchmarkId::new(id, format!("uneven{l}")), &segs, |b, s| {
                b.iter(|| {
                    if ex {
                        segmented::exclusive_scan(&mut buf, s, Add).unwrap()
                    } else {
                        segmented::inclusive_scan(&mut buf, s, Add).unwrap()
                    }
                })
            });
        }
    }
    for (name, segs, regular) in shapes(n) {
        g.bench_with_input(BenchmarkId::new("inclusive_offsets", &name), &segs, |b, s| {
            b.iter(|| segmented::inclusive_scan(&mut buf, s, Add).unwrap())
        });
        if let Some(reg) = &regular {
            g.bench_with_input(BenchmarkId::new("inclusive_regular", &name), reg, |b, s| {
                b.iter(|| segmented::inclusive_scan(&mut buf, s, Add).unwrap())
            });
        }
        g.bench_with_input(BenchmarkId::new("exclusive_offsets", &name), &segs, |b, s| {
            b.iter(|| segmented::exclusive_scan(&mut buf, s, Add).unwrap())
        });
        if let Some(reg) = &regular {
            g.bench_with_input(BenchmarkId::new("exclusive_regular", &name), reg, |b, s| {
                b.iter(|| segmented::exclusive_scan(&mut buf, s, Add).unwrap())
            });
        }
    }
    g.finish();
}

fn sort(c: &mut Criterion) {
    let n = 1usize << (log2() - 2);
    let mut r = rng(3);
    let keys: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let mut buf = keys.clone();
    let mut g = c.benchmark_group(format!("segmented_sort_u32_2^{}", log2() - 2));
    quick(&mut g);
    g.throughput(Throughput::Elements(n as u64));
    for (name, segs, _) in shapes(n).into_iter().skip(1) {
        g.bench_with_input(BenchmarkId::new("hetkit_sort", &name), &segs, |b, s| {
            b.iter(|| {
                buf.copy_from_slice(&keys);
                segmented::sort(&mut buf, s, Order::Ascending).unwrap()
            })
        });
        let lens = segs.lengths();
        g.bench_with_input(BenchmarkId::new("rayon_sort_unstable_per_segment", &name), &lens, |b, lens| {
            b.iter(|| {
                buf.copy_from_slice(&keys);
                let mut parts = Vec::with_capacity(lens.len());
                let mut rest = buf.as_mut_slice();
                for &l in lens {
                    let (h, t) = rest.split_at_mut(l);
                    parts.push(h);
                    rest = t;
                }
                parts.into_par_iter().for_each(|p| p.sort_unstable());
            })
        });
    }
    g.finish();
}

fn crossover(c: &mut Criterion) {
    let n = 1usize << (log2() - 2);
    let mut r = rng(4);
    let xs: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let one_thread = SegmentedTuning { reduce_split: usize::MAX, ..SegmentedTuning::DEFAULT };
    let split = SegmentedTuning { reduce_split: 1, ..SegmentedTuning::DEFAULT };
    let mut g = c.benchmark_group(format!("segmented_crossover_reduce_f32_2^{}", log2() - 2));
    g.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(400));
    g.throughput(Throughput::Bytes((n * 4) as u64));
    for k in 0..=17 {
        let l = 1usize << k;
        let segs = Segments::from_lengths(&vec![l; n / l]).unwrap();
        g.bench_with_input(BenchmarkId::new("segment_per_thread", l), &segs, |b, s| {
            b.iter(|| segmented::reduce_with(&xs, s, Add, &one_thread).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("segment_split", l), &segs, |b, s| {
            b.iter(|| segmented::reduce_with(&xs, s, Add, &split).unwrap())
        });
    }
    g.finish();
}

/// COO triplets of the three matrix families, `rows` square.
fn matrices(rows: usize) -> Vec<(&'static str, Vec<usize>, Vec<usize>)> {
    let mut r = rng(5);
    let banded: (Vec<usize>, Vec<usize>) =
        (0..rows).flat_map(|i| (i.saturating_sub(2)..(i + 3).min(rows)).map(move |j| (i, j))).unzip();
    let random: (Vec<usize>, Vec<usize>) =
        (0..rows * 8).map(|_| (r.random_range(0..rows), r.random_range(0..rows))).unzip();
    // Power law: row i holds about 8 * rows^0.5 / sqrt(i + 1) entries (a few very long rows).
    let power: (Vec<usize>, Vec<usize>) = (0..rows)
        .flat_map(|i| {
            let len = ((rows as f64).sqrt() * 4.0 / ((i + 1) as f64).sqrt()).ceil() as usize;
            (0..len.min(rows)).map(move |k| (i, (k * 7919 + i) % rows))
        })
        .unzip();
    vec![("banded", banded.0, banded.1), ("random", random.0, random.1), ("power_law", power.0, power.1)]
}

fn spmv(c: &mut Criterion) {
    let rows = 1usize << (log2() - 4);
    let mut g = c.benchmark_group(format!("segmented_spmv_f64_{rows}_rows"));
    quick(&mut g);
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut r = rng(6);
    let x: Vec<f64> = (0..rows).map(|_| r.random_range(-1.0..1.0)).collect();
    for (name, ri, ci) in matrices(rows) {
        let vals: Vec<f64> = (0..ri.len()).map(|_| r.random_range(-1.0..1.0)).collect();
        // sprs wants sorted, unique columns per row: both sides get its CSR form of the triplets.
        let s: sprs::CsMat<f64> = sprs::TriMat::from_triplets((rows, rows), ri, ci, vals).to_csr();
        let cols: Vec<u32> = s.indices().iter().map(|&c| c as u32).collect();
        let a = Csr::new(rows, s.indptr().raw_storage(), cols, s.data().to_vec()).unwrap();
        g.throughput(Throughput::Elements(a.nnz() as u64));
        let mut y = vec![0.0; rows];
        g.bench_function(BenchmarkId::new("hetkit", name), |b| b.iter(|| a.mul_vec(&x, &mut y).unwrap()));
        g.bench_function(BenchmarkId::new("hetkit_1_thread", name), |b| {
            b.iter(|| one.install(|| a.mul_vec(&x, &mut y).unwrap()))
        });
        g.bench_function(BenchmarkId::new("sprs", name), |b| {
            b.iter(|| {
                y.fill(0.0);
                sprs::prod::mul_acc_mat_vec_csr(s.view(), &x[..], &mut y[..]);
            })
        });
    }
    g.finish();
}

/// `partition` (keep the negative elements first) with every segment on one thread against
/// every segment split over all threads, lengths 2^0 .. 2^17: the table `reorder_split` is
/// read from.
fn crossover_partition(c: &mut Criterion) {
    let n = 1usize << (log2() - 2);
    let mut r = rng(8);
    let src: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let mut buf = src.clone();
    let one_thread = SegmentedTuning { reorder_split: usize::MAX, ..SegmentedTuning::DEFAULT };
    let split = SegmentedTuning { reorder_split: 1, ..SegmentedTuning::DEFAULT };
    let mut g = c.benchmark_group(format!("segmented_crossover_partition_f32_2^{}", log2() - 2));
    g.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_millis(400));
    g.throughput(Throughput::Bytes((n * 4) as u64));
    for k in 0..=17 {
        let l = 1usize << k;
        let segs = Segments::from_lengths(&vec![l; n / l]).unwrap();
        for (name, t) in [("segment_per_thread", &one_thread), ("segment_split", &split)] {
            g.bench_with_input(BenchmarkId::new(name, l), &segs, |b, s| {
                b.iter(|| {
                    buf.copy_from_slice(&src);
                    segmented::partition_with(&mut buf, s, |&x| x < 0.0, t).unwrap()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, reduce, scan, sort, crossover, crossover_partition, spmv);
criterion_main!(benches);
