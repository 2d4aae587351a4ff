//! The CPU+GPU split: the split arithmetic, and the CPU side of HeteroEvaluator (no GPU needed).

mod common;

use common::{max_rel, random_points, random_values};
use hetkit_testkit::{gpu_or_skip, rng};
use ndarray::{Array2, ArrayView2};
use sg_core::{Grid, GridSpec};
use sg_cuda::split::{AffineModel, fraction_split, static_split};
use sg_cuda::{HeteroEvaluator, Split};

#[test]
fn static_split_balances_affine_models() {
    let cpu = AffineModel::new(4e-9, 1e-4);
    let gpu = AffineModel::new(1e-9, 5e-4);
    for total in [0usize, 1, 31, 1000, 2_000_000] {
        let w = static_split(total, &cpu, &gpu).unwrap();
        assert!(w <= total);
        if total >= 1_000_000 {
            // Both devices finish within one point's time of each other.
            let (tc, tg) = (cpu.time(w), gpu.time(total - w));
            assert!((tc - tg).abs() <= cpu.gamma.max(gpu.gamma) * 2.0, "{tc} vs {tg}");
        }
    }
    // Small totals: the GPU's fixed cost makes the CPU take everything.
    assert_eq!(static_split(10, &cpu, &gpu).unwrap(), 10);
    // A free device takes everything; a degenerate model is an error, not a panic.
    let free = AffineModel::new(0.0, 0.0);
    assert_eq!(static_split(100, &free, &gpu).unwrap(), 100);
    assert_eq!(static_split(100, &cpu, &free).unwrap(), 0);
    assert!(static_split(100, &AffineModel::new(f64::NAN, 0.0), &gpu).is_err());
    assert!(static_split(100, &cpu, &AffineModel::new(1e-9, -1.0)).is_err());
}

#[test]
fn affine_model_from_two_runs() {
    let m = AffineModel::from_two_runs(1000, 3e-3, 5e-3).unwrap();
    assert!((m.gamma - 2e-6).abs() < 1e-15 && (m.delta - 1e-3).abs() < 1e-12);
    // Noise that makes t_2w < t_w clamps to a flat model (at the mean) rather than a negative
    // slope.
    let m = AffineModel::from_two_runs(1000, 3e-3, 2e-3).unwrap();
    assert_eq!(m.gamma, 0.0);
    assert!((m.time(5) - 2.5e-3).abs() < 1e-15);
}

#[test]
fn fraction_split_rounds_and_rejects_bad_fractions() {
    assert_eq!(fraction_split(10, 0.0).unwrap(), 0);
    assert_eq!(fraction_split(10, 1.0).unwrap(), 10);
    assert_eq!(fraction_split(11, 0.5).unwrap(), 6);
    assert_eq!(fraction_split(0, 0.3).unwrap(), 0);
    assert!(fraction_split(10, 1.5).is_err());
    assert!(fraction_split(10, -0.1).is_err());
    assert!(fraction_split(10, f64::NAN).is_err());
}

#[test]
fn cpu_only_split_equals_sg_cpu() {
    let mut g = rng("cpu_only_split_equals_sg_cpu");
    for (d, n) in [(1, 6), (3, 5), (6, 4), (10, 3)] {
        let spec = GridSpec::regular(d, n).unwrap();
        let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
        let grid = Grid::from_values(spec.clone(), values.clone()).unwrap();
        let ev = HeteroEvaluator::new(&grid, None, Split::CpuFraction(1.0)).unwrap();
        assert_eq!(ev.cpu_fraction(), 1.0);
        for m in [0usize, 1, 33, 257] {
            let pts = random_points::<f64>(&mut g, m, d);
            let view = ArrayView2::from_shape((m, d), &pts).unwrap();
            let got = ev.evaluate(view).unwrap();
            let want = sg_cpu::Evaluator::new(&spec).unwrap().evaluate(&values, 1, view).unwrap();
            assert_eq!(got.as_slice().unwrap(), &want[..], "d {d} m {m}");
            let mut reference = vec![0.0; m];
            sg_core::reference::evaluate_batch_into(&spec, &values, 1, &pts, &mut reference).unwrap();
            assert!(max_rel(&want, &reference) <= 1e-12);
        }
    }
}

