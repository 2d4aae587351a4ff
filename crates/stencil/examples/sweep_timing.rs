//! Times hetkit's CPU sweeps and the copy floor for the peer comparison
//! (`benches/peers/stencil/run.sh`): one JSON line per measurement.
//!
//! `cargo run --release -p stencil --example sweep_timing -- STENCIL PRECISION N SWEEPS REPS`
//! with STENCIL one of 7, 13, 27, himeno-S, himeno-M (for Himeno, N is ignored).

use std::time::Instant;

use ndarray::Array3;
use stencil::{Config, Element, Himeno, Stencil};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn sweeps<T: Element>(
    name: &str,
    n: usize,
    sweeps: usize,
    reps: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let f = T::from_f64;
    let s = match name {
        "7" => Stencil::<T>::seven_point(f(0.25), f(0.125)),
        "13" => Stencil::<T>::thirteen_point(f(0.5), f(0.0625), f(0.015625)),
        "27" => Stencil::<T>::twenty_seven_point(f(0.5), f(1.0 / 32.0), f(1.0 / 64.0), f(1.0 / 64.0)),
        other => return Err(format!("unknown stencil {other}").into()),
    };
    let u0 = Array3::from_shape_fn((n, n, n), |(i, j, k)| f(((i * 5 + j * 11 + k * 3) % 16) as f64));
    // The copy floor: one grid read and one written.
    let mut dst = u0.clone();
    let copy = median(
        (0..reps.max(3))
            .map(|_| {
                let t = Instant::now();
                dst.assign(&u0);
                t.elapsed().as_secs_f64()
            })
            .collect(),
    );
    std::hint::black_box(&dst);
    let mut u = u0.clone();
    s.iterate(&mut u, 1, &Config::cpu())?; // warm-up
    let per_sweep = median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                s.iterate(&mut u, sweeps, &Config::cpu()).expect("valid grid");
                t.elapsed().as_secs_f64() / sweeps as f64
            })
            .collect(),
    );
    let bytes = 2.0 * (n * n * n * std::mem::size_of::<T>()) as f64;
    println!(
        "{{\"tool\": \"hetkit\", \"stencil\": \"{name}\", \"precision\": \"{}\", \"n\": {n}, \"sweeps\": {sweeps}, \"ms_per_sweep\": {:.3}, \"copy_ms\": {:.3}, \"copy_gbps\": {:.2}, \"of_copy_floor\": {:.3}}}",
        T::NAME,
        per_sweep * 1e3,
        copy * 1e3,
        bytes / copy / 1e9,
        copy / per_sweep
    );
    Ok(())
}

fn himeno<T: Element>(size: &str, iterations: usize) -> Result<(), Box<dyn std::error::Error>> {
    let (i, j, k) = match size {
        "S" => (65, 65, 129),
        "M" => (129, 129, 257),
        other => return Err(format!("unknown Himeno size {other}").into()),
    };
    let h = Himeno::<T>::new(i, j, k)?;
    h.run(1, &Config::cpu())?;
    let r = h.run(iterations, &Config::cpu())?;
    println!(
        "{{\"tool\": \"hetkit\", \"stencil\": \"himeno-{size}\", \"precision\": \"{}\", \"iterations\": {iterations}, \"mflops\": {:.1}, \"gosa\": {:.9e}}}",
        T::NAME,
        r.mflops,
        r.gosa
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let get = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let (name, precision) = (get(0, "7"), get(1, "f32"));
    let (n, sweeps_n, reps) = (get(2, "256").parse()?, get(3, "10").parse()?, get(4, "3").parse()?);
    match (name.strip_prefix("himeno-"), precision.as_str()) {
        (Some(size), "f32") => himeno::<f32>(size, sweeps_n),
        (Some(size), "f64") => himeno::<f64>(size, sweeps_n),
        (None, "f32") => sweeps::<f32>(&name, n, sweeps_n, reps),
        (None, "f64") => sweeps::<f64>(&name, n, sweeps_n, reps),
        (_, p) => Err(format!("unknown precision {p}").into()),
    }
}
