//! GPU scans against the sequential reference (integers, exact-valued floats) and against the
//! CPU emulation of the GPU order (real-valued floats, bit for bit). Outputs are poisoned
//! before every run. Skips without a device; `HETKIT_REQUIRE_GPU=1` turns a skip into a failure.
//! The 2^26 cases are ignored in debug runs:
//! `cargo test --release -p prefix-ops --test scan_gpu -- --ignored`.

mod scan_common;

use cuda_kernels::{Gpu, GpuScalar};
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::scan::dispatch::{Kernel, ScanOptions};
use prefix_ops::scan::emulate::{self, Network, Shape};
use prefix_ops::scan::gpu::{self, Layout, UserOp};
use prefix_ops::scan::{Add, BuiltinOp, Max, Min, Mul, reference};
use rand::Rng;
use scan_common::{Kind, SIZES, Sample, random_offsets, random_vec};

/// A value no correct scan writes (NaN for floats, a marker for integers).
trait Poison: GpuScalar + Sample {
    fn poison() -> Self;
}
macro_rules! poison {
    ($($t:ty => $v:expr),*) => {$( impl Poison for $t { fn poison() -> Self { $v } } )*};
}
poison!(f32 => f32::NAN, f64 => f64::NAN, i32 => 0x5a5a5a5a, u32 => 0xa5a5a5a5, i64 => 0x5a5a5a5a5a5a5a5a, u64 => 0xa5a5a5a5a5a5a5a5);

fn run<T: Poison, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &[T],
    layout: Layout<'_>,
    op: M,
    exclusive: bool,
    opts: &ScanOptions,
) -> Vec<T> {
    let src = gpu.upload(xs).unwrap();
    let mut dst = gpu.upload(&vec![T::poison(); xs.len()]).unwrap();
    gpu::scan_into_device(gpu, &src, &mut dst, layout, op, exclusive, opts).unwrap();
    gpu.download(&dst).unwrap()
}

fn bits<T: Copy + std::fmt::Debug>(v: &[T]) -> Vec<String> {
    v.iter().map(|x| format!("{x:?}")).collect()
}

fn check_array<T: Poison, M: BuiltinOp<T>>(gpu: &Gpu, xs: &[T], op: M) {
    for exclusive in [false, true] {
        let mut want = xs.to_vec();
        if exclusive {
            reference::exclusive(&mut want, op)
        } else {
            reference::inclusive(&mut want, op)
        }
        let got = run(gpu, xs, Layout::Array, op, exclusive, &ScanOptions::default());
        assert_eq!(bits(&got), bits(&want), "{op:?} {} n={} excl={exclusive}", T::SUFFIX, xs.len());
    }
}

fn all_ops<T: Poison>(gpu: &Gpu, test: &str, sizes: &[usize])
where
    Add: BuiltinOp<T>,
    Mul: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let mut rng = rng(test);
    for &n in sizes {
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::Add), Add);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::Mul), Mul);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::MinMax), Min);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::MinMax), Max);
    }
}

macro_rules! gpu_array_tests {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu_or_skip(stringify!($name)) else { return };
            all_ops::<$t>(&gpu, stringify!($name), &SIZES);
        }
    )*};
}
gpu_array_tests!(gpu_arrays_i32: i32, gpu_arrays_u32: u32, gpu_arrays_i64: i64, gpu_arrays_u64: u64, gpu_arrays_f32: f32, gpu_arrays_f64: f64);

#[test]
#[ignore = "large: cargo test --release -p prefix-ops --test scan_gpu -- --ignored"]
fn gpu_arrays_2_pow_26() {
    let Some(gpu) = gpu_or_skip("gpu_arrays_2_pow_26") else { return };
    all_ops::<f32>(&gpu, "gpu_arrays_2_pow_26", &[1 << 26]);
    all_ops::<u64>(&gpu, "gpu_arrays_2_pow_26", &[1 << 26]);
}

