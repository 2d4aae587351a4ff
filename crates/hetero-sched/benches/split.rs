//! Benchmarks of `hetero_sched::split`:
//!
//! - `overhead/*`: the dynamic queue over an operation that does nothing, one item per grain,
//!   so the time per item is the scheduling overhead per work item (goal: at most 5 us);
//! - `two_cpus/*`: a compute-bound operation on two unequal single-thread CPU "devices" (one
//!   slowed down 2x by spinning), each alone, split statically and dynamically. Three static
//!   splits: models calibrated on each device alone (`static_alone`), on both at once
//!   (`static_concurrent`, [`calibrate_concurrent`]), and those corrected by the measured finish
//!   times of one split (`static_refined`, [`refine`]). After criterion, the efficiency of each
//!   split against the sum of the two devices' separate throughputs is printed, the runs
//!   interleaved round by round (goal: at least 95 %).

use std::hint::black_box;
use std::ops::Range;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use hetero_sched::split::{
    AffineModel, BoxError, CpuDevice, Device, DeviceKind, DynamicPlan, Grain, MonotonicClock, Splittable,
    Throttled, calibrate, calibrate_concurrent, refine, run_dynamic, run_static, run_static_timed,
    solve_static,
};

/// Does nothing per item: what is measured is the scheduler.
struct Noop(usize);

impl Splittable for Noop {
    type Output = ();
    type Lane = ();
    fn items(&self) -> usize {
        self.0
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<(), BoxError> {
        black_box(r);
        Ok(())
    }
}

/// `iters` dependent floating-point steps per item: compute-bound, equal cost per item.
struct Spin {
    n: usize,
    iters: u32,
}

impl Splittable for Spin {
    type Output = f64;
    type Lane = ();
    fn items(&self) -> usize {
        self.n
    }
    fn run_cpu(&self, r: Range<usize>) -> Result<f64, BoxError> {
        let mut total = 0.0;
        for i in r {
            let mut x = i as f64 * 1e-6 + 0.5;
            for _ in 0..self.iters {
                x = x * 0.999_999 + 1e-7 * (x * x);
            }
            total += x;
        }
        Ok(black_box(total))
    }
}

fn overhead(c: &mut Criterion) {
    let n = 100_000;
    let mut g = c.benchmark_group("overhead");
    g.throughput(Throughput::Elements(n as u64));
    g.sample_size(20);
    for threads in [1, 2] {
        let cpu = CpuDevice::with_threads(threads).unwrap();
        let devices: [&dyn Device; 1] = [&cpu];
        let plan =
            DynamicPlan::new(&[(DeviceKind::Cpu, threads, Grain { items: 1, seconds: 1e-6 })]).unwrap();
        g.bench_function(format!("dynamic_grain1_{threads}threads"), |b| {
            b.iter(|| run_dynamic(&Noop(n), &devices, &plan).unwrap())
        });
    }
    g.finish();
}

const N: usize = 200_000;
const ITERS: u32 = 200;
const SLOW: f64 = 2.0;

struct TwoCpus {
    fast: CpuDevice,
    slow: Throttled<CpuDevice>,
    /// Calibrated on each device alone.
    alone: [AffineModel; 2],
    /// Calibrated on both devices at once.
    concurrent: Vec<AffineModel>,
    /// `concurrent`, corrected by the finish times of one split (median of three).
    refined: Vec<AffineModel>,
}

impl TwoCpus {
    fn new() -> Self {
        let fast = CpuDevice::with_threads(1).unwrap();
        let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), SLOW).unwrap();
        let op = Spin { n: N, iters: ITERS };
        let clock = MonotonicClock::new();
        let sizes = [N / 16, N / 8, N / 4];
        let alone = [
            calibrate(&op, &fast, &sizes, 5, &clock).unwrap(),
            calibrate(&op, &slow, &sizes, 5, &clock).unwrap(),
        ];
        let devices: [&dyn Device; 2] = [&fast, &slow];
        let concurrent = calibrate_concurrent(&op, &devices, &sizes, 5, &clock).unwrap();
        let shares = solve_static(N, &concurrent, None).unwrap();
        let mut finish = [Vec::new(), Vec::new()];
        for _ in 0..3 {
            let (_, t) = run_static_timed(&op, &devices, &shares, &clock).unwrap();
            finish[0].push(t[0]);
            finish[1].push(t[1]);
        }
        let seen = [median(finish[0].clone()), median(finish[1].clone())];
        let refined = refine(&concurrent, &shares, &seen).unwrap();
        TwoCpus { fast, slow, alone, concurrent, refined }
    }

    fn devices(&self) -> [&dyn Device; 2] {
        [&self.fast, &self.slow]
    }

    fn shares(models: &[AffineModel]) -> Vec<usize> {
        solve_static(N, models, None).unwrap()
    }

    fn plan(&self) -> DynamicPlan {
        let grain = 512;
        DynamicPlan::from_models(&[
            (DeviceKind::Cpu, 1, grain, self.concurrent[0]),
            (DeviceKind::Cpu, 1, grain, self.concurrent[1]),
        ])
        .unwrap()
    }

    fn run(&self, how: &str) {
        let op = Spin { n: N, iters: ITERS };
        let d = self.devices();
        match how {
            "fast_alone" => drop(run_static(&op, &d[..1], &[N]).unwrap()),
            "slow_alone" => drop(run_static(&op, &d[1..], &[N]).unwrap()),
            "static_alone" => drop(run_static(&op, &d, &Self::shares(&self.alone)).unwrap()),
            "static_concurrent" => drop(run_static(&op, &d, &Self::shares(&self.concurrent)).unwrap()),
            "static_refined" => drop(run_static(&op, &d, &Self::shares(&self.refined)).unwrap()),
            "dynamic" => drop(run_dynamic(&op, &d, &self.plan()).unwrap()),
            _ => unreachable!("unknown run {how}"),
        }
    }
}

