//! One sweep of the thesis's stencils on 256^3, f32 and f64, on all cores in the fast and the
//! exact evaluation order, beside the copy floor (one grid read and one written) and the
//! sequential reference at 64^3.

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array3;
use rayon::prelude::*;
use stencil::{Config, Element, Order, Stencil};

fn stencils<T: Element>() -> [(&'static str, Stencil<T>); 3] {
    let f = T::from_f64;
    [
        ("7pt", Stencil::seven_point(f(0.25), f(0.125))),
        ("13pt", Stencil::thirteen_point(f(0.5), f(0.0625), f(0.015625))),
        ("27pt", Stencil::twenty_seven_point(f(0.5), f(1.0 / 32.0), f(1.0 / 64.0), f(1.0 / 64.0))),
    ]
}

fn bench_type<T: Element>(c: &mut Criterion) {
    let n = 256;
    let u = Array3::from_shape_fn((n, n, n), |(i, j, k)| T::from_f64(((i * 5 + j * 11 + k * 3) % 16) as f64));
    let mut g = c.benchmark_group(format!("sweep_256_{}", T::NAME));
    g.sample_size(10);
    // The copy floor as the sweeps see it: all rayon threads, a destination reused across
    // iterations (its pages faulted in once), one `memcpy` per part.
    let src = u.as_slice().expect("standard layout");
    let mut dst = src.to_vec();
    let part = src.len().div_ceil(4 * rayon::current_num_threads());
    g.bench_function("copy_floor", |b| {
        b.iter(|| dst.par_chunks_mut(part).zip(src.par_chunks(part)).for_each(|(d, s)| d.copy_from_slice(s)))
    });
    for (name, s) in stencils::<T>() {
        let mut field = u.clone();
        // Four sweeps per call: two passes of the default temporal depth; the default (fast)
        // evaluation order and the exact one.
        g.bench_function(format!("{name}_cpu_x4"), |b| {
            b.iter(|| s.iterate(&mut field, 4, &Config::cpu()).unwrap())
        });
        let exact = Config::cpu().with_order(Order::Exact);
        g.bench_function(format!("{name}_cpu_exact_x4"), |b| {
            b.iter(|| s.iterate(&mut field, 4, &exact).unwrap())
        });
    }
    g.finish();
    let small = u.slice(ndarray::s![..64, ..64, ..64]).to_owned();
    let mut g = c.benchmark_group(format!("sweep_64_{}", T::NAME));
    for (name, s) in stencils::<T>() {
        g.bench_function(format!("{name}_sequential"), |b| {
            b.iter(|| s.apply(small.view(), &Config::sequential()).unwrap())
        });
        g.bench_function(format!("{name}_cpu"), |b| {
            b.iter(|| s.apply(small.view(), &Config::cpu()).unwrap())
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    bench_type::<f32>(c);
    bench_type::<f64>(c);
}

criterion_group!(sweeps, benches);
criterion_main!(sweeps);