/// Real-valued floats: bit-identical to the emulated GPU order, for every network, and
/// identical across two runs.
#[test]
fn gpu_float_order_is_deterministic_and_emulated() {
    let Some(gpu) = gpu_or_skip("gpu_float_order_is_deterministic_and_emulated") else { return };
    let mut rng = rng("gpu_float_order_is_deterministic_and_emulated");
    for n in [1usize, 33, 4097, (1 << 20) + 7] {
        let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for net in [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer] {
            let opts = ScanOptions { kernel: Some(Kernel::Lookback), network: net };
            for exclusive in [false, true] {
                let mut want = xs.clone();
                emulate::lookback(&mut want, Add, Shape { network: net, ..Shape::lookback(4) }, exclusive);
                let a = run(&gpu, &xs, Layout::Array, Add, exclusive, &opts);
                let b = run(&gpu, &xs, Layout::Array, Add, exclusive, &opts);
                assert_eq!(bits(&a), bits(&b), "two runs differ: n={n} {net:?}");
                assert_eq!(bits(&a), bits(&want), "GPU vs emulation: n={n} {net:?} excl={exclusive}");
            }
        }
        let xs64: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut want = xs64.clone();
        emulate::lookback(&mut want, Add, Shape::lookback(8), false);
        assert_eq!(bits(&run(&gpu, &xs64, Layout::Array, Add, false, &ScanOptions::default())), bits(&want));
    }
}