const RUNS: [&str; 6] =
    ["fast_alone", "slow_alone", "static_alone", "static_concurrent", "static_refined", "dynamic"];

fn two_cpus(c: &mut Criterion) {
    let t = TwoCpus::new();
    let mut g = c.benchmark_group("two_cpus");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    for how in RUNS {
        g.bench_function(how, |b| b.iter(|| t.run(how)));
    }
    g.finish();
}

/// Seconds of one run of `f`.
fn seconds(f: impl FnOnce()) -> f64 {
    let t0 = Instant::now();
    f();
    t0.elapsed().as_secs_f64()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Efficiency = (time the two devices would need at the sum of their separate throughputs) /
/// (time of the split). The four runs are interleaved round by round so that load from other
/// processes hits all of them alike; medians and minima over the rounds are printed.
fn report_efficiency() {
    let t = TwoCpus::new();
    let rounds = 11;
    let mut times = vec![Vec::new(); RUNS.len()];
    for how in RUNS {
        t.run(how);
    }
    for _ in 0..rounds {
        for (k, how) in RUNS.iter().enumerate() {
            times[k].push(seconds(|| t.run(how)));
        }
    }
    for (label, models) in [("alone", &t.alone[..]), ("concurrent", &t.concurrent), ("refined", &t.refined)] {
        println!("two_cpus: models {label} {models:?}; static shares {:?}", TwoCpus::shares(models));
    }
    for (label, pick) in [
        ("median", median as fn(Vec<f64>) -> f64),
        ("min", |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min)),
    ] {
        let m: Vec<f64> = times.iter().map(|v| pick(v.clone())).collect();
        let ideal = 1.0 / (1.0 / m[0] + 1.0 / m[1]);
        let cells: Vec<String> = RUNS[2..]
            .iter()
            .zip(&m[2..])
            .map(|(how, t)| format!("{how} {:.1} ms ({:.1} %)", t * 1e3, 100.0 * ideal / t))
            .collect();
        println!(
            "two_cpus ({label} of {rounds}): fast alone {:.1} ms, slow alone {:.1} ms, ideal {:.1} ms, {}",
            m[0] * 1e3,
            m[1] * 1e3,
            ideal * 1e3,
            cells.join(", ")
        );
    }
    let n = 100_000;
    for threads in [1, 2] {
        let cpu = CpuDevice::with_threads(threads).unwrap();
        let plan =
            DynamicPlan::new(&[(DeviceKind::Cpu, threads, Grain { items: 1, seconds: 1e-6 })]).unwrap();
        let s = median(
            (0..21).map(|_| seconds(|| drop(run_dynamic(&Noop(n), &[&cpu], &plan).unwrap()))).collect(),
        );
        println!(
            "overhead per work item (grain 1, {threads} threads, median of 21): {:.1} ns",
            s / n as f64 * 1e9
        );
    }
}

criterion_group!(benches, overhead, two_cpus);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        report_efficiency();
    }
}