#[test]
fn hetero_rejects_bad_input() {
    let grid = Grid::<f32>::from_fn(GridSpec::regular(2, 3).unwrap(), |x| x[0]).unwrap();
    let mut ev = HeteroEvaluator::new(&grid, None, Split::Calibrate { sample: 64 }).unwrap();
    assert!(ev.evaluate(Array2::<f32>::zeros((3, 3)).view()).is_err());
    assert!(ev.evaluate(Array2::<f32>::from_elem((1, 2), 2.0).view()).is_err());
    assert!(ev.set_cpu_fraction(1.1).is_err());
    assert!(ev.calibrate(0).is_err());
    // A bad split is an error with or without a GPU.
    assert!(HeteroEvaluator::new(&grid, None, Split::CpuFraction(1.5)).is_err());
    assert!(HeteroEvaluator::new(&grid, None, Split::CpuFraction(f64::NAN)).is_err());
    assert!(HeteroEvaluator::new(&grid, None, Split::Calibrate { sample: 0 }).is_err());
    assert!(HeteroEvaluator::new(&grid, None, Split::Dynamic { cpu_grain: 0, gpu_grain: 64 }).is_err());
    assert!(HeteroEvaluator::new(&grid, None, Split::Dynamic { cpu_grain: 8, gpu_grain: 0 }).is_err());
    // Without a GPU every mode is the CPU alone.
    let ev = HeteroEvaluator::new(&grid, None, Split::Dynamic { cpu_grain: 8, gpu_grain: 64 }).unwrap();
    assert_eq!(ev.cpu_fraction(), 1.0);
    assert!(ev.models().is_none());
    assert!(ev.evaluate(Array2::<f32>::from_elem((1, 2), f32::NAN).view()).is_err());
    assert_eq!(ev.evaluate(Array2::<f32>::zeros((0, 2)).view()).unwrap().shape(), &[0, 1]);
}

#[test]
fn gpu_split_matches_reference_at_every_fraction() {
    let Some(gpu) = gpu_or_skip("gpu_split_matches_reference_at_every_fraction") else { return };
    let mut g = rng("gpu_split_matches_reference_at_every_fraction");
    let spec = GridSpec::regular(4, 5).unwrap();
    let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
    let grid = Grid::from_values(spec.clone(), values.clone()).unwrap();
    let m = 1001;
    let pts = random_points::<f64>(&mut g, m, 4);
    let mut want = vec![0.0; m];
    sg_core::reference::evaluate_batch_into(&spec, &values, 1, &pts, &mut want).unwrap();
    let view = ArrayView2::from_shape((m, 4), &pts).unwrap();
    for split in [
        Split::CpuFraction(0.0),
        Split::CpuFraction(0.37),
        Split::CpuFraction(1.0),
        Split::Calibrate { sample: 4096 },
        Split::Dynamic { cpu_grain: 16, gpu_grain: 128 },
    ] {
        let ev = HeteroEvaluator::new(&grid, Some(&gpu), split).unwrap();
        let got = ev.evaluate(view).unwrap();
        assert!(max_rel(got.as_slice().unwrap(), &want) <= 1e-12, "{split:?}");
        assert!((0.0..=1.0).contains(&ev.cpu_fraction()));
        // Empty batches and single points go through every mode.
        assert_eq!(ev.evaluate(view.slice(ndarray::s![..0, ..])).unwrap().shape(), &[0, 1]);
        let one = ev.evaluate(view.slice(ndarray::s![..1, ..])).unwrap();
        assert!(max_rel(one.as_slice().unwrap(), &want[..1]) <= 1e-12, "{split:?}");
    }
}

