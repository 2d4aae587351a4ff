//! Times hetkit's CPU sweeps and the copy floor for the peer comparison
//! (`benches/peers/stencil/run.sh`): one JSON line per measurement.
//!
//! `cargo run --release -p stencil --example sweep_timing -- STENCIL PRECISION N SWEEPS REPS`
//! `[DEPTH [BAND]]` with STENCIL one of 7, 13, 27, himeno-S, himeno-M (for Himeno, N is
//! ignored), DEPTH the temporal blocking depth and BAND its rows per band (default: the tuned
//! or default blocks). `STENCIL_ORDER=exact` or `fast` times that evaluation order instead of
//! the default one (the tuned order, else the built-in rule of `Config::order`).

use std::time::Instant;

use ndarray::Array3;
use rayon::prelude::*;
use stencil::{Config, CpuBlocks, Element, Himeno, Order, Stencil};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The copy floor: the grid copied into a destination allocated and faulted in beforehand and
/// reused across repetitions, split over the rayon pool (`RAYON_NUM_THREADS`, the sweeps'
/// threads) with `copy_from_slice` (a `memcpy` per part): one grid read and one written at
/// the bandwidth the sweeps can reach, the median of at least 5: (wall, CPU) seconds.
fn copy_floor<T: Element>(src: &Array3<T>, reps: usize) -> (f64, f64) {
    let src = src.as_slice().expect("standard layout");
    let mut dst = vec![T::ZERO; src.len()];
    let part = src.len().div_ceil(4 * rayon::current_num_threads()).max(1);
    let mut copy = || {
        dst.par_chunks_mut(part).zip(src.par_chunks(part)).for_each(|(d, s)| d.copy_from_slice(s));
    };
    copy();
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..reps.max(5) {
        let (t, c) = (Instant::now(), cpu_seconds());
        copy();
        wall.push(t.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c);
    }
    std::hint::black_box(&dst);
    (median(wall), median(cpu))
}

/// CPU time of all this process's threads so far, from `/proc/self/task/*/schedstat` (time on
/// a CPU, in nanoseconds): on a loaded machine it separates work from waiting for a core. Zero
/// where `/proc` is absent.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0.0 };
    let ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    ns as f64 * 1e-9
}

fn sweeps<T: Element>(
    name: &str,
    n: usize,
    sweeps: usize,
    reps: usize,
    depth: Option<(usize, usize)>,
) -> Result<(), Box<dyn std::error::Error>> {
    let f = T::from_f64;
    let s = match name {
        "7" => Stencil::<T>::seven_point(f(0.25), f(0.125)),
        "13" => Stencil::<T>::thirteen_point(f(0.5), f(0.0625), f(0.015625)),
        "27" => Stencil::<T>::twenty_seven_point(f(0.5), f(1.0 / 32.0), f(1.0 / 64.0), f(1.0 / 64.0)),
        other => return Err(format!("unknown stencil {other}").into()),
    };
    let u0 = Array3::from_shape_fn((n, n, n), |(i, j, k)| f(((i * 5 + j * 11 + k * 3) % 16) as f64));
    let (copy, copy_cpu) = copy_floor(&u0, reps);
    let mut u = u0.clone();
    let config = match depth {
        Some((depth, j_block)) => {
            Config::cpu().with_cpu_blocks(CpuBlocks { depth, j_block, ..CpuBlocks::default() })
        }
        None => Config::cpu(),
    };
    let order = match std::env::var("STENCIL_ORDER").as_deref() {
        Ok("exact") => Some(Order::Exact),
        Ok("fast") => Some(Order::Fast),
        _ => None,
    };
    let config = match order {
        Some(o) => config.with_order(o),
        None => config,
    };
    s.iterate(&mut u, sweeps, &config)?; // warm-up, and the pages of `u` faulted in
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let (t, c) = (Instant::now(), cpu_seconds());
        s.iterate(&mut u, sweeps, &config).expect("valid grid");
        wall.push(t.elapsed().as_secs_f64() / sweeps as f64);
        cpu.push((cpu_seconds() - c) / sweeps as f64);
    }
    let (per_sweep, cpu_per_sweep) = (median(wall), median(cpu));
    let bytes = 2.0 * (n * n * n * std::mem::size_of::<T>()) as f64;
    println!(
        "{{\"tool\": \"{}\", \"stencil\": \"{name}\", \"precision\": \"{}\", \"order\": \"{}\", \"n\": {n}, \"sweeps\": {sweeps}, \"ms_per_sweep\": {:.3}, \"copy_ms\": {:.3}, \"copy_gbps\": {:.2}, \"of_copy_floor\": {:.3}, \"cpu_ms_per_sweep\": {:.3}, \"copy_cpu_ms\": {:.3}}}",
        match order {
            Some(Order::Exact) => "hetkit-exact",
            Some(Order::Fast) => "hetkit-fast",
            None => "hetkit",
        },
        T::NAME,
        order.map_or("default".to_string(), |o| format!("{o:?}")),
        per_sweep * 1e3,
        copy * 1e3,
        bytes / copy / 1e9,
        copy / per_sweep,
        cpu_per_sweep * 1e3,
        copy_cpu * 1e3
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
    let depth = match a.get(5) {
        Some(d) => Some((d.parse()?, get(6, &CpuBlocks::default().j_block.to_string()).parse()?)),
        None => None,
    };
    match (name.strip_prefix("himeno-"), precision.as_str()) {
        (Some(size), "f32") => himeno::<f32>(size, sweeps_n),
        (Some(size), "f64") => himeno::<f64>(size, sweeps_n),
        (None, "f32") => sweeps::<f32>(&name, n, sweeps_n, reps, depth),
        (None, "f64") => sweeps::<f64>(&name, n, sweeps_n, reps, depth),
        (_, p) => Err(format!("unknown precision {p}").into()),
    }
}
