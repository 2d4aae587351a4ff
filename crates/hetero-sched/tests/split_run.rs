//! The executors: static shares and the dynamic queue on real threads (exactly once, outputs
//! in order, stream round-robin, errors), and the queue's rules in virtual time.

mod common;

use common::{Counting, FakeGpu, Sleepy};
use hetero_sched::split::{
    AffineModel, CpuDevice, Device, DeviceKind, DynamicPlan, Grain, SimDevice, SplitError, Throttled, concat,
    run_dynamic, run_static, simulate,
};
use proptest::prelude::*;

fn grain(items: usize, seconds: f64) -> Grain {
    Grain { items, seconds }
}

#[test]
fn static_shares_process_every_item_once() {
    let (a, b) = (CpuDevice::with_threads(2).unwrap(), CpuDevice::with_threads(1).unwrap());
    let gpu = FakeGpu::new(3);
    let devices: [&dyn Device; 3] = [&a, &b, &gpu];
    for shares in [[10, 0, 0], [3, 3, 4], [0, 0, 10], [0, 9, 1], [1, 2, 7]] {
        let op = Counting::new(10);
        let pieces = run_static(&op, &devices, &shares).unwrap();
        assert!(op.all_once(), "{shares:?}");
        for p in &pieces {
            let first = shares[..p.device].iter().sum::<usize>();
            assert!(p.range.start >= first && p.range.end <= first + shares[p.device], "{p:?}");
        }
        assert_eq!(concat(pieces), op.expected());
    }
}

#[test]
fn static_cpu_share_is_one_call_for_self_parallel_operations() {
    let cpu = CpuDevice::with_threads(3).unwrap();
    for (whole, calls) in [(false, 3), (true, 1)] {
        let mut op = Counting::new(30);
        op.whole = whole;
        assert_eq!(concat(run_static(&op, &[&cpu], &[30]).unwrap()), op.expected());
        assert_eq!(op.cpu_calls.load(std::sync::atomic::Ordering::Relaxed), calls, "whole {whole}");
    }
}

#[test]
fn static_errors() {
    let a = CpuDevice::with_threads(1).unwrap();
    let gpu = FakeGpu::new(2);
    let op = Counting::new(10);
    assert!(matches!(run_static(&op, &[], &[]), Err(SplitError::NoDevices)));
    assert!(matches!(run_static(&op, &[&a], &[5, 5]), Err(SplitError::Mismatch { .. })));
    assert!(matches!(run_static(&op, &[&a, &gpu], &[5, 4]), Err(SplitError::Invalid(_))));
    let mut cpu_only = Counting::new(10);
    cpu_only.gpu = false;
    assert!(matches!(
        run_static(&cpu_only, &[&a, &gpu], &[5, 5]),
        Err(SplitError::Unsupported { device: 1, .. })
    ));
    // A GPU with no work is fine for a CPU-only operation.
    assert_eq!(concat(run_static(&cpu_only, &[&a, &gpu], &[10, 0]).unwrap()), cpu_only.expected());
    let mut failing = Counting::new(10);
    failing.fail_at = Some(7);
    assert!(matches!(run_static(&failing, &[&a, &gpu], &[5, 5]), Err(SplitError::Task { .. })));
    let mut panicking = Counting::new(10);
    panicking.panic_at = Some(2);
    assert!(matches!(run_static(&panicking, &[&a, &gpu], &[5, 5]), Err(SplitError::Panicked { .. })));
    // Zero items: nothing runs, nothing fails.
    assert!(run_static(&Counting::new(0), &[&a, &gpu], &[0, 0]).unwrap().is_empty());
}

fn plan_for(devices: &[&dyn Device], grains: &[Grain]) -> DynamicPlan {
    let entries: Vec<_> = devices.iter().zip(grains).map(|(d, &g)| (d.kind(), d.workers(), g)).collect();
    DynamicPlan::new(&entries).unwrap()
}

#[test]
fn dynamic_rotates_over_streams_round_robin() {
    let cpu = Sleepy { pause: std::time::Duration::from_millis(1) };
    let gpu = FakeGpu::new(3);
    let devices: [&dyn Device; 2] = [&cpu, &gpu];
    let op = Counting::new(5000);
    let plan = plan_for(&devices, &[grain(7, 1e-3), grain(64, 1e-4)]);
    let pieces = run_dynamic(&op, &devices, &plan).unwrap();
    assert!(op.all_once());
    assert_eq!(concat(pieces), op.expected());
    let lanes: Vec<usize> = op.submits.lock().unwrap().iter().map(|s| s.0).collect();
    assert!(!lanes.is_empty());
    for (k, &l) in lanes.iter().enumerate() {
        assert_eq!(l, k % 3, "submission {k} on lane {l}: {lanes:?}");
    }
}