#[test]
fn gpu_calibration_is_stored_and_reused() {
    let Some(gpu) = gpu_or_skip("gpu_calibration_is_stored_and_reused") else { return };
    let grid = Grid::<f32>::from_fn(GridSpec::regular(3, 4).unwrap(), |x| x[0] * x[1] + x[2]).unwrap();
    let store = hetero_sched::split::MemoryStore::new();
    let mut first = HeteroEvaluator::new(&grid, Some(&gpu), Split::CpuFraction(0.5)).unwrap();
    first.calibrate_with_store(256, &store).unwrap();
    let mut second = HeteroEvaluator::new(&grid, Some(&gpu), Split::CpuFraction(0.5)).unwrap();
    second.calibrate_with_store(256, &store).unwrap();
    // Fresh timings never repeat to the last bit: equal models mean the second came from the store.
    assert!(first.models().is_some());
    assert_eq!(first.models(), second.models());
    assert!(second.calibrate_with_store(0, &store).is_err());
}

/// A device of the GPU kind that is no GPU (for the CPU-device check).
#[derive(Debug)]
struct NotACpu;

impl hetero_sched::split::Device for NotACpu {
    fn kind(&self) -> hetero_sched::split::DeviceKind {
        hetero_sched::split::DeviceKind::Gpu
    }
    fn fingerprint(&self) -> String {
        "not-a-cpu".into()
    }
    fn workers(&self) -> usize {
        1
    }
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }
}

/// The CPU share on a slowed-down CPU device (a fake slow CPU): the same results as sg-cpu.
#[test]
fn slow_cpu_device_gives_the_same_results() {
    use hetero_sched::split::{CpuDevice, Throttled};
    use std::sync::Arc;
    let mut g = rng("slow_cpu_device_gives_the_same_results");
    let spec = GridSpec::regular(3, 5).unwrap();
    let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
    let grid = Grid::from_values(spec.clone(), values.clone()).unwrap();
    let mut ev = HeteroEvaluator::new(&grid, None, Split::CpuFraction(1.0)).unwrap();
    assert!(ev.set_cpu_device(Arc::new(NotACpu)).is_err());
    ev.set_cpu_device(Arc::new(Throttled::new(CpuDevice::with_threads(1).unwrap(), 3.0).unwrap())).unwrap();
    let m = 301;
    let pts = random_points::<f64>(&mut g, m, 3);
    let view = ArrayView2::from_shape((m, 3), &pts).unwrap();
    let want = sg_cpu::Evaluator::new(&spec).unwrap().evaluate(&values, 1, view).unwrap();
    assert_eq!(ev.evaluate(view).unwrap().as_slice().unwrap(), &want[..]);
}

/// CPU (slowed down 3x) and GPU at once, every way of cutting: each point evaluated once, on
/// one device, and equal to the reference.
#[test]
fn gpu_split_with_a_slow_cpu_device_matches_reference() {
    use hetero_sched::split::{CpuDevice, Throttled};
    use std::sync::Arc;
    let Some(gpu) = gpu_or_skip("gpu_split_with_a_slow_cpu_device_matches_reference") else { return };
    let mut g = rng("gpu_split_with_a_slow_cpu_device_matches_reference");
    let spec = GridSpec::regular(3, 4).unwrap();
    let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
    let grid = Grid::from_values(spec.clone(), values.clone()).unwrap();
    let m = 523;
    let pts = random_points::<f64>(&mut g, m, 3);
    let mut want = vec![0.0; m];
    sg_core::reference::evaluate_batch_into(&spec, &values, 1, &pts, &mut want).unwrap();
    let view = ArrayView2::from_shape((m, 3), &pts).unwrap();
    for split in [Split::CpuFraction(0.5), Split::Dynamic { cpu_grain: 8, gpu_grain: 64 }] {
        let mut ev = HeteroEvaluator::new(&grid, Some(&gpu), split).unwrap();
        ev.set_cpu_device(Arc::new(Throttled::new(CpuDevice::with_threads(1).unwrap(), 3.0).unwrap()))
            .unwrap();
        let got = ev.evaluate(view).unwrap();
        assert!(max_rel(got.as_slice().unwrap(), &want) <= 1e-12, "{split:?}");
    }
}
