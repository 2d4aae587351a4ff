//! Benchmarks of `hetero_sched::split`:
//!
//! - `overhead/*`: the dynamic queue over an operation that does nothing, one item per grain,
//!   so the time per item is the scheduling overhead per work item (goal: at most 5 us);
//! - `two_cpus/*`: a compute-bound operation on two unequal single-thread CPU "devices" (one
//!   slowed down 2x by spinning), each alone and split statically (calibrated) and dynamically.
//!   After criterion, the efficiency of each split against the sum of the two devices'
//!   separate throughputs is printed (goal: at least 95 %).

use std::hint::black_box;
use std::ops::Range;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use hetero_sched::split::{
    AffineModel, BoxError, CpuDevice, Device, DeviceKind, DynamicPlan, Grain, MonotonicClock, Splittable,
    Throttled, calibrate, run_dynamic, run_static, solve_static,
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
    models: [AffineModel; 2],
}

impl TwoCpus {
    fn new() -> Self {
        let fast = CpuDevice::with_threads(1).unwrap();
        let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), SLOW).unwrap();
        let op = Spin { n: N, iters: ITERS };
        let clock = MonotonicClock::new();
        let sizes = [N / 16, N / 8, N / 4];
        let models = [
            calibrate(&op, &fast, &sizes, 5, &clock).unwrap(),
            calibrate(&op, &slow, &sizes, 5, &clock).unwrap(),
        ];
        TwoCpus { fast, slow, models }
    }

    fn devices(&self) -> [&dyn Device; 2] {
        [&self.fast, &self.slow]
    }

    fn shares(&self) -> Vec<usize> {
        solve_static(N, &self.models, None).unwrap()
    }

    fn plan(&self) -> DynamicPlan {
        let grain = 512;
        DynamicPlan::from_models(&[
            (DeviceKind::Cpu, 1, grain, self.models[0]),
            (DeviceKind::Cpu, 1, grain, self.models[1]),
        ])
        .unwrap()
    }

    fn run(&self, how: &str) {
        let op = Spin { n: N, iters: ITERS };
        let d = self.devices();
        match how {
            "fast_alone" => drop(run_static(&op, &d[..1], &[N]).unwrap()),
            "slow_alone" => drop(run_static(&op, &d[1..], &[N]).unwrap()),
            "static" => drop(run_static(&op, &d, &self.shares()).unwrap()),
            "dynamic" => drop(run_dynamic(&op, &d, &self.plan()).unwrap()),
            _ => unreachable!("unknown run {how}"),
        }
    }
}

const RUNS: [&str; 4] = ["fast_alone", "slow_alone", "static", "dynamic"];

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

/// Median seconds of `runs` runs.
fn median(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

/// Efficiency = (time the two devices would need at the sum of their separate throughputs) /
/// (time of the split). Runs interleaved so that load from other processes hits all alike.
fn report_efficiency() {
    let t = TwoCpus::new();
    let mut med = [0.0; 4];
    for (k, how) in RUNS.iter().enumerate() {
        t.run(how);
        med[k] = median(15, || t.run(how));
    }
    let ideal = 1.0 / (1.0 / med[0] + 1.0 / med[1]);
    println!(
        "two_cpus: fast {:.1} ms, slow {:.1} ms (x{SLOW}), ideal {:.1} ms; models {:?}; static shares {:?}",
        med[0] * 1e3,
        med[1] * 1e3,
        ideal * 1e3,
        t.models,
        t.shares()
    );
    println!(
        "two_cpus efficiency: static {:.1} %, dynamic {:.1} %",
        100.0 * ideal / med[2],
        100.0 * ideal / med[3]
    );
    let n = 100_000;
    for threads in [1, 2] {
        let cpu = CpuDevice::with_threads(threads).unwrap();
        let plan =
            DynamicPlan::new(&[(DeviceKind::Cpu, threads, Grain { items: 1, seconds: 1e-6 })]).unwrap();
        let s = median(21, || drop(run_dynamic(&Noop(n), &[&cpu], &plan).unwrap()));
        println!("overhead per work item (grain 1, {threads} threads): {:.1} ns", s / n as f64 * 1e9);
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