#[test]
fn a_failing_submit_still_completes_the_lanes_in_flight() {
    let cpu = Sleepy { pause: std::time::Duration::from_millis(1) };
    let gpu = FakeGpu::new(3);
    let devices: [&dyn Device; 2] = [&cpu, &gpu];
    let plan = plan_for(&devices, &[grain(1, 1.0), grain(10, 1e-3)]);
    for limit in [0, 1, 2, 5] {
        let mut op = Counting::new(1000);
        op.submit_limit = limit;
        assert!(matches!(run_dynamic(&op, &devices, &plan), Err(SplitError::Task { .. })), "limit {limit}");
        assert_eq!(op.completes.load(std::sync::atomic::Ordering::Relaxed), op.submits.lock().unwrap().len());
        let mut op = Counting::new(30);
        op.submit_limit = limit.min(2);
        assert!(run_static(&op, &devices, &[0, 30]).is_err());
        assert_eq!(op.completes.load(std::sync::atomic::Ordering::Relaxed), op.submits.lock().unwrap().len());
    }
}

#[test]
fn dynamic_errors_and_empty_ranges() {
    let cpu = CpuDevice::with_threads(2).unwrap();
    let gpu = FakeGpu::new(2);
    let devices: [&dyn Device; 2] = [&cpu, &gpu];
    let plan = plan_for(&devices, &[grain(4, 1e-3), grain(32, 1e-3)]);
    assert!(run_dynamic(&Counting::new(0), &devices, &plan).unwrap().is_empty());
    let mut failing = Counting::new(1000);
    failing.fail_at = Some(999);
    assert!(matches!(run_dynamic(&failing, &devices, &plan), Err(SplitError::Task { .. })));
    let mut panicking = Counting::new(1000);
    panicking.panic_at = Some(500);
    assert!(matches!(run_dynamic(&panicking, &devices, &plan), Err(SplitError::Panicked { .. })));
    let one = plan_for(&devices[..1], &[grain(4, 1e-3)]);
    assert!(matches!(run_dynamic(&Counting::new(10), &devices, &one), Err(SplitError::Mismatch { .. })));
    assert!(matches!(run_dynamic(&Counting::new(10), &[], &one), Err(SplitError::NoDevices)));
    // Plans reject empty device lists, zero grains and unusable times.
    assert!(DynamicPlan::new(&[]).is_err());
    assert!(DynamicPlan::new(&[(DeviceKind::Cpu, 1, grain(0, 1.0))]).is_err());
    assert!(DynamicPlan::new(&[(DeviceKind::Cpu, 0, grain(1, 1.0))]).is_err());
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(DynamicPlan::new(&[(DeviceKind::Gpu, 1, grain(1, t))]).is_err());
    }
    assert!(DynamicPlan::from_models(&[(DeviceKind::Cpu, 1, 4, AffineModel::new(f64::NAN, 0.0))]).is_err());
}

#[test]
fn listing_rules_cpu_grains_while_the_queue_is_long() {
    // alpha = t_cpu / t_gpu = 2.5 -> the CPU takes g_cpu while >= g_cpu + 3 g_gpu remain, then
    // ceil(g_cpu / 2.5) (the corrected line), never more than what is left.
    let plan = DynamicPlan::new(&[
        (DeviceKind::Cpu, 1, grain(100, 2.5e-3)),
        (DeviceKind::Gpu, 1, grain(1000, 1e-3)),
    ])
    .unwrap();
    assert_eq!(plan.take(0, 100 + 3 * 1000), 100);
    assert_eq!(plan.take(0, 100 + 3 * 1000 - 1), 40);
    assert_eq!(plan.take(0, 7), 7);
    assert_eq!(plan.take(1, 5000), 1000);
    assert_eq!(plan.take(1, 999), 999);
    // A CPU faster than the GPU never shrinks its grain.
    let fast_cpu =
        DynamicPlan::new(&[(DeviceKind::Cpu, 1, grain(100, 1e-4)), (DeviceKind::Gpu, 1, grain(1000, 1e-3))])
            .unwrap();
    assert_eq!(fast_cpu.take(0, 150), 100);
    // Several CPU workers count in the threshold: 4 g_cpu + ceil(alpha) g_gpu.
    let four = DynamicPlan::new(&[
        (DeviceKind::Cpu, 4, grain(100, 2.5e-3)),
        (DeviceKind::Gpu, 1, grain(1000, 1e-3)),
    ])
    .unwrap();
    assert_eq!(four.take(0, 400 + 3000), 100);
    assert_eq!(four.take(0, 400 + 2999), 40);
}