/// Every batched kernel on awkward G x N, against the reference (exact) and the emulation (floats).
#[test]
fn gpu_batched_rows_every_kernel() {
    let Some(gpu) = gpu_or_skip("gpu_batched_rows_every_kernel") else { return };
    let mut rng = rng("gpu_batched_rows_every_kernel");
    let kernels = [
        None,
        Some(Kernel::LookbackRows),
        Some(Kernel::RowsWarpSmall),
        Some(Kernel::RowsWarpLarge),
        Some(Kernel::RowsBlock),
    ];
    for (g, n) in
        [(1, 1), (7, 1), (3, 31), (5, 33), (64, 32), (2, 1023), (9, 1025), (3, 5000), (1000, 17), (600, 4096)]
    {
        let xs = random_vec::<i64>(&mut rng, g * n, Kind::Add);
        let xf: Vec<f32> = (0..g * n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for kernel in kernels {
            let opts = ScanOptions { kernel, network: Network::KoggeStone };
            for exclusive in [false, true] {
                let mut want = xs.clone();
                for r in want.chunks_mut(n) {
                    if exclusive { reference::exclusive(r, Add) } else { reference::inclusive(r, Add) }
                }
                let got = run(&gpu, &xs, Layout::Rows { row_len: n }, Add, exclusive, &opts);
                assert_eq!(got, want, "G={g} N={n} {kernel:?} excl={exclusive}");
                let mut want = xf.clone();
                let shape = Shape::lookback(4);
                match kernel {
                    Some(Kernel::RowsWarpSmall) => {
                        emulate::rows_warp(&mut want, n, Add, 4, Network::KoggeStone, exclusive)
                    }
                    Some(Kernel::RowsWarpLarge) => {
                        emulate::rows_warp(&mut want, n, Add, 16, Network::KoggeStone, exclusive)
                    }
                    Some(Kernel::RowsBlock) => emulate::rows_block(&mut want, n, Add, shape, exclusive),
                    Some(Kernel::LookbackRows) => {
                        emulate::lookback_heads(&mut want, |i| i % n == 0, Add, shape, exclusive)
                    }
                    _ => continue,
                }
                let got = run(&gpu, &xf, Layout::Rows { row_len: n }, Add, exclusive, &opts);
                assert_eq!(bits(&got), bits(&want), "f32 G={g} N={n} {kernel:?} excl={exclusive}");
            }
        }
    }
}

#[test]
fn gpu_segments_load_balanced() {
    let Some(gpu) = gpu_or_skip("gpu_segments_load_balanced") else { return };
    let mut rng = rng("gpu_segments_load_balanced");
    for &n in &SIZES {
        for segs in [1usize, 2, n / 3 + 1, n + 5] {
            let offsets = random_offsets(&mut rng, n, segs);
            let xs = random_vec::<u32>(&mut rng, n, Kind::Add);
            for exclusive in [false, true] {
                let mut want = xs.clone();
                if exclusive {
                    reference::exclusive_segments(&mut want, &offsets, Add)
                } else {
                    reference::inclusive_segments(&mut want, &offsets, Add)
                }
                let mut got = xs.clone();
                gpu::scan_segments(&gpu, &mut got, &offsets, Add, exclusive).unwrap();
                assert_eq!(got, want, "n={n} segs={segs} excl={exclusive}");
            }
        }
    }
    // One huge segment and many empty ones.
    let n = (1 << 20) + 7;
    let xs = random_vec::<i64>(&mut rng, n, Kind::Add);
    for offsets in [vec![0, n], vec![0, 0, 0, n, n]] {
        let mut want = xs.clone();
        reference::inclusive_segments(&mut want, &offsets, Add);
        let mut got = xs.clone();
        gpu::scan_segments(&gpu, &mut got, &offsets, Add, false).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn gpu_compaction_and_partition() {
    let Some(gpu) = gpu_or_skip("gpu_compaction_and_partition") else { return };
    let mut rng = rng("gpu_compaction_and_partition");
    for &n in &SIZES {
        let xs = random_vec::<f64>(&mut rng, n, Kind::MinMax);
        let keep: Vec<bool> = (0..n).map(|_| rng.random::<bool>()).collect();
        let kept: Vec<f64> = xs.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect();
        let rest: Vec<f64> = xs.iter().zip(&keep).filter(|(_, k)| !**k).map(|(x, _)| *x).collect();
        assert_eq!(gpu::compact(&gpu, &xs, &keep).unwrap(), kept);
        let (all, k) = gpu::partition(&gpu, &xs, &keep).unwrap();
        assert_eq!(k, kept.len());
        assert_eq!(all, [kept, rest].concat());
    }
}

#[test]
fn gpu_user_operator_by_nvrtc() {
    let Some(gpu) = gpu_or_skip("gpu_user_operator_by_nvrtc") else { return };
    let mut rng = rng("gpu_user_operator_by_nvrtc");
    // Not commutative: "a then b" keeps b's high half.
    let op = UserOp::new("(b & 0xffff0000ull) | ((a + b) & 0xffffull)", "0ull");
    #[derive(Clone, Copy)]
    struct Cpu;
    impl prefix_ops::scan::Monoid<u64> for Cpu {
        fn identity(&self) -> u64 {
            0
        }
        fn combine(&self, a: u64, b: u64) -> u64 {
            (b & 0xffff0000) | (a.wrapping_add(b) & 0xffff)
        }
    }
    for &n in &SIZES {
        let xs: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & 0xffff_ffff).collect();
        let mut want = xs.clone();
        reference::inclusive(&mut want, Cpu);
        let mut got = xs.clone();
        gpu::user_inclusive(&gpu, &mut got, &op).unwrap();
        assert_eq!(got, want, "n={n}");
    }
    let bad = UserOp::new("a +* b", "0");
    assert!(matches!(gpu::user_inclusive(&gpu, &mut [1u32, 2], &bad), Err(prefix_ops::Error::Gpu(_))));
}

#[test]
fn gpu_bad_input_is_an_error() {
    let Some(gpu) = gpu_or_skip("gpu_bad_input_is_an_error") else { return };
    let mut xs = vec![1.0f32; 10];
    assert!(gpu::inclusive_rows(&gpu, &mut xs, 3, Add).is_err());
    assert!(gpu::scan_segments(&gpu, &mut xs, &[0, 5, 4, 10], Add, false).is_err());
    let src = gpu.upload(&xs).unwrap();
    let mut short = gpu.zeros::<f32>(9).unwrap();
    assert!(
        gpu::scan_into_device(&gpu, &src, &mut short, Layout::Array, Add, false, &ScanOptions::default())
            .is_err()
    );
    let mut e: Vec<f32> = vec![];
    gpu::inclusive(&gpu, &mut e, Add).unwrap();
}
