//! spvm split over devices (`HeteroSpvm`): every selected row summed exactly once, results equal
//! to the one-device path and to a plain loop, over two unequal CPU devices (one slowed 3x) and,
//! where there is one, a GPU.

use hetero_sched::split::{
    AffineModel, CpuDevice, CudaDevice, Device, DeviceKind, DynamicPlan, Grain, Throttled, solve_static,
};
use hetkit_testkit::{gpu_or_skip, rng};
use rand::Rng;
use sg_core::Real;
use sg_cuda::{DeviceReal, HeteroSpvm};

/// `y = Σ_i x[i] · a.row(ix[i])` by a plain loop, in f64.
fn oracle<T: Real>(a: &[T], cols: usize, x: &[T], ix: &[usize]) -> Vec<f64> {
    let mut y = vec![0.0; cols];
    for (&xi, &r) in x.iter().zip(ix) {
        for (c, y) in y.iter_mut().enumerate() {
            *y += Real::to_f64(xi) * Real::to_f64(a[r * cols + c]);
        }
    }
    y
}

/// Shapes `(rows, cols, selected)`: empty, single, primes, more selections than rows.
const SHAPES: [(usize, usize, usize); 6] =
    [(1, 1, 0), (1, 1, 1), (7, 3, 97), (50, 130, 1000), (13, 257, 31), (3, 8, 5)];

/// Integer-valued data: every sum is exact in f32 and f64, so any order of summation (any split)
/// gives the same bits as the one-device path.
fn integer_data<T: Real>(test: &str, rows: usize, cols: usize, sel: usize) -> (Vec<T>, Vec<T>, Vec<usize>) {
    let mut g = rng(test);
    let a = (0..rows * cols).map(|_| T::from_f64(g.random_range(-8i32..8) as f64)).collect();
    let x = (0..sel).map(|_| T::from_f64(g.random_range(-8i32..8) as f64)).collect();
    let ix = (0..sel).map(|_| g.random_range(0..rows)).collect();
    (a, x, ix)
}

fn schedules(items: usize, devices: &[&dyn Device]) -> (Vec<usize>, DynamicPlan) {
    let models: Vec<_> = (0..devices.len()).map(|i| AffineModel::new(1e-6 * (i + 1) as f64, 1e-6)).collect();
    let grains: Vec<_> = devices
        .iter()
        .map(|d| {
            let items = if d.kind() == DeviceKind::Gpu { 64 } else { 7 };
            (d.kind(), d.workers(), Grain { items, seconds: 1e-4 })
        })
        .collect();
    (solve_static(items, &models, None).unwrap(), DynamicPlan::new(&grains).unwrap())
}

fn check<T: DeviceReal>(test: &str, devices: &[&dyn Device], gpu: Option<&cuda_kernels::Gpu>) {
    for (rows, cols, sel) in SHAPES {
        let (a, x, ix) = integer_data::<T>(test, rows, cols, sel);
        let m = HeteroSpvm::new(&a, cols, gpu).unwrap();
        let one = m.spvm(&x, &ix).unwrap();
        let want = oracle(&a, cols, &x, &ix);
        assert_eq!(one.iter().map(|&v| Real::to_f64(v)).collect::<Vec<_>>(), want);
        let (shares, plan) = schedules(sel, devices);
        let what = format!("{rows}x{cols}, {sel} selected");
        assert_eq!(m.spvm_static(&x, &ix, devices, &shares).unwrap(), one, "static, {what}");
        assert_eq!(m.spvm_dynamic(&x, &ix, devices, &plan).unwrap(), one, "dynamic, {what}");
        for f in [0.0, 0.3, 1.0] {
            assert_eq!(m.spvm_split(&x, &ix, f).unwrap(), one, "fraction {f}, {what}");
        }
    }
}

#[test]
fn spvm_split_over_two_unequal_cpus() {
    let fast = CpuDevice::with_threads(2).unwrap();
    let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 3.0).unwrap();
    check::<f64>("spvm_split_over_two_unequal_cpus/f64", &[&fast, &slow], None);
    check::<f32>("spvm_split_over_two_unequal_cpus/f32", &[&slow, &fast], None);
}

#[test]
fn spvm_split_over_cpu_and_gpu() {
    let Some(gpu) = gpu_or_skip("spvm_split_over_cpu_and_gpu") else { return };
    let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 3.0).unwrap();
    let dev = CudaDevice::from_gpu(gpu.clone(), 2).unwrap();
    check::<f64>("spvm_split_over_cpu_and_gpu/f64", &[&slow, &dev], Some(&gpu));
    check::<f32>("spvm_split_over_cpu_and_gpu/f32", &[&slow, &dev], Some(&gpu));
}

#[test]
fn spvm_split_of_real_data_matches_the_loop() {
    let mut g = rng("spvm_split_of_real_data_matches_the_loop");
    let (rows, cols, sel) = (40, 129, 517);
    let a: Vec<f64> = (0..rows * cols).map(|_| g.random_range(-1.0..1.0)).collect();
    let x: Vec<f64> = (0..sel).map(|_| g.random_range(-1.0..1.0)).collect();
    let ix: Vec<usize> = (0..sel).map(|_| g.random_range(0..rows)).collect();
    let m = HeteroSpvm::new(&a, cols, None).unwrap();
    let fast = CpuDevice::with_threads(1).unwrap();
    let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 2.0).unwrap();
    let devices: [&dyn Device; 2] = [&fast, &slow];
    let (shares, plan) = schedules(sel, &devices);
    let want = oracle(&a, cols, &x, &ix);
    for got in [
        m.spvm_static(&x, &ix, &devices, &shares).unwrap(),
        m.spvm_dynamic(&x, &ix, &devices, &plan).unwrap(),
    ] {
        let err = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(err <= 1e-12 * sel as f64, "error {err}");
    }
}

#[test]
fn spvm_split_rejects_bad_input() {
    let a = [1.0f64, 2.0, 3.0, 4.0];
    assert!(HeteroSpvm::new(&a, 0, None).is_err());
    assert!(HeteroSpvm::new(&a, 3, None).is_err());
    let m = HeteroSpvm::new(&a, 2, None).unwrap();
    assert_eq!((m.rows(), m.cols(), m.has_gpu()), (2, 2, false));
    let cpu = CpuDevice::with_threads(1).unwrap();
    assert!(m.spvm(&[1.0], &[0, 1]).is_err());
    assert!(m.spvm(&[1.0], &[2]).is_err());
    assert!(m.spvm_static(&[1.0, 1.0], &[0, 1], &[&cpu], &[1]).is_err(), "shares do not add up");
    assert!(m.spvm_static(&[1.0], &[5], &[&cpu], &[1]).is_err());
    assert!(m.spvm_split(&[1.0], &[0], 1.5).is_err());
    assert!(m.spvm_split(&[1.0], &[0], f64::NAN).is_err());
    assert_eq!(m.spvm_static(&[], &[], &[&cpu], &[0]).unwrap(), vec![0.0, 0.0]);
    assert_eq!(m.spvm_static(&[2.0, 1.0], &[1, 0], &[&cpu], &[2]).unwrap(), vec![7.0, 10.0]);
}