/// Real threads, random devices and grains: every item exactly once, outputs in order.
fn run_random(
    n: usize,
    cpu_threads: usize,
    slow: f64,
    lanes: usize,
    g_cpu: usize,
    g_gpu: usize,
    t_ratio: f64,
) {
    let cpu = CpuDevice::with_threads(cpu_threads).unwrap();
    let slow_cpu = Throttled::new(CpuDevice::with_threads(1).unwrap(), slow).unwrap();
    let gpu = FakeGpu::new(lanes);
    let devices: [&dyn Device; 3] = [&cpu, &slow_cpu, &gpu];
    let plan = plan_for(
        &devices,
        &[grain(g_cpu, 1e-4 * t_ratio), grain(g_cpu, 1e-4 * t_ratio * slow), grain(g_gpu, 1e-4)],
    );
    let op = Counting::new(n);
    let pieces = run_dynamic(&op, &devices, &plan).unwrap();
    assert!(op.all_once());
    let mut next = 0;
    for p in &pieces {
        assert_eq!(p.range.start, next);
        next = p.range.end;
    }
    assert_eq!(next, n);
    assert_eq!(concat(pieces), op.expected());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn dynamic_processes_every_item_exactly_once(
        n in 0usize..3000,
        cpu_threads in 1usize..3,
        slow in 1.0f64..3.0,
        lanes in 1usize..4,
        g_cpu in 1usize..50,
        g_gpu in 1usize..400,
        t_ratio in 0.1f64..20.0,
    ) {
        run_random(n, cpu_threads, slow, lanes, g_cpu, g_gpu, t_ratio);
    }
}

/// The GPU's idle time at the end of a simulated run: the last end minus the GPU's last end.
fn gpu_idle(total: usize, devices: &[SimDevice], plan: &DynamicPlan) -> (f64, f64) {
    let tasks = simulate(total, devices, plan).unwrap();
    // Exactly once: the popped ranges tile 0..total.
    let mut next = 0;
    for t in &tasks {
        assert_eq!(t.range.start, next);
        next = t.range.end;
    }
    assert_eq!(next, total);
    let end = tasks.iter().map(|t| t.end).fold(0.0, f64::max);
    let gpu_end =
        tasks.iter().filter(|t| devices[t.device].kind == DeviceKind::Gpu).map(|t| t.end).fold(0.0, f64::max);
    (end, end - gpu_end)
}

proptest! {
    /// Listing 6.1's promise under a fake clock: the GPU never waits at the end for more than
    /// about one of its grains (plus one item of CPU time for the rounding of the shrunk grain).
    #[test]
    fn gpu_waits_at_most_one_grain_at_the_end(
        total in 1usize..200_000,
        cpu_workers in 1usize..5,
        g_cpu in 1usize..2000,
        g_gpu in 1usize..50_000,
        cpu_per_item in 1e-9f64..1e-6,
        gpu_per_item in 1e-10f64..1e-6,
    ) {
        let cpu = SimDevice { kind: DeviceKind::Cpu, workers: cpu_workers, model: AffineModel::new(cpu_per_item, 0.0) };
        let gpu = SimDevice { kind: DeviceKind::Gpu, workers: 1, model: AffineModel::new(gpu_per_item, 0.0) };
        let plan = DynamicPlan::new(&[
            (DeviceKind::Cpu, cpu_workers, grain(g_cpu, cpu.model.time(g_cpu))),
            (DeviceKind::Gpu, 1, grain(g_gpu, gpu.model.time(g_gpu))),
        ]).unwrap();
        let (_, idle) = gpu_idle(total, &[cpu, gpu], &plan);
        let bound = gpu.model.time(g_gpu) + cpu_per_item + 1e-12;
        prop_assert!(idle <= bound, "GPU idle {} > one grain {}", idle, bound);
    }
}

#[test]
fn multi_grain_beats_a_single_grain_at_the_end() {
    // Thesis case: few large CPU tasks at the end leave the GPU waiting. 16 CPU workers, GPU 20x
    // faster per worker-grain.
    let cpu = SimDevice { kind: DeviceKind::Cpu, workers: 16, model: AffineModel::new(1e-6, 0.0) };
    let gpu = SimDevice { kind: DeviceKind::Gpu, workers: 1, model: AffineModel::new(1e-8, 0.0) };
    let total = 2_000_000;
    let multi = DynamicPlan::new(&[
        (DeviceKind::Cpu, 16, grain(32768, cpu.model.time(32768))),
        (DeviceKind::Gpu, 1, grain(32768, gpu.model.time(32768))),
    ])
    .unwrap();
    // A single-grain plan: the CPU never shrinks (it looks as fast as the GPU to the rules).
    let single = DynamicPlan::new(&[
        (DeviceKind::Cpu, 16, grain(32768, gpu.model.time(32768))),
        (DeviceKind::Gpu, 1, grain(32768, gpu.model.time(32768))),
    ])
    .unwrap();
    let (t_multi, idle_multi) = gpu_idle(total, &[cpu, gpu], &multi);
    let (t_single, idle_single) = gpu_idle(total, &[cpu, gpu], &single);
    assert!(idle_multi <= gpu.model.time(32768) + 1e-12, "{idle_multi}");
    assert!(t_multi < t_single, "{t_multi} vs {t_single}");
    assert!(idle_single > 10.0 * idle_multi.max(1e-9));
}
